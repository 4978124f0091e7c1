package bot

import (
	"context"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
)

// TestScan runs one cycle against an emulated argocd-server: a stuck app in
// another namespace, a self-heal loop, a passing scale event and a Synced app;
// it checks which are diagnosed and the calls made.
func TestScan(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	load := func(file, name, ns, sync string, finishedAgo time.Duration, history ...string) *drift.Snapshot {
		s, err := drift.LoadSnapshot("../testdata/cases/" + file)
		if err != nil {
			t.Fatal(err)
		}
		md := drift.Map(s.Application, "metadata")
		md["name"], md["namespace"] = name, ns
		st := drift.Map(s.Application, "status")
		st["sync"] = map[string]any{"status": sync, "revision": "r1"}
		st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-finishedAgo).Format(time.RFC3339)}
		var h []any
		for i, rev := range history {
			h = append(h, map[string]any{"revision": rev, "deployedAt": now.Add(-time.Duration(i+1) * time.Minute).Format(time.RFC3339)})
		}
		st["history"] = h
		return s
	}
	srv := argocdtest.NewServer("t",
		load("21-manual-kubectl-patch.yaml", "orders", "team-a", "OutOfSync", time.Hour),
		load("30-secret-stringdata.yaml", "looping", "argocd", "OutOfSync", 30*time.Second, "r1", "r1", "r1"),
		load("22-manual-adhoc-client.yaml", "scaling", "argocd", "OutOfSync", time.Minute, "r0", "r1"),
		load("11-builtin-quantity-hidden.yaml", "quiet", "argocd", "Synced", time.Hour),
	)
	defer srv.Close()
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	results, scanned, err := Scan(context.Background(), c, now, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if scanned != 4 || len(results) != 2 {
		t.Fatalf("scanned %d, stuck %+v", scanned, results)
	}
	byName := map[string]ScanResult{}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.App.Name, r.Err)
		}
		byName[r.App.Name] = r
	}
	if r := byName["orders"]; r.App.Namespace != "team-a" || len(r.Report.Findings) != 1 || r.Report.Findings[0].Cause != drift.CauseManualChange {
		t.Errorf("orders in team-a: %+v", r)
	}
	if r, ok := byName["looping"]; !ok || r.Why != "auto-sync keeps re-syncing the same revision (self-heal loop)" {
		t.Errorf("the self-heal loop was not found: %+v", r)
	}
	calls := c.Calls()
	// 1 settings + 1 list + 2 history reads (looping, scaling) + 2 stuck apps × (app + managed resources).
	want := map[string]int{"GET /api/v1/settings": 1, "GET /api/v1/applications": 1, "GET /api/v1/applications/{name}": 4, "GET /api/v1/applications/{name}/managed-resources": 2}
	for ep, n := range want {
		if calls[ep] != n {
			t.Errorf("%s: %d calls, want %d", ep, calls[ep], n)
		}
	}
}
