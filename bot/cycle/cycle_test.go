package cycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/bot/pipeline"
)

func TestCycleProposesUnderPolicy(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	load := func(file string) *drift.Snapshot {
		s := corpus.Load(t, file)
		st := drift.Map(s.Application, "status")
		st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
		return s
	}
	hpa := load("remediations/testdata/plain-remove-hpa.yaml")
	manual := load("testdata/cases/21-manual-kubectl-patch.yaml")
	srv := argocdtest.NewServer("t", hpa, manual)
	defer srv.Close()
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	in := Instance{Name: "main", URL: "https://argocd.example.com", Client: c,
		Cluster:   func(s *drift.Snapshot) []drift.Object { return hpa.Cluster },
		RepoFiles: func(_ context.Context, s *drift.Snapshot) (map[string]string, error) { return hpa.Repo.Files, nil }}
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\npolicy: {branchPrefix: fixes}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := Cycle(context.Background(), cfg, []Instance{in}, now, CycleOptions{})
	if len(res.Errors) != 0 || res.Scanned != 2 || len(res.Stuck) != 2 {
		t.Fatalf("errors %v, scanned %d, stuck %d", res.Errors, res.Scanned, len(res.Stuck))
	}
	for _, r := range res.Stuck {
		if r.Instance != "main" {
			t.Errorf("%s: instance %q, want main (fleet lines group by it)", r.App.Name, r.Instance)
		}
	}
	if len(res.PRs) != 1 || !strings.HasPrefix(res.PRs[0].Branch, "fixes/shop/hpa-replicas-") || !strings.Contains(res.PRs[0].Title, "Stop declaring /spec/replicas") {
		t.Fatalf("PRs %+v", res.PRs)
	}
	if len(res.Digest.ForPeople) != 1 || res.Digest.ForPeople[0].Cause != drift.CauseManualChange || len(res.Digest.NewStuck) != 2 {
		t.Errorf("digest %+v", res.Digest)
	}

	strict, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\npolicy:\n  fixes: {hpa-replicas: [ignore-difference]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res = Cycle(context.Background(), strict, []Instance{in}, now, CycleOptions{})
	if len(res.PRs) != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0], "policy does not allow remove-field") {
		t.Fatalf("a fix kind the policy does not allow must not be proposed: PRs %d, skipped %q", len(res.PRs), res.Skipped)
	}
}

// TestFleet: one webhook drifting five applications (two different fields)
// is one digest line with one platform fix; drifting two, it is left to the
// applications' own lines.
func TestFleet(t *testing.T) {
	diag := func(file, name string) collect.ScanResult {
		rep, err := pipeline.Diagnose(corpus.Load(t, file), drift.Sensitivity{})
		if err != nil {
			t.Fatal(err)
		}
		return collect.ScanResult{Instance: "main", App: argocd.AppSummary{Name: name, Namespace: "argocd"}, Report: rep}
	}
	var stuck []collect.ScanResult
	for _, n := range []string{"a", "b", "c"} {
		stuck = append(stuck, diag("testdata/cases/17-webhook-adds-label.yaml", n))
	}
	stuck = append(stuck, diag("testdata/cases/18-webhook-overwrites-git.yaml", "d"), diag("testdata/cases/18-webhook-overwrites-git.yaml", "e"),
		diag("testdata/cases/21-manual-kubectl-patch.yaml", "f"))
	lines := Fleet(stuck, FleetMin)
	if len(lines) != 1 || lines[0].Apps != 5 || lines[0].Cause != drift.CauseWebhookMutation ||
		!strings.HasPrefix(lines[0].Source, "MutatingWebhookConfiguration ") || !strings.Contains(lines[0].Suggestion, "argocd-cm") {
		t.Fatalf("fleet lines %+v", lines)
	}
	if lines := Fleet(stuck[3:], FleetMin); len(lines) != 0 {
		t.Fatalf("two applications are no fleet: %+v", lines)
	}
	stuck[0].Instance, stuck[1].Instance, stuck[2].Instance = "a", "b", "c" // one webhook name on several instances is several webhooks
	if lines := Fleet(stuck, FleetMin); len(lines) != 0 {
		t.Fatalf("fleet across instances: %+v", lines)
	}
}
