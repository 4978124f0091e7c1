package classifiers

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// TrackingClash finds Argo CD's tracking label or annotation written or claimed
// by another tool or application.
var TrackingClash = Classifier{
	Name:      drift.CauseTrackingClash,
	Doc:       "Argo CD's tracking label or annotation is written or claimed by another tool or application",
	Classify:  classifyTrackingClash,
	Predicted: true,
}

const trackingAnnotation = "argocd.argoproj.io/tracking-id"

func classifyTrackingClash(c *Case) (Verdict, bool) {
	d := c.Diff
	if d != nil && len(d.Path) == 0 && !d.InGit && d.InLive {
		return c.extraObject()
	}
	if v, ok := c.definedTwice(); ok {
		return v, true
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
	var ev []drift.Evidence
	switch {
	case d.Path[1] == "labels" && d.Path[2] == s.InstanceLabelKey && s.LabelTracking():
		ev = append(ev, drift.Say(drift.EvidenceTracking, fmt.Sprintf("%s, so Argo CD sets label %s=%s on every resource of this application", method, s.InstanceLabelKey, c.show(d.Git))))
		if d.InLive {
			ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("the live object carries %s=%s instead", s.InstanceLabelKey, c.showLive())))
		}
		if o := d.NonArgoOwners(); len(o) > 0 {
			ev = append(ev, drift.Say(drift.EvidenceManager, fmt.Sprintf("%s writes that label back (%s), so every sync and the next write fight over it", o[0].Manager, ownersText(o))))
		}
		if rel := drift.Annotations(c.Resource().Live)["meta.helm.sh/release-name"]; rel != "" {
			ev = append(ev, drift.Say(drift.EvidenceOwner, fmt.Sprintf("the object also belongs to Helm release %s (meta.helm.sh/release-name)", rel)))
		}
		ev = append(ev, drift.Say(drift.EvidenceConsequence, "the label is the standard instance label charts and tools set themselves; annotation tracking (or application.instanceLabelKey: argocd.argoproj.io/instance) leaves it to them"))
	case d.Path[1] == "annotations" && d.Path[2] == trackingAnnotation && d.InGit && d.InLive:
		want, _ := d.Git.(string)
		got, _ := d.Live.(string)
		wantApp, _, _ := strings.Cut(want, ":")
		gotApp, _, _ := strings.Cut(got, ":")
		if wantApp == gotApp {
			return Verdict{}, false
		}
		ev = append(ev, drift.Say(drift.EvidenceTracking, fmt.Sprintf("%s; the tracking annotation says the object belongs to %q, not to %q", method, gotApp, wantApp)))
		ev = append(ev, drift.Say(drift.EvidenceConsequence, "two Applications render the same object and take it from each other on every sync"))
		if o := d.NonArgoOwners(); len(o) > 0 {
			ev = append(ev, drift.Say(drift.EvidenceManager, "the annotation is also written by "+ownersText(o)))
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
// creates is a tracking clash. So is an object another Application lists in
// its status.resources (Argo CD's own record, of this instance or another),
// one whose tracking id Argo CD wrote for another application, and one in a
// namespace another instance manages. Argo CD itself having written it with
// nothing of that kind means the object left Git and waits to be pruned (left
// to unknown, which says what was looked at); a person is a manual change.
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
	var ev []drift.Evidence
	if len(other) > 0 {
		what := "tracking annotation " + trackingAnnotation
		if _, ok := drift.Labels(live)[s.InstanceLabelKey]; ok && s.LabelTracking() {
			what = "label " + s.InstanceLabelKey + "=" + drift.Labels(live)[s.InstanceLabelKey]
		}
		ev = append(ev, drift.Say(drift.EvidenceTracking, fmt.Sprintf("%s is not in Git; Argo CD counts it as this application's because of its %s, which %s wrote, not Argo CD", d.Resource, what, ownersText(other))))
		for _, ref := range drift.List(live, "metadata", "ownerReferences") {
			if drift.Lookup(ref, "controller") == true {
				ev = append(ev, drift.Say(drift.EvidenceOwner, fmt.Sprintf("it is owned by %s %s (ownerReferences): the controller created it and copied the label", drift.Str(ref, "kind"), drift.Str(ref, "name"))))
			}
		}
		ev = append(ev, drift.Say(drift.EvidenceConsequence, "pruning it would delete an object another system keeps; with annotation tracking a copied tracking id that names another object is not counted"))
		return Verdict{Evidence: ev, Fix: drift.FixTrackingMethod}, true
	}
	if v, ok := c.listedElsewhere(); ok {
		return v, true
	}
	if len(argo) == 0 {
		return Verdict{}, false
	}
	if v, ok := c.trackedForAnother(argo); ok {
		return v, true
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
		drift.Say(drift.EvidenceTracking, fmt.Sprintf("%s is not in Git; its tracking metadata was written by Argo CD (%s)", d.Resource, ownersText(argo))),
		drift.Say(drift.EvidenceTracking, fmt.Sprintf("Namespace %s is labelled %s=%s: another Argo CD instance manages it, and this application's controller runs in %s", d.Resource.Namespace, managedByLabel, by, mine)),
		drift.Say(drift.EvidenceConsequence, "two instances writing the same tracking id claim each other's objects; give each its own installationID in argocd-cm"))
	return Verdict{Evidence: ev, Fix: drift.FixTrackingMethod}, true
}

// claimedElsewhere explains a difference on an object whose live tracking
// annotation names another application: when only Argo CD wrote the value,
// it is the other application's render, applied by its sync, and the two
// applications take the object from each other.
func (c *Case) claimedElsewhere() (Verdict, bool) {
	d := c.Diff
	if d == nil || d.Path.String() == "/metadata/annotations/"+drift.EscapeToken(trackingAnnotation) {
		return Verdict{}, false
	}
	res := c.Resource()
	if res.Target == nil || res.Live == nil {
		return Verdict{}, false
	}
	others := d.NonArgoOwners()
	for _, o := range others {
		if c.isPerson(o.Manager) {
			return Verdict{}, false // a person's change, whoever claims the object
		}
	}
	want, _, _ := strings.Cut(drift.Annotations(res.Target)[trackingAnnotation], ":")
	got, _, _ := strings.Cut(drift.Annotations(res.Live)[trackingAnnotation], ":")
	if want == "" || got == "" || want == got {
		if len(others) > 0 {
			return Verdict{}, false
		}
		return c.deployedElsewhere()
	}
	ev := []drift.Evidence{
		drift.Say(drift.EvidenceTracking, fmt.Sprintf("the live object's tracking annotation says it belongs to Application %q, not to %q: both render it", got, want)),
	}
	if len(others) == 0 {
		ev = append(ev, drift.Say(drift.EvidenceManager, fmt.Sprintf("%s was written by %s, Argo CD's own sync: it is %q's rendering of this object", d.Path, ownersText(d.Owners), got)))
	} else {
		ev = append(ev, drift.Say(drift.EvidenceManager, fmt.Sprintf("%s was written by %s on an object two applications claim: settle which application keeps it before placing that writer", d.Path, ownersText(d.Owners))))
	}
	if d.InGit && d.InLive {
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s here, the other application %s", c.show(d.Git), c.showLive())))
	}
	return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: "two applications claim one object: render it from one of them only"}, true
}

// deployedElsewhere explains a difference Argo CD's own sync wrote on an
// object this application declares when another Application lists the same
// object in its status.resources, not as an extra it would prune: both
// applications deploy it (a tracking metadata that names no instance lets two
// instances' applications of one name do so unseen), and the value is the
// other's rendering.
func (c *Case) deployedElsewhere() (Verdict, bool) {
	d := c.Diff
	if len(d.Owners) == 0 || len(d.Path) == 0 || !d.InLive {
		return Verdict{}, false
	}
	var deploying []listing
	for _, l := range c.listedBy(d.Resource) {
		if drift.Lookup(l.entry, "requiresPruning") != true {
			deploying = append(deploying, l)
		}
	}
	if len(deploying) == 0 {
		return Verdict{}, false
	}
	var ev []drift.Evidence
	for _, l := range deploying {
		name := drift.Str(l.app, "metadata", "namespace") + "/" + drift.Str(l.app, "metadata", "name")
		where := fmt.Sprintf("of the same Argo CD instance (in %s)", controlPlane(l.app))
		if cp := controlPlane(l.app); cp != controlPlane(c.Snapshot.Application) {
			where = fmt.Sprintf("of another Argo CD instance (in %s)", cp)
		}
		other := drift.RefOf(l.app)
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceTracking, Object: &other,
			Text: fmt.Sprintf("Application %s, %s, also lists %s in its status.resources, not as an extra to prune: Argo CD's own record that it deploys the object too", name, where, d.Resource)})
	}
	last := d.Owners[len(d.Owners)-1]
	wrote := fmt.Sprintf("%s was written by %s, Argo CD's own sync, with a value this application's Git does not declare: the other application's sync applied its rendering", d.Path, ownersText(d.Owners))
	if done := drift.Str(c.Snapshot.Application, "status", "operationState", "finishedAt"); done != "" && last.Time > done {
		wrote += fmt.Sprintf(" (at %s, after this application's last sync finished at %s)", last.Time, done)
	}
	ev = append(ev, drift.Say(drift.EvidenceTracking, wrote))
	if d.InGit {
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s here, the other application %s", c.show(d.Git), c.showLive())))
	}
	return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: "two applications deploy one object: render it from one of them only"}, true
}

// sameApp reports whether two Application objects are the same application
// (namespace and name).
func sameApp(a, b drift.Object) bool {
	return drift.Str(a, "metadata", "name") == drift.Str(b, "metadata", "name") &&
		drift.Str(a, "metadata", "namespace") == drift.Str(b, "metadata", "namespace")
}

// controlPlane returns the namespace of the Argo CD instance that manages an
// Application: status.controllerNamespace, else the Application's own.
func controlPlane(app drift.Object) string {
	if ns := drift.Str(app, "status", "controllerNamespace"); ns != "" {
		return ns
	}
	return drift.Str(app, "metadata", "namespace")
}

// instanceName is the application name Argo CD's tracking label and tracking
// id carry: the name of an Application in its instance's control-plane
// namespace, <namespace>_<name> for one in any other namespace.
func instanceName(app drift.Object) string {
	name, ns := drift.Str(app, "metadata", "name"), drift.Str(app, "metadata", "namespace")
	if ns == "" || ns == controlPlane(app) {
		return name
	}
	return ns + "_" + name
}

// inClusterServer is the address Argo CD gives the cluster it runs in.
const inClusterServer = "https://kubernetes.default.svc"

// destination returns the cluster an Application deploys to, as comparable
// text: its server URL, in-cluster for the cluster an instance runs in, or the
// cluster's name when only a name is given.
func destination(app drift.Object) string {
	server := strings.TrimSuffix(drift.Str(app, "spec", "destination", "server"), "/")
	name := drift.Str(app, "spec", "destination", "name")
	switch {
	case server != "":
		return server
	case name == "" || name == "in-cluster":
		return inClusterServer
	}
	return "name:" + name
}

// listing is another Application's status.resources entry for an object.
type listing struct {
	app   drift.Object
	entry any
}

// listedBy returns the other Applications that list ref in their
// status.resources and deploy to the same cluster as this one: another
// cluster's object of the same name is another object.
func (c *Case) listedBy(ref drift.Ref) []listing {
	var out []listing
	dest := destination(c.Snapshot.Application)
	for _, a := range c.apps {
		if destination(a) != dest {
			continue
		}
		for _, r := range drift.List(a, "status", "resources") {
			if (drift.Ref{Group: drift.Str(r, "group"), Kind: drift.Str(r, "kind"), Namespace: drift.Str(r, "namespace"), Name: drift.Str(r, "name")}) == ref {
				out = append(out, listing{app: a, entry: r})
				break
			}
		}
	}
	return out
}

// trackedBy says how this application's instance counts a live object as the
// application's: by the instance label, or by the tracking id.
func (c *Case) trackedBy(live drift.Object) string {
	s := c.Settings
	// With annotation+label the label is only informative: the tracking id
	// decides.
	if v, ok := drift.Labels(live)[s.InstanceLabelKey]; ok && s.TrackingMethod == "label" {
		return fmt.Sprintf("label %s=%s", s.InstanceLabelKey, v)
	}
	if id := drift.Annotations(live)[trackingAnnotation]; id != "" {
		return fmt.Sprintf("tracking id %s", id)
	}
	return "tracking metadata"
}

// listedElsewhere explains a live object Git does not declare that another
// Application lists in its status.resources: Argo CD's own record that the
// other application deploys or tracks it, whichever instance it belongs to.
// This application counts it too because both track it by the same
// application name (a label or tracking id carries no instance), so pruning
// it from here would delete what the other keeps.
func (c *Case) listedElsewhere() (Verdict, bool) {
	d := c.Diff
	ls := c.listedBy(d.Resource)
	if len(ls) == 0 {
		return Verdict{}, false
	}
	live := c.Resource().Live
	mine, mineCP := instanceName(c.Snapshot.Application), controlPlane(c.Snapshot.Application)
	var ev []drift.Evidence
	otherInstance := false
	for _, l := range ls {
		name := drift.Str(l.app, "metadata", "namespace") + "/" + drift.Str(l.app, "metadata", "name")
		how := "as one of its resources"
		if st := drift.Str(l.entry, "status"); st != "" {
			how = "as " + st
		}
		if drift.Lookup(l.entry, "requiresPruning") == true {
			how += ", requiring pruning there too"
		}
		other := drift.RefOf(l.app)
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceTracking, Object: &other,
			Text: fmt.Sprintf("%s is not in Git; Application %s lists it in its status.resources (%s): Argo CD's own record that that application tracks it", d.Resource, name, how)})
		if cp := controlPlane(l.app); cp != mineCP {
			otherInstance = true
			ev = append(ev, drift.Evidence{Kind: drift.EvidenceTracking, Object: &other,
				Text: fmt.Sprintf("Application %s belongs to the Argo CD instance in %s (status.controllerNamespace), this application to the one in %s: two instances track the same object", name, cp, mineCP)})
		} else {
			ev = append(ev, drift.Say(drift.EvidenceTracking, fmt.Sprintf("both applications belong to the Argo CD instance in %s", cp)))
		}
		if instanceName(l.app) == mine {
			ev = append(ev, drift.Say(drift.EvidenceTracking, fmt.Sprintf("this application counts it as its own by its %s: the name %q is both applications' name in their tracking metadata, which does not say which instance wrote it", c.trackedBy(live), mine)))
		}
	}
	leftover := true
	for _, l := range ls {
		leftover = leftover && drift.Lookup(l.entry, "requiresPruning") == true
	}
	if leftover {
		ev = append(ev, drift.Say(drift.EvidenceConsequence, "no application that lists it declares it in Git: it may be a leftover of either, but as long as they share tracking each can prune what the other deploys"))
	}
	switch {
	case leftover:
		ev = append(ev, drift.Say(drift.EvidenceConsequence, "give each its own tracking before pruning it"))
	case otherInstance:
		ev = append(ev, drift.Say(drift.EvidenceConsequence, "pruning it from here would delete an object the other application keeps; give each instance its own tracking (an installationID in argocd-cm with annotation tracking, or its own application.instanceLabelKey), or rename one application"))
	case c.Settings.LabelTracking():
		ev = append(ev, drift.Say(drift.EvidenceConsequence, "pruning it from here would delete an object the other application keeps; track by annotation (the tracking id names the application and the object), so a label alone no longer makes this application claim it"))
	default:
		ev = append(ev, drift.Say(drift.EvidenceConsequence, "pruning it from here would delete an object the other application keeps"))
		return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: "two applications of one instance claim one object: keep it in one of them only"}, true
	}
	return Verdict{Evidence: ev, Fix: drift.FixTrackingMethod}, true
}

// trackedForAnother explains a live object Git does not declare whose
// tracking id, written by Argo CD, names another application: that
// application's sync wrote it, and this one counts it only through a label.
func (c *Case) trackedForAnother(argo []drift.Owner) (Verdict, bool) {
	d := c.Diff
	live := c.Resource().Live
	id := drift.Annotations(live)[trackingAnnotation]
	named, _, found := strings.Cut(id, ":")
	mine := instanceName(c.Snapshot.Application)
	// Only label tracking counts an object whose tracking id names another
	// application; under the other methods the id decides, and such an
	// object would not be this application's.
	if !found || named == "" || named == mine || c.Settings.TrackingMethod != "label" {
		return Verdict{}, false
	}
	ev := []drift.Evidence{
		drift.Say(drift.EvidenceTracking, fmt.Sprintf("%s is not in Git; its tracking id %s, written by Argo CD (%s), names application %q, not this one (%q): that application's sync wrote it", d.Resource, id, ownersText(argo), named, mine)),
		drift.Say(drift.EvidenceTracking, fmt.Sprintf("this application counts it as its own by its %s", c.trackedBy(live))),
	}
	known := false
	for _, a := range c.apps {
		known = known || instanceName(a) == named
	}
	if !known {
		ev = append(ev, drift.Say(drift.EvidenceTracking, fmt.Sprintf("no Application tracked as %q is in the snapshot to confirm it (another Argo CD instance's, or one this account cannot list)", named)))
	}
	ev = append(ev, drift.Say(drift.EvidenceConsequence, "pruning it from here would delete an object the other application deploys; with annotation tracking a tracking id that names another application is not counted"))
	return Verdict{Evidence: ev, Fix: drift.FixTrackingMethod}, true
}

// leftoverEvidence says why a live object Git does not declare, that nothing
// shows another writer or application to track, is taken to wait for pruning,
// and what was looked at: whether another Application lists it.
func (c *Case) leftoverEvidence() string {
	d := c.Diff
	by := "its tracking metadata"
	if live := c.Resource().Live; live != nil {
		by = "its " + c.trackedBy(live)
	}
	if len(c.apps) == 0 {
		return fmt.Sprintf("%s is in the cluster but not in Git; Argo CD counts it as this application's by %s, so it waits to be pruned if this application deployed it: no other Application is in the snapshot (the collector adds those whose status.resources list it, where the cluster account can list Applications), so another Application or Argo CD instance tracking it by the same name is not ruled out", d.Resource, by)
	}
	return fmt.Sprintf("%s is in the cluster but not in Git; Argo CD counts it as this application's by %s, and none of the %d other Applications in the snapshot lists it in its status.resources: it waits to be pruned", d.Resource, by, len(c.apps))
}
