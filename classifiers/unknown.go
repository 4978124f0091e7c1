package classifiers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// Unknown claims every difference no other classifier explained, and says what
// was looked at.
var Unknown = Classifier{
	Name:     drift.CauseUnknown,
	Doc:      "none of the above could be established",
	Classify: classifyUnknown,
}

func classifyUnknown(c *Case) (Verdict, bool) {
	d := c.Diff
	if d == nil {
		return Verdict{}, false
	}
	var ev []drift.Evidence
	var unplaced []string
	switch {
	case d.Unexplained:
		ev = append(ev, drift.Say(drift.EvidenceSearched, fmt.Sprintf("Argo CD reports %s OutOfSync, but driftfix finds no difference: it compared %s", d.Resource, d.Compared)),
			drift.Say(drift.EvidenceSearched, "Argo CD's own diff (argocd app diff, or the normalized and predicted live states of managed-resources) shows what it sees; collect a snapshot with them to have it explained"))
		return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: "Argo CD sees a difference driftfix cannot reproduce; a person needs to look"}, true
	case len(d.Path) == 0 && !d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("%s is in Git but not in the cluster: the last sync did not create it, or something deleted it", d.Resource)))
	case len(d.Path) == 0 && !d.InGit:
		ev = append(ev, drift.Say(drift.EvidenceTracking, c.leftoverEvidence()))
	case d.InGit && d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s, the live object has %s", c.show(d.Git), c.showLive())))
	case d.InGit:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s, the live object has no %s", c.show(d.Git), d.Path)))
	default:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("the live object has %s, which Git does not declare", c.showLive())))
	}
	ev = append(ev, c.dryRunRefutes()...)
	var unattributed []drift.Owner
	for _, o := range d.NonArgoOwners() {
		if !c.isPerson(o.Manager) { // a status update writes the metadata it owns too
			unattributed = append(unattributed, o)
		}
	}
	if len(unattributed) > 0 && len(d.Path) > 0 {
		last := unattributed[len(unattributed)-1].Manager
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceManager, Manager: last,
			Text: fmt.Sprintf("%s wrote it, but nothing in the snapshot shows that manager to be a controller (it writes no status here, runs as no program of that name in a collected workload, is in neither the writer catalog nor the policy's writers): a script, a tool or a person may have, so it is never changed in Git", ownersText(unattributed))},
			drift.Evidence{Kind: drift.EvidenceManager, Manager: last, Text: hypotheses(last)})
		for _, o := range unattributed {
			if !slices.Contains(unplaced, o.Manager) {
				unplaced = append(unplaced, o.Manager)
			}
		}
	}
	looked := []string{"owners: " + ownersText(d.Owners)}
	if len(c.Snapshot.Renders) == 0 {
		looked = append(looked, "no further renders to compare")
	} else {
		// Only renders of the revision Argo CD compared say anything; one
		// that records another revision (or none known) is no evidence.
		compared, of := comparedRevision(c.Snapshot.Application), 0
		for _, r := range c.Snapshot.Renders {
			if rev, recorded := renderRevision(r); !recorded || (compared != "" && rev == compared) {
				of++
			}
		}
		switch {
		case of == len(c.Snapshot.Renders):
			looked = append(looked, fmt.Sprintf("%d further renders agree", of))
		default:
			looked = append(looked, fmt.Sprintf("%d of %d further renders are of the compared revision and agree; the others are no evidence", of, len(c.Snapshot.Renders)))
		}
	}
	looked = append(looked, fmt.Sprintf("%d HorizontalPodAutoscalers, %d mutating webhook configurations, %d CRDs collected", len(c.hpas), len(c.webhooks), len(c.crds)))
	ev = append(ev, drift.Say(drift.EvidenceSearched, "looked at "+strings.Join(looked, "; ")))
	return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: "the cause is not established; a person needs to look", Unplaced: unplaced}, true
}
