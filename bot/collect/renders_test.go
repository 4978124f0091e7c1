package collect

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
)

// rendersApp is a stuck application compared and synced at c0ffee whose one
// ConfigMap is given by target and live (YAML flow, "" for none).
func rendersApp(t *testing.T, now time.Time, target, live string) *drift.Snapshot {
	t.Helper()
	res := ""
	if target != "" {
		res += "\n  target: " + target
	}
	if live != "" {
		res += "\n  live: " + live
	}
	doc := fmt.Sprintf(`apiVersion: driftfix/v1
kind: Snapshot
application:
  apiVersion: argoproj.io/v1alpha1
  kind: Application
  metadata: {name: shop, namespace: argocd}
  spec:
    project: default
    destination: {server: https://kubernetes.default.svc, namespace: shop}
    source: {repoURL: https://git.example.com/shop.git, path: apps/web, targetRevision: main}
  status:
    sync: {status: OutOfSync, revision: c0ffee}
    operationState: {phase: Succeeded, finishedAt: %q, syncResult: {revision: c0ffee}}
resources:
- %s
`, now.Add(-time.Hour).Format(time.RFC3339), res[3:])
	s, err := drift.ParseSnapshot([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return s
}

// TestScanRendersAgainstTheComparedRevision runs a scan with further
// renders against the emulated argocd-server, which renders each revision as
// argocd-server does (no destination namespace on the manifests): a field
// changed by hand right after a commit was pushed, and a resource deleted by
// hand, are never a changing render.
func TestScanRendersAgainstTheComparedRevision(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	const (
		id      = `argocd.argoproj.io/tracking-id: "shop:/ConfigMap:shop/flags"`
		argoCM  = `{manager: argocd-controller, operation: Update, apiVersion: v1, time: "2026-12-02T10:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:BETA": {}}, "f:metadata": {"f:annotations": {"f:argocd.argoproj.io/tracking-id": {}}}}}`
		editsCM = `{manager: kubectl-edit, operation: Update, apiVersion: v1, time: "2026-12-02T11:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:BETA": {}}}}`
	)
	cm := func(ns, beta, managers string) string {
		return fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: flags%s, annotations: {%s}%s}, data: {BETA: %q}}`, ns, id, managers, beta)
	}
	rendered := func(beta string) drift.Object {
		return drift.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "flags",
			"annotations": map[string]any{"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:shop/flags"}}, "data": map[string]any{"BETA": beta}}
	}
	tests := []struct {
		name     string
		live     string
		compared drift.Object // the render of c0ffee
		head     drift.Object // the render of beef, pushed since
		path     string
		want     drift.Cause
	}{
		{"a field edited by hand, a commit pushed since", cm(", namespace: shop", "off", ", managedFields: ["+argoCM+", "+editsCM+"]"), rendered("on"), rendered("new"),
			"/data/BETA", drift.CauseManualChange},
		{"deleted by hand", "", rendered("on"), rendered("on"), "", ""},
		{"deleted by hand, a commit pushed since", "", rendered("on"), rendered("new"), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := rendersApp(t, now, cm(", namespace: shop", "on", ""), tt.live)
			srv := argocdtest.NewServer("t", s)
			defer srv.Close()
			srv.SetHead("argocd", "shop", "beef")
			srv.AddRender("argocd", "shop", []string{"c0ffee"}, tt.compared)
			srv.AddRender("argocd", "shop", []string{"beef"}, tt.head)
			c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
			if err != nil {
				t.Fatal(err)
			}
			results, _, err := Scan(context.Background(), c, now, ScanOptions{StuckAfter: DefaultStuckAfter, Diagnose: diagnose, Renders: true,
				Each: func(r *ScanResult) {
					if r.Snapshot == nil || len(r.Snapshot.Renders) != 2 {
						t.Errorf("the snapshot has no further renders")
					}
				}})
			if err != nil || len(results) != 1 || results[0].Err != nil || results[0].Report == nil {
				t.Fatalf("results %+v, %v", results, err)
			}
			found := false
			for _, f := range results[0].Report.Findings {
				if f.Cause == drift.CauseNondeterministicRender {
					t.Errorf("%s %q is called %s: %q", f.Resource, f.Path, f.Cause, f.Evidence)
				}
				if f.Path.String() == tt.path {
					found = true
					if tt.want != "" && f.Cause != tt.want {
						t.Errorf("%q is %s, want %s: %q", tt.path, f.Cause, tt.want, f.Evidence)
					}
				}
			}
			if !found {
				t.Errorf("no finding at %q: %+v", tt.path, results[0].Report.Findings)
			}
		})
	}
}

// TestSuspectRender: a hard refresh for further renders is spent on a Helm
// application only where a value Git declares differs in an object both
// sides have, and Argo CD compared the revision it last synced.
func TestSuspectRender(t *testing.T) {
	app := func(source string, sync, result map[string]any) *drift.Snapshot {
		return &drift.Snapshot{Application: drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": "shop", "namespace": "argocd"},
			"spec":     map[string]any{source: map[string]any{"repoURL": "https://charts.example.com", "chart": "web", "targetRevision": "1.2.3"}},
			"status":   map[string]any{"sync": sync, "operationState": map[string]any{"phase": "Succeeded", "syncResult": result}}}}
	}
	multi := func(sync, result map[string]any) *drift.Snapshot {
		s := app("source", sync, result)
		spec := drift.Map(s.Application, "spec")
		spec["sources"] = []any{spec["source"], map[string]any{"repoURL": "https://git.example.com/values.git", "ref": "values"}}
		delete(spec, "source")
		return s
	}
	at := func(rev string) map[string]any { return map[string]any{"status": "OutOfSync", "revision": rev} }
	ats := func(revs ...any) map[string]any { return map[string]any{"status": "OutOfSync", "revisions": revs} }
	res := func(rev string) map[string]any { return map[string]any{"revision": rev} }
	ress := func(revs ...any) map[string]any { return map[string]any{"revisions": revs} }
	value := drift.Finding{Path: drift.MustPointer("/data/BETA"), InGit: true, InLive: true}
	missing := drift.Finding{InGit: true}
	extra := drift.Finding{Path: drift.MustPointer("/metadata/labels/team"), InLive: true}
	tests := []struct {
		name     string
		s        *drift.Snapshot
		findings []drift.Finding
		want     bool
	}{
		{"a value Git declares differs", app("source", at("1.2.3"), res("1.2.3")), []drift.Finding{value}, true},
		{"a resource missing from the cluster", app("source", at("1.2.3"), res("1.2.3")), []drift.Finding{missing}, false},
		{"a field only live has", app("source", at("1.2.3"), res("1.2.3")), []drift.Finding{extra}, false},
		{"no findings", app("source", at("1.2.3"), res("1.2.3")), nil, false},
		{"not a chart", &drift.Snapshot{Application: drift.Object{"spec": map[string]any{"source": map[string]any{"repoURL": "r", "path": "apps/web"}}}}, []drift.Finding{value}, false},
		{"compared a revision not synced yet", app("source", at("1.2.4"), res("1.2.3")), []drift.Finding{value}, false},
		{"the synced revision not known", app("source", at("1.2.3"), nil), []drift.Finding{value}, true},
		{"several sources, synced", multi(ats("1.2.3", "c0ffee"), ress("1.2.3", "c0ffee")), []drift.Finding{value}, true},
		{"several sources, one moved", multi(ats("1.2.3", "beef"), ress("1.2.3", "c0ffee")), []drift.Finding{value}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := suspectRender(tt.s, &drift.Report{Findings: tt.findings}); got != tt.want {
				t.Errorf("suspectRender = %v, want %v", got, tt.want)
			}
		})
	}
}
