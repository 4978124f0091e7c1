package pipeline

import (
	"time"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// Fix diagnoses a snapshot and plans the narrowest fix for each finding in the
// given repository files, each verified by re-diagnosing the snapshot with the
// fix applied. Each finding gets the kind its classifier suggests (FixWith
// decides under a policy). It does no I/O.
func Fix(s *drift.Snapshot, repo remediations.Repo, sens drift.Sensitivity, now time.Time, lim render.Limits) (*drift.Report, []remediations.Plan, error) {
	return FixWith(s, repo, FixOptions{Sensitivity: sens, Now: now, Render: lim})
}

// FixOptions are the inputs of FixWith besides the snapshot and repository.
type FixOptions struct {
	Sensitivity drift.Sensitivity
	Now         time.Time // dates ignore rules
	Render      render.Limits
	// Decide chooses each finding's fix kinds, in order, before anything is
	// rendered: the application's config.Policy.Decide. Nil keeps the
	// classifier's suggestion.
	Decide remediations.Decider
}

// FixWith is Fix with the fix kinds decided by opt.Decide: a finding's kinds
// are planned in order and the first whose plan verifies is kept.
func FixWith(s *drift.Snapshot, repo remediations.Repo, opt FixOptions) (*drift.Report, []remediations.Plan, error) {
	sens := opt.Sensitivity
	rep, err := Diagnose(s, sens)
	if err != nil {
		return nil, nil, err
	}
	plans := remediations.PlanAll(s, rep, repo, remediations.Options{
		Now:         opt.Now,
		Sensitivity: sens,
		Rediagnose:  func(c *drift.Snapshot) (*drift.Report, error) { return Diagnose(c, sens) },
		RuleCovers:  func(r drift.IgnoreRule, res *drift.Resource) []drift.Pointer { return diff.RuleCovers(&r, res) },
		Render:      opt.Render,
		Decide:      opt.Decide,
	})
	return rep, plans, nil
}
