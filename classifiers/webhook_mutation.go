package classifiers

import (
	"fmt"

	"github.com/driftfix/driftfix/bot/drift"
)

// WebhookMutation finds fields a mutating admission webhook added or changed
// when the object was admitted.
var WebhookMutation = Classifier{
	Name:           drift.CauseWebhookMutation,
	Doc:            "a mutating admission webhook added or changed it when the object was admitted",
	Classify:       classifyWebhookMutation,
	Predicted:      true,
	MayStayIgnored: true,
	Fleet:          FleetWebhook,
}

func classifyWebhookMutation(c *Case) (Verdict, bool) {
	d := c.Diff
	if d == nil || !d.InLive || len(d.Path) == 0 {
		return Verdict{}, false
	}
	if len(d.NonArgoOwners()) > 0 {
		return Verdict{}, false // another manager wrote it through the API, not at admission
	}
	if v, ok := c.inProcessAdmission(); ok { // no webhook object to list (graph.go)
		return v, true
	}
	matches := c.matchingWebhooks(d.Resource, c.Resource())
	if len(matches) == 0 {
		return Verdict{}, false
	}
	m := matches[0]
	ev := append([]drift.Evidence{}, m.evidence...)
	if len(d.Owners) == 0 {
		ev = append(ev, drift.Say(drift.EvidenceManager, fmt.Sprintf("no field manager owns %s: the API server records managedFields before mutating admission, so a field a webhook adds has no owner", d.Path)))
	} else {
		ev = append(ev, drift.Say(drift.EvidenceManager, fmt.Sprintf("%s is recorded under %s, Argo CD's own manager: that proves only Argo CD's apply request, not who made the value, which a webhook at that apply's admission or any client sending Argo CD's manager name could have written", d.Path, ownersText(d.Owners))))
	}
	if len(matches) > 1 {
		ev = append(ev, drift.Say(drift.EvidenceWebhook, fmt.Sprintf("%d other mutating webhooks also admit this object", len(matches)-1)))
	}
	if how, same := drift.SemanticallyEqual(d.Git, d.Live); d.InGit && same && !drift.EditedText(d.Git, d.Live) {
		ev = append(ev, c.dryRunNote()...)
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s, the webhook stores %s: the same %s in another form, derived from Git's own value; writing that form in Git changes nothing in the cluster", c.show(d.Git), c.showLive(), how)))
		return Verdict{Evidence: ev, Fix: drift.FixSetValue}, true
	}
	// The grant rests on the API server's own answer, not on the webhook's
	// existence: a server-side dry run of Git's manifest (dryRun=All under
	// Argo CD's manager, so every matching webhook is called) must store
	// the live value at this path.
	switch webhookDryRun(d) {
	case dryRunRefutes:
		return Verdict{}, false // another writer changed it after admission: manual-change or unknown say so
	case dryRunMissing:
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceDryRun, Proof: drift.ProofDryRunMissing, Path: d.Path.String(),
			Text: fmt.Sprintf("the snapshot holds no server-side dry run of Git's manifest, so it is not known whether the webhook writes the live value at %s or a client wrote it under the requesting manager's name: a dry run (dryRun=All under Argo CD's manager argocd-controller; dryRunEvidence: true, with the collector's RBAC granting patch on %s) decides it", d.Path, d.Resource.Kind)})
		return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: fmt.Sprintf("a matching mutating webhook could have written %s, but no server-side dry run of Git's manifest shows that it does: a person decides, or collect dry-run evidence (dryRunEvidence: true, patch on %s) and driftfix decides", d.Path, d.Resource.Kind)}, true
	}
	ev = append(ev, drift.Evidence{Kind: drift.EvidenceDryRun, Proof: drift.ProofDryRunHolds, Path: d.Path.String(),
		Text: fmt.Sprintf("a server-side dry-run apply of Git's manifest under argocd-controller (dryRun in the snapshot) stores the live value at %s: the API server's admission writes it on every apply", d.Path)})
	grant := fmt.Sprintf("MutatingWebhookConfiguration %s (webhook %s) admits this object, as the API server's own matchers decide, and a server-side dry run of Git's manifest (proof %s) stores the live value at %s: the webhook writes it on every apply", m.config, m.webhook, drift.ProofDryRunHolds, d.Path)
	// The path must also be one a webhook may keep: Refuse asks the
	// allow-list of hand-overs, and the grant names the entry it rests on.
	if h, ok := drift.HandOverAt(drift.GrantWebhook, d.Resource, d.Path); ok {
		grant += fmt.Sprintf("; the allow-list of hand-overs lets %s keep %s: %s (%s)", h.Writer, h.Pattern(), h.Why, h.Source)
	}
	if d.InGit && drift.EditedText(d.Git, d.Live) {
		ev = append(ev, drift.Say(drift.EvidenceConsequence, fmt.Sprintf("the webhook rewrote part of the text Git declares at %s and kept the rest: what it substituted is its own content, not a form of Git's value, so it is not written into Git", d.Path)))
		return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference, Grant: grant}, true
	}
	if d.InGit {
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s, the webhook stores %s: the webhook's value is its own, not a form of Git's, so it is not written into Git", c.show(d.Git), c.showLive())))
		return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference, Grant: grant}, true
	}
	ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git does not declare %s; the webhook adds %s on every apply", d.Path, c.showLive())))
	return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference, Grant: grant}, true
}

// What a snapshot's server-side dry run of Git's manifest says of a live value.
const (
	dryRunReproduces = iota // it stores the live value (or, like live, none)
	dryRunRefutes           // it stores another value, or none where live has one
	dryRunMissing           // the snapshot holds no dry run of the resource
)

// webhookDryRun compares the dry run's value at the difference's path with
// the live one.
func webhookDryRun(d *drift.Difference) int {
	switch {
	case !d.HasDryRun:
		return dryRunMissing
	case d.InDryRun != d.InLive || (d.InDryRun && !drift.Equal(d.DryRun, d.Live)):
		return dryRunRefutes
	}
	return dryRunReproduces
}

// dryRunRefutes says what a server-side dry run of Git's manifest shows when
// it does not store the live value at the difference's path: no admission
// of Git's manifest (webhooks included) produces it, so another writer
// changed it afterwards. Under Argo CD's own manager names alone that is a
// client sending Argo CD's name, or an apply of another revision: the names
// prove only an apply request, never that the API server or a webhook made
// the value.
func (c *Case) dryRunRefutes() []drift.Evidence {
	d := c.Diff
	if d == nil || len(d.Path) == 0 || !d.HasDryRun || webhookDryRun(d) != dryRunRefutes {
		return nil
	}
	stores := "stores no value there"
	if d.InDryRun {
		stores = "stores " + c.show(d.DryRun)
		if d.InGit && drift.Equal(d.DryRun, d.Git) {
			stores = "stores Git's own value"
		}
	}
	who := "another writer changed it after admission"
	if len(d.NonArgoOwners()) == 0 && len(d.Owners) > 0 {
		who = fmt.Sprintf("it is recorded under %s, Argo CD's own manager, which proves only an apply request: a client sending Argo CD's manager name, or an apply of another revision, wrote it after admission", ownersText(d.Owners))
	}
	text := fmt.Sprintf("a server-side dry-run apply of Git's manifest under argocd-controller (dryRun in the snapshot, every matching mutating webhook called) %s at %s, not the live value: no webhook wrote it; %s", stores, d.Path, who)
	return []drift.Evidence{{Kind: drift.EvidenceDryRun, Proof: drift.ProofDryRunRefutes, Path: d.Path.String(), Text: text}}
}
