package classifiers

import (
	"fmt"
	"strings"

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
	hpas := c.hpasFor(d.Resource)
	if len(hpas) == 0 {
		return Verdict{}, false
	}
	// The grant rests on the autoscaler's provenance: one of an
	// application's desired state, targeting the workload, whose range
	// holds the live count. The first such is named; without one, the
	// first that targets the workload.
	hpa, proof, refused := hpas[0], hpaProof{}, ""
	for i, h := range hpas {
		p, why := c.hpaProvenance(h, d)
		if why == "" {
			hpa, proof, refused = h, p, ""
			break
		}
		if i == 0 {
			refused = why
		}
	}
	ref := drift.RefOf(hpa)
	spec := drift.Map(hpa, "spec")
	// An autoscaler not yet evaluated (no status, as before its first
	// sync) has no current count to show.
	currently := ""
	if cur := drift.Lookup(hpa, "status", "currentReplicas"); cur != nil {
		currently = ", currently " + drift.Brief(cur, 10)
	}
	hpaEv := drift.Evidence{Kind: drift.EvidenceHPA, Object: &ref,
		Text: fmt.Sprintf("HorizontalPodAutoscaler %s/%s targets this %s (minReplicas %s, maxReplicas %s%s)",
			ref.Namespace, ref.Name, d.Resource.Kind, drift.Brief(orDefault(spec["minReplicas"], int64(1)), 10),
			drift.Brief(spec["maxReplicas"], 10), currently)}
	if refused == "" {
		hpaEv.Detail = proof.text
	}
	ev := []drift.Evidence{hpaEv}
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
	if refused != "" {
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceHPA, Object: &ref, Text: refused})
		if len(manual) > 0 {
			ev = append(ev, drift.Evidence{Kind: drift.EvidenceManager, Manager: manual[len(manual)-1].Manager,
				Text: "spec.replicas was last written by hand (" + ownersText(manual) + ")"})
		}
		return Verdict{Evidence: ev, Fix: drift.FixNone,
			Reason: "no autoscaler of the application's desired state proves it set the replica count (" + refused + "): a person decides"}, true
	}
	if len(manual) > 0 {
		ev = append(ev, drift.Say(drift.EvidenceManager, "spec.replicas was last written by hand ("+ownersText(manual)+"); the HPA takes it back on its next evaluation"))
	}
	ev = append(ev, drift.Evidence{Kind: drift.EvidenceOwner, Object: &ref, Detail: proof.text, Text: "the autoscaler is the application's own: " + proof.text})
	ev = append(ev, drift.Say(drift.EvidenceConsequence, "every sync resets the replica count the HPA chose until Git stops declaring it"))
	grant := fmt.Sprintf("HorizontalPodAutoscaler %s/%s scales this %s: the HPA controller owns spec.replicas of its scale target (proof: %s)", ref.Namespace, ref.Name, d.Resource.Kind, proof.text)
	if h, ok := drift.HandOverAt(drift.GrantHPA, d.Resource, d.Path); ok {
		grant += fmt.Sprintf("; the allow-list of hand-overs lets %s keep %s (%s)", h.Writer, h.Pattern(), h.Source)
	}
	return Verdict{Evidence: ev, Fix: drift.FixRemoveField, Grant: grant}, true
}

// hpasFor returns the HorizontalPodAutoscalers whose scaleTargetRef is the resource.
func (in *Input) hpasFor(ref drift.Ref) []drift.Object {
	var out []drift.Object
	for _, h := range in.hpas {
		if drift.Str(h, "metadata", "namespace") != ref.Namespace {
			continue
		}
		if !targets(drift.Map(h, "spec", "scaleTargetRef"), ref, "") {
			continue
		}
		out = append(out, h)
	}
	return out
}

// targets reports whether a scaleTargetRef names the workload; kind is the
// kind an unset one means ("" = it must be set).
func targets(t map[string]any, ref drift.Ref, defKind string) bool {
	kind := drift.Str(t, "kind")
	if kind == "" {
		kind = defKind
	}
	if t == nil || kind != ref.Kind || drift.Str(t, "name") != ref.Name {
		return false
	}
	if av := drift.Str(t, "apiVersion"); av != "" {
		if g, _ := drift.SplitAPIVersion(av); g != ref.Group {
			return false
		}
	}
	return true
}

// hpaProof is what shows an autoscaler set a workload's replica count.
type hpaProof struct {
	text string // the provenance and range, as the grant and evidence say it
}

// maxOwnerChain bounds the controller ownerReferences followed from an
// autoscaler to the object of Git that made it (KEDA's HTTPScaledObject
// makes a ScaledObject, which makes the HPA).
const maxOwnerChain = 3

// hpaProvenance decides whether an autoscaler may be granted the workload's
// replica count: it is part of the application's desired state (Git
// declares it, or it is made by a controller whose object Git declares and
// that object targets the workload: ownerReferences with controller: true
// and the owner's uid, followed through collected objects), and the live
// count lies within the range it scales in. An autoscaler only in the
// cluster, which anyone who may write to the namespace can create, grants
// nothing. why says what is missing; "" when proven.
func (in *Input) hpaProvenance(hpa drift.Object, d *drift.Difference) (hpaProof, string) {
	ref := drift.RefOf(hpa)
	name := fmt.Sprintf("HorizontalPodAutoscaler %s/%s", ref.Namespace, ref.Name)
	lo, hi, via := int64(1), int64(-1), ""
	if git, ok := in.desired[ref]; ok {
		lo, hi = rangeOf(git, 1)
		via = name + " is in Git"
	} else {
		cur := hpa
		for i := 0; ; i++ {
			if i == maxOwnerChain {
				return hpaProof{}, fmt.Sprintf("%s is not in Git and no object of Git made it within %d controller owners", name, maxOwnerChain)
			}
			oref, uid, ok := controllerOf(cur)
			if !ok {
				return hpaProof{}, fmt.Sprintf("%s is only in the cluster: Git does not declare it and no controller whose object Git declares made it (anyone who may write to the namespace can create one)", name)
			}
			owner := in.scalers[oref]
			if owner == nil {
				return hpaProof{}, fmt.Sprintf("%s names %s as its controller, which was not collected or names no scale target", name, oref)
			}
			if got := drift.Str(owner, "metadata", "uid"); uid == "" || got != uid {
				return hpaProof{}, fmt.Sprintf("%s names %s as its controller with uid %q, not that object's uid %q: the ownerReference is not the controller's", name, oref, uid, got)
			}
			git, declared := in.desired[oref]
			if !declared {
				cur = owner
				continue
			}
			if !targets(drift.Map(git, "spec", "scaleTargetRef"), d.Resource, "Deployment") {
				return hpaProof{}, fmt.Sprintf("%s, which Git declares and which made %s, does not target this %s", oref, name, d.Resource.Kind)
			}
			_, hpaHi := rangeOf(hpa, 1)
			floor := int64(-1)
			if strings.HasSuffix(oref.Group, "keda.sh") {
				floor = 0 // KEDA scales to zero itself; minReplicaCount defaults to 0
			}
			lo, hi = rangeOf(git, floor)
			if lo < 0 {
				lo, _ = rangeOf(hpa, 1)
			}
			if hi < 0 {
				hi = hpaHi
			}
			via = fmt.Sprintf("%s is made by %s (controller ownerReference, uid matching), which Git declares and which targets this %s", name, oref, d.Resource.Kind)
			break
		}
	}
	if !targets(drift.Map(hpa, "spec", "scaleTargetRef"), d.Resource, "") {
		return hpaProof{}, name + " does not target this " + d.Resource.Kind
	}
	n, ok := drift.Number(d.Live)
	if !d.InLive || !ok {
		return hpaProof{}, fmt.Sprintf("the live object has no replica count to compare with the range of %s", name)
	}
	if hi < 0 || n < float64(lo) || n > float64(hi) {
		return hpaProof{}, fmt.Sprintf("the live replicas %s lie outside [%d, %s], the range %s scales in: it did not set them", drift.Brief(d.Live, 10), lo, rangeEnd(hi), name)
	}
	return hpaProof{text: fmt.Sprintf("%s; the live replicas %s lie within its range [%d, %d]", via, drift.Brief(d.Live, 10), lo, hi)}, ""
}

func rangeEnd(hi int64) string {
	if hi < 0 {
		return "unset"
	}
	return fmt.Sprint(hi)
}

// rangeOf reads the range an autoscaler's object declares: an HPA's
// minReplicas and maxReplicas, a KEDA ScaledObject's minReplicaCount and
// maxReplicaCount, an HTTPScaledObject's replicas.min and replicas.max.
// An unset minimum is floor; an unset maximum is -1.
func rangeOf(o drift.Object, floor int64) (lo, hi int64) {
	lo, hi = floor, -1
	for _, p := range [][]string{{"spec", "minReplicas"}, {"spec", "minReplicaCount"}, {"spec", "replicas", "min"}} {
		if v, ok := drift.Number(drift.Lookup(o, p...)); ok {
			lo = int64(v)
		}
	}
	for _, p := range [][]string{{"spec", "maxReplicas"}, {"spec", "maxReplicaCount"}, {"spec", "replicas", "max"}} {
		if v, ok := drift.Number(drift.Lookup(o, p...)); ok {
			hi = int64(v)
		}
	}
	return lo, hi
}

// controllerOf returns an object's controller ownerReference: the owner's
// reference (in the object's namespace) and uid.
func controllerOf(o drift.Object) (drift.Ref, string, bool) {
	for _, item := range drift.List(o, "metadata", "ownerReferences") {
		r := drift.Map(item)
		if c, _ := r["controller"].(bool); !c {
			continue
		}
		g, _ := drift.SplitAPIVersion(drift.Str(r, "apiVersion"))
		return drift.Ref{Group: g, Kind: drift.Str(r, "kind"), Namespace: drift.Str(o, "metadata", "namespace"), Name: drift.Str(r, "name")}, drift.Str(r, "uid"), true
	}
	return drift.Ref{}, "", false
}

func orDefault(v, def any) any {
	if v == nil {
		return def
	}
	return v
}
