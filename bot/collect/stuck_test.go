package collect

import (
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/drift"
)

func TestStuck(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	app := func(sync, phase string, finished time.Duration) argocd.AppSummary {
		a := argocd.AppSummary{Name: "web", SyncStatus: sync, OperationPhase: phase}
		if finished >= 0 {
			a.OperationFinished = now.Add(-finished)
		}
		return a
	}
	tests := []struct {
		name string
		app  argocd.AppSummary
		want bool
	}{
		{"OutOfSync long after a successful sync", app("OutOfSync", "Succeeded", time.Hour), true},
		{"exactly at the threshold", app("OutOfSync", "Succeeded", DefaultStuckAfter), true},
		{"a passing scale event right after the sync", app("OutOfSync", "Succeeded", 2*time.Minute), false},
		{"Synced", app("Synced", "Succeeded", time.Hour), false},
		{"sync running", app("OutOfSync", "Running", time.Hour), false},
		{"sync failed", app("OutOfSync", "Failed", time.Hour), false},
		{"never synced", app("OutOfSync", "", -1), false},
		{"Unknown status", app("Unknown", "Succeeded", time.Hour), false},
	}
	for _, tt := range tests {
		got, why := Stuck(tt.app, now, DefaultStuckAfter)
		if got != tt.want || why == "" {
			t.Errorf("%s: Stuck = %v (%s), want %v", tt.name, got, why, tt.want)
		}
	}
	// A transient scale event: OutOfSync in one cycle, Synced in the next.
	first, _ := Stuck(app("OutOfSync", "Succeeded", 30*time.Second), now, DefaultStuckAfter)
	second, _ := Stuck(app("Synced", "Succeeded", 11*time.Minute), now.Add(11*time.Minute), DefaultStuckAfter)
	if first || second {
		t.Error("a scale event that clears by itself must never be a candidate")
	}
}

func TestSelfHealLoop(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	hist := func(revs ...string) drift.Object {
		var h []any
		for i, r := range revs {
			h = append(h, map[string]any{"revision": r, "deployedAt": now.Add(-time.Duration(i) * time.Minute).Format(time.RFC3339)})
		}
		return drift.Object{"status": map[string]any{"history": h}}
	}
	if !SelfHealLoop(hist("a", "a", "a"), now, 10*time.Minute) {
		t.Error("three syncs of one revision in ten minutes is a self-heal loop")
	}
	if SelfHealLoop(hist("a", "b", "c"), now, 10*time.Minute) {
		t.Error("three revisions are three deployments, not a loop")
	}
	if SelfHealLoop(hist("a", "a", "a"), now.Add(time.Hour), 10*time.Minute) {
		t.Error("old history is not a loop now")
	}
}
