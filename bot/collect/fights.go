package collect

import (
	"fmt"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/drift"
)

// FightWindow is how far back self-heal syncs are counted.
const FightWindow = time.Hour

// Flipping reports from the list alone whether a Synced application may be
// in a fight: self-heal is on and a sync finished within FightWindow. Such
// an application never stays OutOfSync long enough to look stuck; the scan
// reads its history (one call) to see whether self-heal keeps syncing it.
func Flipping(a argocd.AppSummary, now time.Time) bool {
	return a.SelfHeal && a.SyncStatus == "Synced" && a.OperationPhase == "Succeeded" &&
		!a.OperationFinished.IsZero() && now.Sub(a.OperationFinished) <= FightWindow
}

// loopWindow is how far back a self-heal loop is looked for: StuckAfter, and
// at least FightWindow for an application with self-heal, whose syncs come
// minutes apart as Argo CD backs off.
func loopWindow(a argocd.AppSummary, stuckAfter time.Duration) time.Duration {
	if a.SelfHeal && stuckAfter < FightWindow {
		return FightWindow
	}
	return stuckAfter
}

// SelfHealSyncs counts the automated syncs in an Application's history within
// window before now, of the revision synced most often; it returns that
// revision and the last such sync. An entry that says who started it counts
// only when it was automated; Argo CD's history keeps 10 entries unless
// spec.revisionHistoryLimit says otherwise, so the count is at most that.
func SelfHealSyncs(app drift.Object, now time.Time, window time.Duration) (n int, revision string, last time.Time) {
	counts := map[string]int{}
	lasts := map[string]time.Time{}
	for _, h := range drift.List(app, "status", "history") {
		at, err := time.Parse(time.RFC3339, drift.Str(h, "deployedAt"))
		if err != nil || now.Sub(at) > window || at.After(now) {
			continue
		}
		if by := drift.Map(h, "initiatedBy"); by != nil && by["automated"] != true {
			continue // a person synced it
		}
		rev := drift.Str(h, "revision")
		if rev == "" {
			continue
		}
		counts[rev]++
		if at.After(lasts[rev]) {
			lasts[rev] = at
		}
	}
	for rev, c := range counts {
		if c > n || (c == n && rev < revision) {
			n, revision, last = c, rev, lasts[rev]
		}
	}
	return n, revision, last
}

// fightCandidate takes a Synced application that self-heal synced to the same
// revision at least three times within FightWindow: it is snapshotted as the
// Application read shows it, without a refresh.
func (sc *scan) fightCandidate(a argocd.AppSummary, app map[string]any) (ScanResult, bool) {
	if a.SyncStatus != "Synced" {
		return ScanResult{}, false
	}
	n, _, _ := SelfHealSyncs(app, sc.now, FightWindow)
	if n < 3 {
		return ScanResult{}, false
	}
	return ScanResult{App: a, Why: fmt.Sprintf("Synced, but self-heal synced the same revision %d times in the last hour", n), flipping: app}, true
}

// observeFlipping snapshots and diagnoses a fight candidate (one
// managed-resources call; its Application was read already). It is handed to
// Each and then cleared: it is Synced, not stuck. A failure is reported as any
// application's.
func (sc *scan) observeFlipping(r *ScanResult) {
	app := r.flipping
	r.flipping = nil
	s, rep, err := sc.collect(r.App, app, false)
	if err != nil {
		r.Err = err
		return
	}
	r.Report, r.Snapshot, r.Fight = rep, s, true
	r.Cleared, r.Status = "Synced; self-heal keeps syncing it", "Synced"
	if sc.opts.Each != nil {
		sc.opts.Each(r)
		r.Snapshot = nil
	}
}
