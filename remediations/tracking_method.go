package remediations

import (
	"fmt"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// TrackingMethod switches Argo CD to annotation tracking, a platform-repo
// change to argocd-cm, so Argo CD stops claiming the label other tools set.
var TrackingMethod = Remedy{
	Kind:  drift.FixTrackingMethod,
	Doc:   "`application.resourceTrackingMethod: annotation` in `argocd-cm`",
	Title: "Switch Argo CD to annotation tracking",
	Group: perApplication,
	Locate: func(_ *drift.Snapshot, repo Repo, _ drift.Ref) string {
		return manifest(repo, "", drift.Ref{Kind: "ConfigMap", Name: "argocd-cm"})
	},
	Applies: func(_ *Context, f drift.Finding) string {
		if f.Cause != drift.CauseTrackingClash {
			return "the tracking method ends only a tracking clash"
		}
		return ""
	},
	Plan: planTrackingMethod,
}

const trackingKey = "application.resourceTrackingMethod"

func planTrackingMethod(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
	cm := drift.Ref{Kind: "ConfigMap", Name: "argocd-cm"}
	p := Plan{Resource: cm}
	p.Rationale = Rationale{
		Why:  "one setting ends the clash for every application instead of one ignore rule per resource; Argo CD then tracks resources by its own argocd.argoproj.io/tracking-id annotation and leaves the instance label to the charts and tools that set it",
		Risk: "applies to every application of this Argo CD; Argo CD adds its tracking annotation on the next sync of each application",
	}
	changed := c.withAnnotationTracking(group)
	p.assumes = "each chart renders the instance label with the value the other writer keeps in the live object, which a snapshot cannot re-render"
	loc, err := locateDoc(c.Repo, "", cm)
	if err != nil {
		p.Instructions = fmt.Sprintf("argocd-cm is not in this repository (%v); in the platform repository that holds it, set data.%s: annotation", err, trackingKey)
		return p, changed
	}
	if !p.addEdit(applyEdits(c.Repo, loc.file, func(b []byte) ([]byte, error) {
		return yamledit.SetValue(b, loc.doc, drift.Pointer{"data", trackingKey}, "annotation")
	})) {
		return p, nil
	}
	p.Rationale.Undo = undoText(loc.file)
	return p, changed
}

// withAnnotationTracking returns the snapshot as Argo CD would compare it with
// annotation tracking: argocd-cm switched, and the instance label in each
// clashing target as the live object has it instead of Argo CD's value.
func (c *Context) withAnnotationTracking(group []drift.Finding) *drift.Snapshot {
	out := *c.Snapshot
	out.Cluster = nil
	found := false
	for _, o := range c.Snapshot.Cluster {
		if drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm" {
			o = drift.DeepCopy(o).(map[string]any)
			data, _ := o["data"].(map[string]any)
			if data == nil {
				data = map[string]any{}
				o["data"] = data
			}
			data[trackingKey] = "annotation"
			found = true
		}
		out.Cluster = append(out.Cluster, o)
	}
	if !found {
		out.Cluster = append(out.Cluster, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "argocd-cm"}, "data": map[string]any{trackingKey: "annotation"}})
	}
	res := &out
	for _, f := range group {
		i := resourceIndex(res, f.Resource)
		if i < 0 || !f.InGit || !f.InLive {
			continue
		}
		target := drift.DeepCopy(res.Resources[i].Target)
		target, _ = setAt(target, f.GitPath, f.Live)
		res = withTarget(res, i, target.(map[string]any))
	}
	return res
}
