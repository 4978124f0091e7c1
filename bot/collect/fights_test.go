package collect

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// TestScanFightCandidates: a Synced application whose self-heal synced one
// revision three times in the last hour is examined as a fight's candidate
// (handed to Each, not stuck) for two calls, its history and its resources,
// and no refresh; a Synced one with self-heal that synced once, or one
// without self-heal, costs nothing beyond the list.
func TestScanFightCandidates(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	load := func(name string, selfHeal bool, syncs int) *drift.Snapshot {
		s := corpus.Load(t, "testdata/cases/21-manual-kubectl-patch.yaml")
		drift.Map(s.Application, "metadata")["name"] = name
		if selfHeal {
			drift.Map(s.Application, "spec")["syncPolicy"] = map[string]any{"automated": map[string]any{"selfHeal": true}}
		}
		st := drift.Map(s.Application, "status")
		st["sync"] = map[string]any{"status": "Synced", "revision": "r1"}
		st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-2 * time.Minute).Format(time.RFC3339)}
		var h []any
		for i := 0; i < syncs; i++ {
			h = append(h, map[string]any{"revision": "r1", "deployedAt": now.Add(-time.Duration(i*15+2) * time.Minute).Format(time.RFC3339),
				"initiatedBy": map[string]any{"automated": true}})
		}
		st["history"] = h
		return s
	}
	srv := argocdtest.NewServer("t", load("fighting", true, 3), load("synced-once", true, 1), load("no-self-heal", false, 3))
	defer srv.Close()
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var each []ScanResult
	results, scanned, err := Scan(context.Background(), c, now, ScanOptions{StuckAfter: DefaultStuckAfter, Diagnose: diagnose,
		Each: func(r *ScanResult) { mu.Lock(); each = append(each, *r); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if len(scanned) != 3 || len(results) != 0 {
		t.Fatalf("scanned %d, stuck %+v", len(scanned), results)
	}
	if len(each) != 1 || each[0].App.Name != "fighting" || !each[0].Fight || each[0].Snapshot == nil || each[0].Report == nil || each[0].Err != nil {
		t.Fatalf("examined %+v, want the fighting application alone, with its snapshot", each)
	}
	calls := c.Calls()
	want := map[string]int{"GET /api/v1/applications": 1, "GET /api/v1/applications/{name}": 2, // fighting, synced-once
		"GET /api/v1/applications/{name}?refresh=normal": 0, "GET /api/v1/applications/{name}/managed-resources": 1}
	for ep, n := range want {
		if calls[ep] != n {
			t.Errorf("%s: %d calls, want %d", ep, calls[ep], n)
		}
	}
}

// TestSelfHealSyncs counts the automated syncs of the revision synced most
// within the window; a person's sync and an old one do not count.
func TestSelfHealSyncs(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	entry := func(rev string, ago time.Duration, automated any) any {
		e := map[string]any{"revision": rev, "deployedAt": now.Add(-ago).Format(time.RFC3339)}
		if automated != nil {
			e["initiatedBy"] = map[string]any{"automated": automated}
		}
		return e
	}
	app := drift.Object{"status": map[string]any{"history": []any{
		entry("r1", 70*time.Minute, true), entry("r1", 50*time.Minute, true), entry("r1", 40*time.Minute, false),
		entry("r2", 30*time.Minute, true), entry("r1", 20*time.Minute, nil), entry("r1", 5*time.Minute, true),
	}}}
	n, rev, last := SelfHealSyncs(app, now, time.Hour)
	if n != 3 || rev != "r1" || !last.Equal(now.Add(-5*time.Minute)) {
		t.Errorf("SelfHealSyncs = %d %q %s, want 3 r1 11:55", n, rev, last)
	}
	// Argo CD's own count of self-heal syncs in a row, in the last operation.
	op := func(automated bool, count int64, ago time.Duration) map[string]any {
		return map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-ago).Format(time.RFC3339),
			"operation":  map[string]any{"initiatedBy": map[string]any{"automated": automated}, "sync": map[string]any{"autoHealAttemptsCount": count}},
			"syncResult": map[string]any{"revision": "r9"}}
	}
	for _, tc := range []struct {
		op   map[string]any
		want int
		rev  string
	}{{op(true, 7, time.Minute), 7, "r9"}, {op(false, 7, time.Minute), 3, "r1"}, {op(true, 7, 2*time.Hour), 3, "r1"}, {op(true, 2, time.Minute), 3, "r1"}} {
		drift.Map(app, "status")["operationState"] = tc.op
		if n, rev, _ := SelfHealSyncs(app, now, time.Hour); n != tc.want || rev != tc.rev {
			t.Errorf("with operation %v: %d %q, want %d %q", tc.op, n, rev, tc.want, tc.rev)
		}
	}
}
