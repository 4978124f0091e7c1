package templates

import (
	"encoding/json"

	"github.com/driftfix/driftfix/bot/drift"
)

// DigestView is what changed in one cycle, for one channel: the neutral
// digest every notifier is handed (publish.Notifier), plain values with no
// notifier's format in them. Each notifier lays it out its own way; Slack's
// Block Kit is built in bot/slack.
type DigestView struct {
	Instance  string // Argo CD instance name
	ArgoCDURL string
	NewStuck  []AppLine
	Opened    []PRLine
	Updated   []PRLine
	Merged    []PRLine
	Closed    []PRLine
	Fixed     []AppLine // Synced again after a merged fix
	ForPeople []PersonLine
	Fleet     []FleetLine
	// CannotCompare are the applications Argo CD cannot compare with Git,
	// each with Argo CD's message as its Note: neither drift nor stuck, and
	// nothing is proposed for them.
	CannotCompare []AppLine
	// Fights are two writers taking turns at a field, each reported once.
	Fights []FightLine
	// Ignores are the ignore rules the inventory flags, posted at most
	// once a week.
	Ignores []IgnoreLine
	// Buttons asks for actions on the lines of stuck applications and fix
	// pull requests, where the notifier has them (Slack's Open, Snooze and
	// Recheck buttons, bot/slack/digest_actions.go).
	Buttons bool `json:",omitempty"`
}

// AppLine is one application and a short note. Instance (not shown) routes
// the line to its instance's digest.
type AppLine struct {
	App, Namespace, Note string
	Causes               []drift.Cause
	Instance             string
	Key                  string // the fix it follows up, if any
}

// PRLine is one pull request.
type PRLine struct {
	App, Namespace, Title, URL string
	Instance                   string
	Key                        string // the fix's key: its news goes in the thread that announced it
}

// PersonLine is a finding driftfix leaves to people.
type PersonLine struct {
	App, Namespace string
	Instance       string
	Resource       drift.Ref
	Path           string
	Cause          drift.Cause
	Why            string
}

// FleetLine is one cause shared by many applications (one webhook drifting
// forty apps), with the one platform fix that ends it.
type FleetLine struct {
	Instance   string
	Cause      drift.Cause
	Source     string // e.g. "MutatingWebhookConfiguration istio-sidecar-injector"
	Apps       int
	Suggestion string
	// PR is the open platform pull request that makes the change, if any.
	PR string
}

// Empty reports whether nothing changed, so no digest is sent.
func (v DigestView) Empty() bool {
	return len(v.NewStuck)+len(v.Opened)+len(v.Updated)+len(v.Merged)+len(v.Closed)+len(v.Fixed)+len(v.ForPeople)+len(v.Fleet)+len(v.CannotCompare)+len(v.Fights)+len(v.Ignores) == 0
}

// digest sent when quiet hours end: each news line once, in the order it
// came; the fleet and cannot-compare lines, which say how things are now,
// as the later digest has them, and the weekly ignore-rule section as the
// latest digest that carries it.
func (v *DigestView) Merge(later DigestView) {
	if v.Instance == "" {
		v.Instance, v.ArgoCDURL = later.Instance, later.ArgoCDURL
	}
	v.NewStuck = appendOnce(v.NewStuck, later.NewStuck)
	v.Opened = appendOnce(v.Opened, later.Opened)
	v.Updated = appendOnce(v.Updated, later.Updated)
	v.Merged = appendOnce(v.Merged, later.Merged)
	v.Closed = appendOnce(v.Closed, later.Closed)
	v.Fixed = appendOnce(v.Fixed, later.Fixed)
	v.ForPeople = appendOnce(v.ForPeople, later.ForPeople)
	v.Fights = appendOnce(v.Fights, later.Fights) // each told once: never dropped
	v.Fleet, v.CannotCompare = later.Fleet, later.CannotCompare
	if len(later.Ignores) > 0 {
		v.Ignores = later.Ignores // the weekly section, as it is now
	}
}

// appendOnce appends the lines of more that lines does not hold yet.
func appendOnce[T any](lines, more []T) []T {
	seen := map[string]bool{}
	key := func(l T) string { b, _ := json.Marshal(l); return string(b) }
	for _, l := range lines {
		seen[key(l)] = true
	}
	for _, l := range more {
		if k := key(l); !seen[k] {
			seen[k] = true
			lines = append(lines, l)
		}
	}
	return lines
}
