package plan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// TestInstructionIsNoPullRequest: an application an ApplicationSet generates
// gets its ignore rule as an instruction, which is never a pull request nor
// verified: it is a digest line for people naming the ApplicationSet. A plan
// that edits a file in the same cycle is still proposed.
func TestInstructionIsNoPullRequest(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	load := func(file string) *drift.Snapshot {
		s := corpus.Load(t, file)
		st := drift.Map(s.Application, "status")
		st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
		return s
	}
	gen := load("remediations/testdata/appset-ignore-instruction.yaml")
	hpa := load("remediations/testdata/plain-remove-hpa.yaml")
	byName := map[string]*drift.Snapshot{gen.AppName(): gen, hpa.AppName(): hpa}
	srv := argocdtest.NewServer("t", gen, hpa)
	defer srv.Close()
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	in := Instance{Name: "main", URL: "https://argocd.example.com", Client: c,
		Cluster: func(s *drift.Snapshot) []drift.Object {
			// As with dryRunEvidence, the cluster read adds the API
			// server's dry-run answers: here the fixtures' own.
			withDryRuns(s, byName[s.AppName()])
			return byName[s.AppName()].Cluster
		},
		RepoFiles: func(_ context.Context, s *drift.Snapshot) (map[string]string, error) {
			return byName[s.AppName()].Repo.Files, nil
		}}
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\npolicy: {branchPrefix: fixes}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := Cycle(context.Background(), cfg, []Instance{in}, now, CycleOptions{})
	if len(res.Errors) != 0 || res.Scanned != 2 {
		t.Fatalf("errors %v, scanned %d", res.Errors, res.Scanned)
	}
	for _, pr := range res.PRs {
		if pr.App == gen.AppName() {
			t.Errorf("a plan that edits no file opened pull request %q", pr.Title)
		}
		if len(pr.Plan.Edits) == 0 || !pr.Plan.Verified() || !pr.Planned.Success {
			t.Errorf("pull request %q: edits %d, verified %v, planned check %v", pr.Title, len(pr.Plan.Edits), pr.Plan.Verified(), pr.Planned.Success)
		}
	}
	if len(res.PRs) != 1 || res.PRs[0].App != hpa.AppName() {
		t.Errorf("want the one pull request of %s, got %d", hpa.AppName(), len(res.PRs))
	}
	var lines int
	for _, l := range res.Digest.ForPeople {
		if l.App != gen.AppName() {
			continue
		}
		lines++
		for _, s := range []string{"not verified", "ApplicationSet platform-apps", "appsets/platform.yaml"} {
			if !strings.Contains(l.Why, s) {
				t.Errorf("digest line %s %s lacks %q: %s", l.Resource, l.Path, s, l.Why)
			}
		}
	}
	if lines != 1 {
		t.Errorf("%d digest lines for %s, want one per finding (1, the label the webhook overwrites): %+v", lines, gen.AppName(), res.Digest.ForPeople)
	}
	skipped := strings.Join(res.Skipped, "\n")
	if !strings.Contains(skipped, "to do by hand (not verified") || strings.Contains(skipped, "re-diagnosed") {
		t.Errorf("skipped: %s", skipped)
	}
}

// withDryRuns copies the dry-run answers of the fixture from into the
// resources of s that it names, as the collector's dry-runner fills them.
func withDryRuns(s, from *drift.Snapshot) {
	for i := range s.Resources {
		for _, r := range from.Resources {
			if r.DryRun != nil && r.Ref() == s.Resources[i].Ref() {
				s.Resources[i].DryRun = r.DryRun
			}
		}
	}
}
