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
	matches := c.matchingWebhooks(d.Resource, c.Resource())
	if len(matches) == 0 {
		return Verdict{}, false
	}
	m := matches[0]
	ev := append([]drift.Evidence{}, m.evidence...)
	if len(d.Owners) == 0 {
		ev = append(ev, drift.Say(drift.EvidenceManager, fmt.Sprintf("no field manager owns %s: the API server records managedFields before mutating admission, so a field a webhook adds has no owner", d.Path)))
	} else {
		ev = append(ev, drift.Say(drift.EvidenceManager, fmt.Sprintf("%s is recorded under %s, the requesting manager: the API server records managedFields before mutating admission, so a webhook's change is attributed to the request", d.Path, ownersText(d.Owners))))
	}
	if len(matches) > 1 {
		ev = append(ev, drift.Say(drift.EvidenceWebhook, fmt.Sprintf("%d other mutating webhooks also admit this object", len(matches)-1)))
	}
	ev = append(ev, c.dryRunNote()...)
	grant := fmt.Sprintf("MutatingWebhookConfiguration %s (webhook %s) admits this object, as the API server's own matchers decide: the webhook writes the field on every apply", m.config, m.webhook)
	if d.InGit && drift.EditedText(d.Git, d.Live) {
		ev = append(ev, drift.Say(drift.EvidenceConsequence, fmt.Sprintf("the webhook rewrote part of the text Git declares at %s and kept the rest: what it substituted is its own content, not a form of Git's value, so it is not written into Git", d.Path)))
		return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference, Grant: grant}, true
	}
	if how, same := drift.SemanticallyEqual(d.Git, d.Live); d.InGit && same {
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s, the webhook stores %s: the same %s in another form, derived from Git's own value; writing that form in Git changes nothing in the cluster", c.show(d.Git), c.showLive(), how)))
		return Verdict{Evidence: ev, Fix: drift.FixSetValue}, true
	}
	if d.InGit {
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s, the webhook stores %s: the webhook's value is its own, not a form of Git's, so it is not written into Git", c.show(d.Git), c.showLive())))
		return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference, Grant: grant}, true
	}
	ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git does not declare %s; the webhook adds %s on every apply", d.Path, c.showLive())))
	return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference, Grant: grant}, true
}
