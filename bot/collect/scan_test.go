package collect

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/bot/pipeline"
)

// TestScan runs one cycle against an emulated argocd-server: a stuck app in
// another namespace, a self-heal loop, a passing scale event and a Synced app;
// it checks which are diagnosed and the calls made.
func TestScan(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	load := func(file, name, ns, sync string, finishedAgo time.Duration, history ...string) *drift.Snapshot {
		s := corpus.Load(t, "testdata/cases/"+file)
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
	results, scanned, err := Scan(context.Background(), c, now, ScanOptions{StuckAfter: DefaultStuckAfter, Diagnose: diagnose})
	if err != nil {
		t.Fatal(err)
	}
	if len(scanned) != 4 || len(results) != 2 {
		t.Fatalf("scanned %d, stuck %+v", len(scanned), results)
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
	// 1 settings + 1 list + 2 history reads (looping, scaling) + 2 stuck apps × (refresh + managed resources).
	want := map[string]int{"GET /api/v1/settings": 1, "GET /api/v1/applications": 1, "GET /api/v1/applications/{name}": 2,
		"GET /api/v1/applications/{name}?refresh=normal": 2, "GET /api/v1/applications/{name}/managed-resources": 2}
	for ep, n := range want {
		if calls[ep] != n {
			t.Errorf("%s: %d calls, want %d", ep, calls[ep], n)
		}
	}
}

// TestScanRefreshClears: an application stuck by its timestamps that a normal
// refresh finds Synced (the drift cleared between cycles) is not reported.
func TestScanRefreshClears(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	s := corpus.Load(t, "testdata/cases/21-manual-kubectl-patch.yaml")
	st := drift.Map(s.Application, "status")
	st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
	srv := argocdtest.NewServer("t", s)
	defer srv.Close()
	srv.OnRefresh = func(sn *drift.Snapshot) { drift.Map(sn.Application, "status", "sync")["status"] = "Synced" }
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	results, scanned, err := Scan(context.Background(), c, now, ScanOptions{StuckAfter: DefaultStuckAfter, Diagnose: diagnose})
	if err != nil || len(scanned) != 1 || len(results) != 0 || srv.Refreshes != 1 {
		t.Fatalf("scanned %d, results %+v, refreshes %d, err %v", len(scanned), results, srv.Refreshes, err)
	}
	if n := c.Calls()["GET /api/v1/applications/{name}/managed-resources"]; n != 0 {
		t.Errorf("a cleared application was still collected (%d calls)", n)
	}
}

// TestScanHardRefreshBudget: Helm applications found drifting get a hard
// refresh and two more renders, within the per-scan budget; others never do.
func TestScanHardRefreshBudget(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	load := func(file, name string) *drift.Snapshot {
		s := corpus.Load(t, "testdata/cases/"+file)
		drift.Map(s.Application, "metadata")["name"] = name
		st := drift.Map(s.Application, "status")
		st["sync"] = map[string]any{"status": "OutOfSync", "revision": "r1"}
		st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
		return s
	}
	srv := argocdtest.NewServer("t", load("34-helm-lookup-fallback.yaml", "chart-a"), load("34-helm-lookup-fallback.yaml", "chart-b"),
		load("21-manual-kubectl-patch.yaml", "plain"))
	defer srv.Close()
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	results, _, err := Scan(context.Background(), c, now, ScanOptions{StuckAfter: DefaultStuckAfter, Diagnose: diagnose, HardRefreshes: 1})
	if err != nil || len(results) != 3 {
		t.Fatalf("results %d, %v", len(results), err)
	}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.App.Name, r.Err)
		}
	}
	if srv.HardRefreshes != 1 || c.Calls()["GET /api/v1/applications/{name}/manifests"] != 2 {
		t.Errorf("hard refreshes %d, manifest calls %d; want 1 and 2", srv.HardRefreshes, c.Calls()["GET /api/v1/applications/{name}/manifests"])
	}
	if _, _, err := Scan(context.Background(), c, now, ScanOptions{StuckAfter: DefaultStuckAfter, Diagnose: diagnose, HardRefreshes: -1}); err != nil || srv.HardRefreshes != 1 {
		t.Errorf("a negative budget must disable hard refreshes (%d)", srv.HardRefreshes)
	}
}

// diagnose is the diagnosis a cycle gives Scan, with the default sensitive paths.
func diagnose(s *drift.Snapshot) (*drift.Report, *drift.Comparison, error) {
	return pipeline.DiagnoseCompared(s, drift.Sensitivity{})
}

// TestScanStuckAfter: the threshold is what the caller passes, zero
// included: 0 makes every application OutOfSync after a successful sync
// stuck at once.
func TestScanStuckAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		after, age time.Duration
		stuck      bool
	}{
		{"zero, synced just now", 0, 0, true},
		{"zero, synced a minute ago", 0, time.Minute, true},
		{"default, synced a minute ago", DefaultStuckAfter, time.Minute, false},
		{"default, synced eleven minutes ago", DefaultStuckAfter, 11 * time.Minute, true},
		{"one hour, synced eleven minutes ago", time.Hour, 11 * time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := corpus.Load(t, "testdata/cases/21-manual-kubectl-patch.yaml")
			st := drift.Map(s.Application, "status")
			st["sync"] = map[string]any{"status": "OutOfSync", "revision": "r1"}
			st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-tc.age).Format(time.RFC3339)}
			srv := argocdtest.NewServer("t", s)
			defer srv.Close()
			c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
			if err != nil {
				t.Fatal(err)
			}
			results, _, err := Scan(context.Background(), c, now, ScanOptions{StuckAfter: tc.after, Diagnose: diagnose})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(results) == 1; got != tc.stuck {
				t.Fatalf("stuck after %s, synced %s ago: got %d results, want stuck=%v", tc.after, tc.age, len(results), tc.stuck)
			}
		})
	}
}

// TestScanCannotCompare: an application Argo CD cannot compare (sync status
// Unknown, or a ComparisonError condition on the Application the scan reads)
// is listed with Argo CD's message, word for word, and is never diagnosed nor
// reported stuck; other error conditions do not make an OutOfSync
// application uncomparable.
func TestScanCannotCompare(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	const hostile = "Failed to load target state: <!channel> <https://evil.example|click> `x` \x1b[2J\nsecond line \u202e"
	cond := func(typ, msg string) map[string]any { return map[string]any{"type": typ, "message": msg} }
	for _, tc := range []struct {
		name       string
		sync       string
		age        time.Duration
		conditions []any
		// want
		cannot    bool
		message   string
		appCalls  int // plain GET application
		diagnosed int
	}{
		{"Unknown with a ComparisonError", "Unknown", time.Hour, []any{cond("ComparisonError", hostile)}, true, hostile, 1, 0},
		{"Unknown with two ComparisonErrors", "Unknown", time.Hour, []any{cond("ComparisonError", "a"), cond("SharedResourceWarning", "w"), cond("ComparisonError", "b")}, true, "a; b", 1, 0},
		{"Unknown with another error condition", "Unknown", time.Hour, []any{cond("InvalidSpecError", "destination not permitted")}, true, "InvalidSpecError: destination not permitted", 1, 0},
		{"Unknown with no condition", "Unknown", time.Hour, nil, true, "", 1, 0},
		{"stuck OutOfSync, ComparisonError seen on refresh", "OutOfSync", time.Hour, []any{cond("ComparisonError", hostile)}, true, hostile, 0, 0},
		{"OutOfSync right after a sync, ComparisonError seen in its history read", "OutOfSync", 30 * time.Second, []any{cond("ComparisonError", "rpc error")}, true, "rpc error", 1, 0},
		{"stuck OutOfSync with a SyncError only", "OutOfSync", time.Hour, []any{cond("SyncError", "hook failed")}, false, "", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := corpus.Load(t, "testdata/cases/21-manual-kubectl-patch.yaml")
			st := drift.Map(s.Application, "status")
			st["sync"] = map[string]any{"status": tc.sync, "revision": "r1"}
			st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-tc.age).Format(time.RFC3339)}
			st["conditions"] = tc.conditions
			srv := argocdtest.NewServer("t", s)
			defer srv.Close()
			c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
			if err != nil {
				t.Fatal(err)
			}
			listed, err := c.ListApplications(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			listed = slices.Clone(listed)
			results, scanned, err := Scan(context.Background(), c, now, ScanOptions{StuckAfter: DefaultStuckAfter, Diagnose: diagnose})
			if err != nil || len(scanned) != 1 {
				t.Fatalf("scanned %v, %v", scanned, err)
			}
			a := scanned[0]
			if a.CannotCompare != tc.cannot || a.ComparisonError != tc.message {
				t.Errorf("listed as cannot compare=%v with %q, want %v with %q", a.CannotCompare, a.ComparisonError, tc.cannot, tc.message)
			}
			// What the scan learnt is its own: the client's next list, read
			// against the one it keeps, is what Argo CD lists.
			again, err := c.ListApplications(context.Background())
			if err != nil || !slices.Equal(again, listed) {
				t.Errorf("the next list (%v) is\n%+v\nwant what Argo CD lists\n%+v", err, again, listed)
			}
			if len(results) != tc.diagnosed {
				t.Errorf("%d results (stuck or failed), want %d: %+v", len(results), tc.diagnosed, results)
			}
			calls := c.Calls()
			if calls["GET /api/v1/applications/{name}"] != tc.appCalls || calls["GET /api/v1/applications/{name}/managed-resources"] != tc.diagnosed {
				t.Errorf("calls %v: want %d plain Application reads and %d managed-resources reads", calls, tc.appCalls, tc.diagnosed)
			}
		})
	}
}

// TestScanRefreshOnlyWhenGitMoved: a stuck candidate whose Git source's
// target revision still names the commit Argo CD compared is read without a
// refresh (Argo CD compares again on every live change; only a commit it has
// not seen makes its comparison old). A revision Git has moved past, a
// chart source, a repository that cannot be listed, or no lister at all
// get a normal refresh, as before.
func TestScanRefreshOnlyWhenGitMoved(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	repo, err := githubtest.NewRepo(t.TempDir(), "acme", "shop", map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})
	if err != nil {
		t.Fatal(err)
	}
	head, err := gitrepo.Reader{}.Resolve(context.Background(), repo, "main")
	if err != nil || len(head) != 40 {
		t.Fatalf("resolve main: %q, %v", head, err)
	}
	app := func(name string, source map[string]any, revision string) *drift.Snapshot {
		s := corpus.Load(t, "testdata/cases/21-manual-kubectl-patch.yaml")
		drift.Map(s.Application, "metadata")["name"] = name
		drift.Map(s.Application, "spec")["source"] = source
		st := drift.Map(s.Application, "status")
		st["sync"] = map[string]any{"status": "OutOfSync", "revision": revision}
		st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
		return s
	}
	git := map[string]any{"repoURL": repo, "path": "app", "targetRevision": "main"}
	for _, tc := range []struct {
		name      string
		snap      *drift.Snapshot
		lister    bool
		refreshed bool
	}{
		{"git holds the compared commit", app("current", git, head), true, false},
		{"git moved past it", app("moved", git, "1111111111111111111111111111111111111111"), true, true},
		{"a chart", app("chart", map[string]any{"repoURL": repo, "chart": "web", "targetRevision": "main"}, head), true, true},
		{"cannot be listed", app("unlisted", map[string]any{"repoURL": "file:///nonexistent/repo.git", "targetRevision": "main"}, head), true, true},
		{"no lister", app("nolister", git, head), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := argocdtest.NewServer("t", tc.snap)
			defer srv.Close()
			c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
			if err != nil {
				t.Fatal(err)
			}
			opts := ScanOptions{StuckAfter: DefaultStuckAfter, Diagnose: diagnose}
			if tc.lister {
				opts.GitCommit = gitrepo.Reader{}.Resolve
			}
			results, _, err := Scan(context.Background(), c, now, opts)
			if err != nil || len(results) != 1 || results[0].Err != nil || len(results[0].Report.Findings) != 1 {
				t.Fatalf("scan: %v %+v", err, results)
			}
			calls := c.Calls()
			refreshes, plain := calls["GET /api/v1/applications/{name}?refresh=normal"], calls["GET /api/v1/applications/{name}"]
			if tc.refreshed && (refreshes != 1 || plain != 0) || !tc.refreshed && (refreshes != 0 || plain != 1) {
				t.Errorf("refreshes %d, plain reads %d; want a refresh: %v", refreshes, plain, tc.refreshed)
			}
			if n := calls["GET /api/v1/applications/{name}/managed-resources"]; n < 1 {
				t.Errorf("%d managed-resources calls, want its resources read", n)
			}
		})
	}
}
