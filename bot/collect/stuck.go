package collect

import (
	"fmt"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/drift"
)

// DefaultStuckAfter is how long an application must stay OutOfSync after a
// successful sync before driftfix treats the drift as permanent.
const DefaultStuckAfter = 10 * time.Minute

// Stuck decides from the list call alone whether an application is stuck:
// OutOfSync after a sync that Succeeded at least after ago. A scale event that
// clears by itself is Synced again by the next cycle and never qualifies.
func Stuck(a argocd.AppSummary, now time.Time, after time.Duration) (bool, string) {
	switch {
	case a.SyncStatus != "OutOfSync":
		return false, "sync status is " + orUnknown(a.SyncStatus)
	case a.OperationPhase == "":
		return false, "Argo CD has not synced it yet"
	case a.OperationPhase == "Running" || a.OperationPhase == "Terminating":
		return false, "a sync is running"
	case a.OperationPhase != "Succeeded":
		return false, "the last sync " + a.OperationPhase + "; that is a sync problem, not drift"
	case a.OperationFinished.IsZero():
		return false, "the last sync has no finish time"
	}
	if age := now.Sub(a.OperationFinished); age < after {
		return false, fmt.Sprintf("OutOfSync for %s since the last sync, less than %s", age.Round(time.Second), after)
	}
	return true, fmt.Sprintf("OutOfSync since the sync that finished at %s", a.OperationFinished.UTC().Format(time.RFC3339))
}

// SelfHealLoop reports whether the Application keeps syncing the same revision:
// at least three history entries of one revision within window before now.
func SelfHealLoop(app drift.Object, now time.Time, window time.Duration) bool {
	counts := map[string]int{}
	for _, h := range drift.List(app, "status", "history") {
		at, err := time.Parse(time.RFC3339, drift.Str(h, "deployedAt"))
		if err != nil || now.Sub(at) > window {
			continue
		}
		counts[drift.Str(h, "revision")]++
	}
	for rev, n := range counts {
		if rev != "" && n >= 3 {
			return true
		}
	}
	return false
}

// CannotCompare reads from an Application whether Argo CD could not compare
// it with Git, and Argo CD's message: the messages of its ComparisonError
// conditions, in order; with sync status Unknown and no such condition, those
// of its other error conditions, each after its type. An application that
// cannot be compared shows no drift driftfix could diagnose: it is neither
// stuck nor drifting.
func CannotCompare(app drift.Object) (bool, string) {
	var compare, other []string
	for _, c := range drift.List(app, "status", "conditions") {
		typ, msg := drift.Str(c, "type"), drift.Str(c, "message")
		switch {
		case typ == "ComparisonError":
			compare = append(compare, msg)
		case strings.HasSuffix(typ, "Error") && msg != "":
			other = append(other, typ+": "+msg)
		}
	}
	if len(compare) > 0 {
		return true, strings.Join(compare, "; ")
	}
	if drift.Str(app, "status", "sync", "status") == "Unknown" {
		return true, strings.Join(other, "; ")
	}
	return false, ""
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
