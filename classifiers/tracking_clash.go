package classifiers

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// TrackingClash finds Argo CD's tracking label or annotation written or claimed
// by another tool or application.
var TrackingClash = Classifier{
	Name:     drift.CauseTrackingClash,
	Doc:      "Argo CD's tracking label or annotation is written or claimed by another tool or application",
	Classify: classifyTrackingClash,
}

const trackingAnnotation = "argocd.argoproj.io/tracking-id"

func classifyTrackingClash(c *Case) (Verdict, bool) {
	d := c.Diff
	if d != nil && len(d.Path) == 0 && !d.InGit && d.InLive {
		return c.extraObject()
	}
	if v, ok := c.claimedElsewhere(); ok {
		return v, true
	}
	if d == nil || len(d.Path) != 3 || d.Path[0] != "metadata" {
		return Verdict{}, false
	}
	s := c.Settings
	method := fmt.Sprintf("application.resourceTrackingMethod is %s", s.TrackingMethod)
	switch {
	case !s.TrackingSet && s.TrackingSeen != "":
		method = fmt.Sprintf("argocd-cm names no tracking method, and the desired state Argo CD compares carries its %s tracking metadata, so tracking is by %s (label tracking is the default before Argo CD 3.0)", s.TrackingSeen, s.TrackingSeen)
	case !s.FromConfigMap:
		method = "no argocd-cm was collected, so Argo CD's default annotation tracking is assumed"
	}
	var ev []string
	switch {
	case d.Path[1] == "labels" && d.Path[2] == s.InstanceLabelKey && s.LabelTracking():
		ev = append(ev, fmt.Sprintf("%s, so Argo CD sets label %s=%s on every resource of this application", method, s.InstanceLabelKey, c.show(d.Git)))
		if d.InLive {
			ev = append(ev, fmt.Sprintf("the live object carries %s=%s instead", s.InstanceLabelKey, c.showLive()))
		}
		if o := d.NonArgoOwners(); len(o) > 0 {
			ev = append(ev, fmt.Sprintf("%s writes that label back (%s), so every sync and the next write fight over it", o[0].Manager, ownersText(o)))
		}
		if rel := drift.Annotations(c.Resource().Live)["meta.helm.sh/release-name"]; rel != "" {
			ev = append(ev, fmt.Sprintf("the object also belongs to Helm release %s (meta.helm.sh/release-name)", rel))
		}
		ev = append(ev, "the label is the standard instance label charts and tools set themselves; annotation tracking (or application.instanceLabelKey: argocd.argoproj.io/instance) leaves it to them")
	case d.Path[1] == "annotations" && d.Path[2] == trackingAnnotation && d.InGit && d.InLive:
		want, _ := d.Git.(string)
		got, _ := d.Live.(string)
		wantApp, _, _ := strings.Cut(want, ":")
		gotApp, _, _ := strings.Cut(got, ":")
		if wantApp == gotApp {
			return Verdict{}, false
		}
		ev = append(ev, fmt.Sprintf("%s; the tracking annotation says the object belongs to %q, not to %q", method, gotApp, wantApp))
		ev = append(ev, "two Applications render the same object and take it from each other on every sync")
		if o := d.NonArgoOwners(); len(o) > 0 {
			ev = append(ev, "the annotation is also written by "+ownersText(o))
		}
		return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: "two applications claim one object: remove it from one of them"}, true
	default:
		return Verdict{}, false
	}
	return Verdict{Evidence: ev, Fix: drift.FixTrackingMethod}, true
}

// managedByLabel is the namespace label that tells which Argo CD instance
// manages a namespace (namespace-scoped installations set it).
const managedByLabel = "argocd.argoproj.io/managed-by"

// extraObject explains a live object Git does not declare that Argo CD counts
// as the application's: whoever wrote the tracking label or annotation decides
// the cause. A tool or controller that copied Argo CD's label onto objects it
// creates, or another Argo CD instance writing the same tracking id, is a
// tracking clash; Argo CD itself having written it means the object left Git
// and waits to be pruned (left to unknown); a person is a manual change.
func (c *Case) extraObject() (Verdict, bool) {
	d := c.Diff
	live := c.Resource().Live
	var argo, other []drift.Owner
	for _, o := range d.TrackingOwners {
		switch {
		case drift.ArgoCDManagers[o.Manager]:
			argo = append(argo, o)
		case !c.isPerson(o.Manager):
			other = append(other, o)
		}
	}
	s := c.Settings
	var ev []string
	if len(other) > 0 {
		what := "tracking annotation " + trackingAnnotation
		if _, ok := drift.Labels(live)[s.InstanceLabelKey]; ok && s.LabelTracking() {
			what = "label " + s.InstanceLabelKey + "=" + drift.Labels(live)[s.InstanceLabelKey]
		}
		ev = append(ev, fmt.Sprintf("%s is not in Git; Argo CD counts it as this application's because of its %s, which %s wrote, not Argo CD", d.Resource, what, ownersText(other)))
		for _, ref := range drift.List(live, "metadata", "ownerReferences") {
			if drift.Lookup(ref, "controller") == true {
				ev = append(ev, fmt.Sprintf("it is owned by %s %s (ownerReferences): the controller created it and copied the label", drift.Str(ref, "kind"), drift.Str(ref, "name")))
			}
		}
		ev = append(ev, "pruning it would delete an object another system keeps; with annotation tracking a copied tracking id that names another object is not counted")
		return Verdict{Evidence: ev, Fix: drift.FixTrackingMethod}, true
	}
	if len(argo) == 0 {
		return Verdict{}, false
	}
	ns := c.namespaces[d.Resource.Namespace]
	by := drift.Labels(ns)[managedByLabel]
	mine := drift.Str(c.Snapshot.Application, "status", "controllerNamespace")
	if mine == "" {
		mine = drift.Str(c.Snapshot.Application, "metadata", "namespace")
	}
	if by == "" || by == mine {
		return Verdict{}, false
	}
	ev = append(ev,
		fmt.Sprintf("%s is not in Git; its tracking metadata was written by Argo CD (%s)", d.Resource, ownersText(argo)),
		fmt.Sprintf("Namespace %s is labelled %s=%s: another Argo CD instance manages it, and this application's controller runs in %s", d.Resource.Namespace, managedByLabel, by, mine),
		"two instances writing the same tracking id claim each other's objects; give each its own installationID in argocd-cm")
	return Verdict{Evidence: ev, Fix: drift.FixTrackingMethod}, true
}

// claimedElsewhere explains a difference on an object whose live tracking
// annotation names another application: when only Argo CD wrote the value,
// it is the other application's render, applied by its sync, and the two
// applications take the object from each other.
func (c *Case) claimedElsewhere() (Verdict, bool) {
	d := c.Diff
	res := c.Resource()
	if d == nil || res.Target == nil || res.Live == nil || len(d.NonArgoOwners()) > 0 ||
		d.Path.String() == "/metadata/annotations/"+drift.EscapeToken(trackingAnnotation) {
		return Verdict{}, false
	}
	want, _, _ := strings.Cut(drift.Annotations(res.Target)[trackingAnnotation], ":")
	got, _, _ := strings.Cut(drift.Annotations(res.Live)[trackingAnnotation], ":")
	if want == "" || got == "" || want == got {
		return Verdict{}, false
	}
	ev := []string{
		fmt.Sprintf("the live object's tracking annotation says it belongs to Application %q, not to %q: both render it", got, want),
		fmt.Sprintf("%s was written by %s, Argo CD's own sync: it is %q's rendering of this object", d.Path, ownersText(d.Owners), got),
	}
	if d.InGit && d.InLive {
		ev = append(ev, fmt.Sprintf("Git declares %s here, the other application %s", c.show(d.Git), c.showLive()))
	}
	return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: "two applications claim one object: render it from one of them only"}, true
}
