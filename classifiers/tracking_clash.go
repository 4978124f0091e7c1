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
	if d == nil || len(d.Path) != 3 || d.Path[0] != "metadata" {
		return Verdict{}, false
	}
	s := c.Settings
	method := fmt.Sprintf("application.resourceTrackingMethod is %s", s.TrackingMethod)
	if !s.FromConfigMap {
		method = "no argocd-cm was collected, so Argo CD's default annotation tracking is assumed"
	}
	var ev []string
	switch {
	case d.Path[1] == "labels" && d.Path[2] == s.InstanceLabelKey && s.LabelTracking():
		ev = append(ev, fmt.Sprintf("%s, so Argo CD sets label %s=%s on every resource of this application", method, s.InstanceLabelKey, c.show(d.Git)))
		if d.InLive {
			ev = append(ev, fmt.Sprintf("the live object carries %s=%s instead", s.InstanceLabelKey, c.show(d.Live)))
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
