package pipeline

import (
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// Fix diagnoses a snapshot and plans the narrowest fix for each finding in the
// given repository files, each verified by re-diagnosing the snapshot with the
// fix applied. It does no I/O.
func Fix(s *drift.Snapshot, repo remediations.Repo, sens drift.Sensitivity, now time.Time, lim render.Limits) (*drift.Report, []remediations.Plan, error) {
	rep, err := Diagnose(s, sens)
	if err != nil {
		return nil, nil, err
	}
	plans := remediations.PlanAll(s, rep, repo, remediations.Options{
		Now:         now,
		Sensitivity: sens,
		Rediagnose:  func(c *drift.Snapshot) (*drift.Report, error) { return Diagnose(c, sens) },
		RuleCovers:  func(r drift.IgnoreRule, res *drift.Resource) []drift.Pointer { return ruleCovers(&r, res) },
		Render:      lim,
	})
	return rep, plans, nil
}
