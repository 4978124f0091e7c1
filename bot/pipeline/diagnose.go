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
	rep, _, err := DiagnoseCompared(s, sens)
	return rep, err
}

// DiagnoseCompared is Diagnose, also returning the comparison the report was
// made from, for a caller that reads the same differences again (fights.Observe
// through ObserveCompared) without comparing the snapshot a second time.
func DiagnoseCompared(s *drift.Snapshot, sens drift.Sensitivity) (*drift.Report, *drift.Comparison, error) {
	cmp, settings, err := compare(s)
	if err != nil {
		return nil, nil, err
	}
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
	}, cmp, nil
}

// compare is the diff stage of a diagnosis: the comparison, with the
// managed fields each rule covers, or the error that stops the diagnosis.
func compare(s *drift.Snapshot) (*drift.Comparison, drift.Settings, error) {
	cmp, settings, err := diff.Compare(s)
	if err != nil {
		return nil, settings, fmt.Errorf("diagnose application %s: %w", s.AppName(), err)
	}
	if cmp.Failed != nil {
		return nil, settings, fmt.Errorf("diagnose application %s: %w", s.AppName(), cmp.Failed)
	}
	diff.CoverManagedFields(s, cmp)
	return cmp, settings, nil
}
