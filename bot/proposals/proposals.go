// Package proposals holds the values a cycle proposes for publishing: a
// fix's pull request and the check of its head, what an examined
// application showed for fights, the platform and ignore-rule pull
// requests, and the prediction of a person's pull request. The planning
// stage (bot/plan) fills them, the memo (bot/memo) keeps them from one
// cycle to the next and the publisher (bot/publish) publishes them; none of
// the three declares them, so each imports them from here.
package proposals

import (
	"slices"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/fights"
	"github.com/driftfix/driftfix/remediations"
)

// ProposedPR is a pull request a cycle would open or update.
type ProposedPR struct {
	Instance, App, Namespace string
	Key                      string // identity of the fix (app, kind, resource, paths); names the branch
	Fingerprint              string // the fix's content; a changed fix updates its PR
	RepoURL, Base            string // the repository and branch the Application reads
	Branch, Title, Body      string
	Policy                   config.Policy
	Plan                     remediations.Plan
	// Planned is the check of the fix as it was verified while planned; it
	// is published on a head driftfix pushes.
	Planned HeadCheck
	// Check is the check of the fix's open pull request's head as it is
	// now (nil: none open, or its head could not be read).
	Check *HeadCheck
}

// HeadCheck is the check of a fix pull request's head, ready to publish as
// templates.CheckName.
type HeadCheck struct {
	// SHA is the commit checked; empty for the plan's own check, which is
	// published on the commit driftfix pushes.
	SHA                  string
	Success              bool
	Title, Summary, Text string
	DetailsURL           string
	// Digest identifies what the check says: it is published again only
	// when the commit or the digest changes.
	Digest string
}

// AppWrites is what one cycle saw of an examined application, to tell a
// fight from: the value fingerprint and writer at each differing or watched
// path, the causes the diagnosis found there, and the self-heal syncs in
// Argo CD's history. The cycle keeps nothing; the publisher records it.
type AppWrites struct {
	App string // plan.AppKey
	// At is when the writes were observed: publishing records each write
	// at At, whatever its own At says (a reused application's writes are
	// the ones last observed, shared with the memo, observed again now).
	At     time.Time
	Writes []fights.Write
	// Causes are the findings at its differing paths, as the cycle keeps
	// them (the same as its Stuck entry's).
	Causes []drift.Kept
	// SelfHealSyncs counts the automated syncs of Revision within
	// collect.FightWindow before the cycle; LastSync is the last of them.
	SelfHealSyncs int
	Revision      string
	LastSync      time.Time
	// Synced says the application was Synced (self-heal had just written
	// Git's value back) when it was read.
	Synced bool
	Policy config.Fights
}

// PRPolicy is the policy of a pull request of the given kind under the
// application's policy: a live value adopted is for a person to decide,
// so always a draft, always labelled.
func PRPolicy(pol config.Policy, kind drift.FixKind) config.Policy {
	if kind == drift.FixAdoptLive {
		draft := true
		pol.Draft, pol.Labels = &draft, append(slices.Clone(pol.Labels), remediations.AdoptLabel)
	}
	return pol
}
