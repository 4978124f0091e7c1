package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
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
	diag := func(file, name string) Stuck {
		rep, err := pipeline.Diagnose(corpus.Load(t, file), drift.Sensitivity{})
		if err != nil {
			t.Fatal(err)
		}
		return Stuck{Instance: "main", App: argocd.AppSummary{Name: name, Namespace: "argocd"}, Diagnosed: true, Findings: keepFindings(rep.Findings, nil)}
	}
	var stuck []Stuck
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

// TestCycleKeepsWhatPublishingReads: a stuck application's findings are kept
// past planning with each one's resource, path, cause, fix and last writer as
// its diagnosis gave them, in order, with the evidence of those publishing
// shows after planning (left for people, a webhook's); its fight observation
// names the same causes.
func TestCycleKeepsWhatPublishingReads(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var snaps []*drift.Snapshot
	for i, file := range []string{"testdata/cases/21-manual-kubectl-patch.yaml", "testdata/cases/17-webhook-adds-label.yaml", "remediations/testdata/plain-remove-hpa.yaml"} {
		s := corpus.Load(t, file)
		drift.Map(s.Application, "metadata")["name"] = fmt.Sprintf("app%d", i)
		drift.Map(s.Application, "status")["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
		snaps = append(snaps, s)
	}
	srv := argocdtest.NewServer("t", snaps...)
	defer srv.Close()
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*drift.Snapshot{}
	for _, s := range snaps {
		byName[s.AppName()] = s
	}
	in := Instance{Name: "main", Client: c, Cluster: func(s *drift.Snapshot) []drift.Object { return byName[s.AppName()].Cluster }}
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := Cycle(context.Background(), cfg, []Instance{in}, now, CycleOptions{})
	if len(res.Errors) != 0 || len(res.Stuck) != len(snaps) {
		t.Fatalf("errors %v, stuck %d", res.Errors, len(res.Stuck))
	}
	shown := map[bool]bool{} // by whether the finding is left for people
	for _, st := range res.Stuck {
		rep, err := pipeline.Diagnose(byName[st.App.Name], drift.Sensitivity{})
		if err != nil {
			t.Fatal(err)
		}
		if !st.Diagnosed || len(st.Findings) != len(rep.Findings) || len(rep.Findings) == 0 {
			t.Fatalf("%s: kept %d findings (diagnosed %v), the diagnosis has %d", st.App.Name, len(st.Findings), st.Diagnosed, len(rep.Findings))
		}
		for i, f := range rep.Findings {
			k := st.Findings[i]
			want := ""
			if len(f.Owners) > 0 {
				want = f.Owners[len(f.Owners)-1].Manager
			}
			evidence := f.Evidence
			if f.Remediation.Kind != drift.FixNone && f.Cause != drift.CauseWebhookMutation {
				evidence = nil // in its pull request's body
			}
			shown[f.Remediation.Kind == drift.FixNone] = true
			if k.Resource != f.Resource || k.Path != f.Path.String() || k.Cause != f.Cause || k.Fix != f.Remediation.Kind ||
				k.Writer != want || drift.EvidenceText(k.Evidence, "\n") != drift.EvidenceText(evidence, "\n") {
				t.Errorf("%s: kept %+v, diagnosed %s %s %s fix %s writer %q evidence %q", st.App.Name, k, f.Resource, f.Path, f.Cause, f.Remediation.Kind, want, evidence)
			}
		}
		for _, aw := range res.Writes {
			if aw.App == AppKey("main", st.App.Namespace, st.App.Name) && len(aw.Causes) != len(st.Findings) {
				t.Errorf("%s: fights see %d causes, the kept findings are %d", st.App.Name, len(aw.Causes), len(st.Findings))
			}
		}
	}
	if !shown[true] || !shown[false] {
		t.Fatalf("the cases must have findings both fixed and left for people: %v", shown)
	}
}
