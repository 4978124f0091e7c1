// Package bot runs driftfix: collect, diff, classify, plan a fix, publish.
package pipeline

import (
	"fmt"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations"
)

// Diagnose names the cause of every differing path in a snapshot, with its
// evidence and the suggested fix. It does no I/O.
func Diagnose(s *drift.Snapshot, sens drift.Sensitivity) (*drift.Report, error) {
	cmp, settings, err := diff.Compare(s)
	if err != nil {
		return nil, fmt.Errorf("diagnose application %s: %w", s.AppName(), err)
	}
	diff.CoverManagedFields(s, cmp)
	in := classifiers.NewInput(s, settings, cmp)
	in.Sensitivity = sens
	findings := classifiers.Run(in, classifiers.Registry)
	repo := remediations.RepoFromSnapshot(s)
	for i := range findings {
		remediations.Suggest(s, repo, sens, &findings[i])
	}
	return &drift.Report{
		Application: s.AppName(),
		SyncStatus:  drift.Str(s.Application, "status", "sync", "status"),
		Findings:    findings,
	}, nil
}
