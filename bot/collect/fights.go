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

// SelfHealSyncs counts the automated syncs of one revision within window
// before now, and returns that revision and the last of them. Argo CD 3.6
// records a sync in status.history only when it synced every resource, and
// self-heal syncs only those that differ, so its syncs are read from
// status.operationState: autoHealAttemptsCount counts the self-heal syncs in
// a row to the operation's revision (counted when the operation finished
// within window). Automated full syncs in the history count too, the larger
// count wins; an entry that says who started it counts only when automated.
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
	if c, rev, at := selfHealStreak(app); c > n && now.Sub(at) <= window && !at.After(now) {
		n, revision, last = c, rev, at
	}
	return n, revision, last
}

// selfHealStreak reads Argo CD's count of self-heal syncs in a row from the
// last operation, with its revision and finish time (0 when the last
// operation was not automated).
func selfHealStreak(app drift.Object) (int, string, time.Time) {
	op := drift.Map(app, "status", "operationState")
	if op == nil || drift.Map(op, "operation", "initiatedBy")["automated"] != true {
		return 0, "", time.Time{}
	}
	at, err := time.Parse(time.RFC3339, drift.Str(op, "finishedAt"))
	if err != nil {
		return 0, "", time.Time{}
	}
	var n int
	switch v := drift.Lookup(op, "operation", "sync", "autoHealAttemptsCount").(type) {
	case float64:
		n = int(v)
	case int64:
		n = int(v)
	case int:
		n = v
	case string: // int64 fields may come as JSON strings
		fmt.Sscan(v, &n)
	}
	rev := drift.Str(op, "syncResult", "revision")
	if rev == "" {
		rev = drift.Str(op, "operation", "sync", "revision")
	}
	return n, rev, at
}

// selfHealLoop reports whether self-heal synced one revision at least three
// times, the last within FightWindow (see SelfHealSyncs).
func selfHealLoop(a argocd.AppSummary, app drift.Object, now time.Time) bool {
	if !a.SelfHeal {
		return false
	}
	n, _, _ := SelfHealSyncs(app, now, FightWindow)
	return n >= 3
}

// fightCandidate takes a Synced application that self-heal synced to the same
// revision at least three times, the last within FightWindow: it is snapshotted as the
// Application read shows it, without a refresh.
func (sc *scan) fightCandidate(a argocd.AppSummary, app map[string]any) (ScanResult, bool) {
	if a.SyncStatus != "Synced" {
		return ScanResult{}, false
	}
	n, _, _ := SelfHealSyncs(app, sc.now, FightWindow)
	if n < 3 {
		return ScanResult{}, false
	}
	return ScanResult{App: a, Why: fmt.Sprintf("Synced, but self-heal synced the same revision %d times, the last within the hour", n), flipping: app}, true
}

// observeFlipping snapshots and diagnoses a fight candidate (one
// managed-resources call; its Application was read already). It is handed to
// Each and then cleared: it is Synced, not stuck. A failure is reported as any
// application's.
func (sc *scan) observeFlipping(r *ScanResult) {
	app := r.flipping
	r.flipping = nil
	s, rep, cmp, err := sc.collect(r.App, app, false)
	if err != nil {
		r.Err = err
		return
	}
	r.Report, r.Snapshot, r.Fight = rep, s, true
	r.Cleared, r.Status = "Synced; self-heal keeps syncing it", "Synced"
	if sc.opts.Each != nil {
		r.Comparison = cmp
		sc.opts.Each(r)
		r.Snapshot, r.Comparison = nil, nil
	}
}
