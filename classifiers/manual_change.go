package classifiers

import (
	"fmt"

	"github.com/driftfix/driftfix/bot/drift"
)

// ManualChange finds fields a person or an ad-hoc client changed: real drift,
// reported and never hidden.
var ManualChange = Classifier{
	Name:     drift.CauseManualChange,
	Doc:      "a person or ad-hoc client changed the live object: real drift, never hidden",
	Classify: classifyManualChange,
}

func classifyManualChange(c *Case) (Verdict, bool) {
	d := c.Diff
	if d == nil {
		return Verdict{}, false
	}
	if cause, ev, ok := c.missing(); ok { // deleted: by a person only where nothing else explains it (graph.go)
		if cause != drift.CauseManualChange {
			return Verdict{}, false
		}
		return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: manualReasons[c.revertedWhen()]}, true
	}
	if v, ok := c.auditManualChange(); ok {
		return v, true // the audit log names a person (audit.go)
	}
	var manual []drift.Owner
	for _, o := range d.NonArgoOwners() {
		if c.writesAsPerson(o.Manager) {
			manual = append(manual, o)
		}
	}
	if len(manual) == 0 {
		return Verdict{}, false
	}
	o := manual[len(manual)-1]
	how := ""
	if w := drift.CatalogWriter(o.Manager); w != nil {
		how = w.How // the catalog's how (bot/drift/writers.yaml)
	}
	switch {
	case how != "":
	case o.Manager == "kubectl" && o.Subresource == "scale":
		how = "kubectl scale"
	case o.Manager == "kubectl" && o.Operation == "Apply":
		how = "kubectl apply --server-side"
	default:
		how = o.Manager
	}
	ev := []drift.Evidence{{Kind: drift.EvidenceManager, Manager: o.Manager,
		Text: fmt.Sprintf("%s is owned by %s: changed by hand with %s", d.Path, ownersText(manual), how)}}
	switch {
	case d.InGit && d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s, the live object has %s", c.show(d.Git), c.showLive())))
	case d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git does not declare it; the live object has %s", c.showLive())))
	}
	if d.Path.String() == "/spec/replicas" {
		ev = append(ev, drift.Say(drift.EvidenceHPA, fmt.Sprintf("no HorizontalPodAutoscaler targets %s", d.Resource)))
	}
	return Verdict{
		Evidence: ev,
		Fix:      drift.FixNone,
		Reason:   manualReasons[c.revertedWhen()],
	}, true
}

// manualReasons are the reasons of a change made by hand, by revertedWhen's
// answer; built once, as a report keeps its reasons for the whole cycle.
var manualReasons = func() map[string]string {
	out := map[string]string{}
	for _, when := range []string{revertsNever, revertsSelfHeal, revertsOnSync} {
		out[when] = "real drift: " + when + "; sync to revert it, or commit the change to Git (policy manualChanges: adopt proposes that as a draft pull request); driftfix never ignores it"
	}
	return out
}()

// What revertedWhen answers.
const (
	revertsNever    = "it stays until someone syncs the application (no automated sync)"
	revertsSelfHeal = "Argo CD's self-heal reverts it on its next sync"
	revertsOnSync   = "automated sync without selfHeal leaves it until Git changes or someone syncs"
)

// revertedWhen says whether Argo CD reverts a change made by hand by itself,
// from the Application's sync policy.
func (c *Case) revertedWhen() string {
	auto, ok := drift.Map(c.Snapshot.Application, "spec", "syncPolicy")["automated"].(map[string]any)
	switch {
	case !ok || auto["enabled"] == false:
		return revertsNever
	case auto["selfHeal"] == true:
		return revertsSelfHeal
	}
	return revertsOnSync
}
