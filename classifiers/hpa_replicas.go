package classifiers

import (
	"fmt"

	"github.com/driftfix/driftfix/bot/drift"
)

// HPAReplicas finds spec.replicas of a workload that a HorizontalPodAutoscaler scales.
var HPAReplicas = Classifier{
	Name:           drift.CauseHPAReplicas,
	Doc:            "spec.replicas of a workload that a HorizontalPodAutoscaler scales",
	Classify:       classifyHPAReplicas,
	Predicted:      true,
	MayStayIgnored: true,
	Suggest:        []drift.FixKind{drift.FixRemoveField},
	Risk:           "the workload keeps the replica count the HorizontalPodAutoscaler set; a new install starts at 1 until the HPA scales it",
}

func classifyHPAReplicas(c *Case) (Verdict, bool) {
	d := c.Diff
	if d == nil || d.Path.String() != "/spec/replicas" {
		return Verdict{}, false
	}
	hpa := c.hpaFor(d.Resource)
	if hpa == nil {
		return Verdict{}, false
	}
	ref := drift.RefOf(hpa)
	spec := drift.Map(hpa, "spec")
	// An autoscaler not yet evaluated (no status, as before its first
	// sync) has no current count to show.
	currently := ""
	if cur := drift.Lookup(hpa, "status", "currentReplicas"); cur != nil {
		currently = ", currently " + drift.Brief(cur, 10)
	}
	ev := []drift.Evidence{{Kind: drift.EvidenceHPA, Object: &ref,
		Text: fmt.Sprintf("HorizontalPodAutoscaler %s/%s targets this %s (minReplicas %s, maxReplicas %s%s)",
			ref.Namespace, ref.Name, d.Resource.Kind, drift.Brief(orDefault(spec["minReplicas"], int64(1)), 10),
			drift.Brief(spec["maxReplicas"], 10), currently)}}
	if d.InGit {
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares replicas: %s, the live object has %s", c.show(d.Git), c.showLive())))
	}
	var scalers, manual []drift.Owner
	for _, o := range d.NonArgoOwners() {
		if c.isPerson(o.Manager) {
			manual = append(manual, o)
		} else {
			scalers = append(scalers, o)
		}
	}
	if len(scalers) > 0 {
		ev = append(ev, drift.Say(drift.EvidenceManager, "spec.replicas is owned by "+ownersText(scalers)))
	}
	if len(manual) > 0 {
		ev = append(ev, drift.Say(drift.EvidenceManager, "spec.replicas was last written by hand ("+ownersText(manual)+"); the HPA takes it back on its next evaluation"))
	}
	ev = append(ev, drift.Say(drift.EvidenceConsequence, "every sync resets the replica count the HPA chose until Git stops declaring it"))
	grant := fmt.Sprintf("HorizontalPodAutoscaler %s/%s scales this %s: the HPA controller owns spec.replicas of its scale target", ref.Namespace, ref.Name, d.Resource.Kind)
	return Verdict{Evidence: ev, Fix: drift.FixRemoveField, Grant: grant}, true
}

// hpaFor returns the HorizontalPodAutoscaler whose scaleTargetRef is the resource.
func (in *Input) hpaFor(ref drift.Ref) drift.Object {
	for _, h := range in.hpas {
		if drift.Str(h, "metadata", "namespace") != ref.Namespace {
			continue
		}
		t := drift.Map(h, "spec", "scaleTargetRef")
		if drift.Str(t, "kind") != ref.Kind || drift.Str(t, "name") != ref.Name {
			continue
		}
		if av := drift.Str(t, "apiVersion"); av != "" {
			if g, _ := drift.SplitAPIVersion(av); g != ref.Group {
				continue
			}
		}
		return h
	}
	return nil
}

func orDefault(v, def any) any {
	if v == nil {
		return def
	}
	return v
}
