package remediations_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var now = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// summary renders plans the way a reviewer reads them, diffs included.
func summary(plans []remediations.Plan) string {
	var b strings.Builder
	for _, p := range plans {
		fmt.Fprintf(&b, "== %s for %s (%s)\n", p.Kind, p.Resource, p.Rationale.Cause)
		for _, f := range p.Findings {
			fmt.Fprintf(&b, "fixes %s %s\n", f.Resource, f.Path)
		}
		for _, kv := range [][2]string{{"dropped", p.Dropped}, {"why", p.Rationale.Why}, {"risk", p.Rationale.Risk}, {"undo", p.Rationale.Undo}, {"verified", p.Verification}, {"by hand", p.Instructions}} {
			if kv[1] != "" {
				fmt.Fprintf(&b, "%s: %s\n", kv[0], strings.TrimSpace(kv[1]))
			}
		}
		for _, e := range p.Edits {
			b.WriteString(remediations.UnifiedDiff(e.File, e.Before, e.After))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestPlanGoldens plans the fixes for every scenario in testdata and compares
// the plans and the files after the edits, byte for byte, with the goldens.
// It also applies the edits and plans again: the second run changes nothing.
func TestPlanGoldens(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			snap, err := drift.LoadSnapshot(file)
			if err != nil {
				t.Fatal(err)
			}
			repo := remediations.RepoFromSnapshot(snap)
			_, plans, err := pipeline.Fix(snap, repo, drift.Sensitivity{}, now, render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got := summary(plans)
			goldenDir := filepath.Join("testdata", name+".golden")
			if *update {
				os.RemoveAll(goldenDir)
			}
			check(t, filepath.Join(goldenDir, "plans.txt"), []byte(got))
			after := remediations.Files(plans)
			for _, f := range after {
				check(t, filepath.Join(goldenDir, "after", f.File), f.After)
			}
			if !*update {
				var want []string
				filepath.WalkDir(filepath.Join(goldenDir, "after"), func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						rel, _ := filepath.Rel(filepath.Join(goldenDir, "after"), p)
						want = append(want, filepath.ToSlash(rel))
					}
					return nil
				})
				if len(want) != len(after) {
					t.Errorf("plans change %d files, goldens have %d (%v)", len(after), len(want), want)
				}
			}
			// Apply the edits and plan again: nothing is left to change.
			for _, f := range after {
				repo[f.File] = f.After
			}
			_, again, err := pipeline.Fix(snap, repo, drift.Sensitivity{}, now, render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if second := remediations.Files(again); len(second) != 0 {
				t.Errorf("applying the plans twice changes %s again", second[0].File)
			}
		})
	}
}

func check(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./remediations -update and review the result)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden:\n%s", path, got)
	}
}

// TestNeverIgnoresSensitivePaths tries to make driftfix ignore each sensitive
// path, as if a classifier had asked for it, and checks that no plan does.
func TestNeverIgnoresSensitivePaths(t *testing.T) {
	snap, err := drift.LoadSnapshot("testdata/app-ignore-webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ref := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "orders"}
	paths := []string{
		"/spec/template/spec/containers/0/securityContext",
		"/spec/template/spec/containers/0/securityContext/privileged",
		"/spec/template/spec/containers/0/securityContext/capabilities/add",
		"/spec/template/spec/containers/0/securityContext/allowPrivilegeEscalation",
		"/spec/template/spec/hostNetwork", "/spec/template/spec/hostPID", "/spec/template/spec/hostIPC",
		"/spec/template/spec/volumes/0/hostPath",
		"/spec/template/spec/containers/0/image", "/spec/template/spec/initContainers/0/image",
		"/spec/template/spec/serviceAccountName", "/spec/template/spec/automountServiceAccountToken",
	}
	rep := &drift.Report{Application: "orders"}
	for _, p := range paths {
		rep.Findings = append(rep.Findings, drift.Finding{Resource: ref, Path: drift.MustPointer(p), Cause: drift.CauseWebhookMutation,
			InLive: true, Remediation: drift.Remediation{Kind: drift.FixIgnoreDifference}})
	}
	for _, tc := range []struct{ group, kind, path string }{
		{"rbac.authorization.k8s.io", "ClusterRole", "/rules"}, {"rbac.authorization.k8s.io", "Role", "/rules/0/verbs"},
		{"rbac.authorization.k8s.io", "ClusterRoleBinding", "/subjects"},
		{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "/webhooks/0/clientConfig"},
	} {
		rep.Findings = append(rep.Findings, drift.Finding{Resource: drift.Ref{Group: tc.group, Kind: tc.kind, Name: "n"}, Path: drift.MustPointer(tc.path),
			Cause: drift.CauseControllerWrite, InLive: true, Remediation: drift.Remediation{Kind: drift.FixIgnoreDifference}})
	}
	for _, f := range rep.Findings {
		one := &drift.Report{Application: rep.Application, Findings: []drift.Finding{f}}
		plans := remediations.PlanAll(snap, one, remediations.RepoFromSnapshot(snap), remediations.Options{Now: now,
			Rediagnose: func(s *drift.Snapshot) (*drift.Report, error) { return pipeline.Diagnose(s, drift.Sensitivity{}) }})
		if len(plans) != 1 {
			t.Fatalf("%s %s: %d plans", f.Resource, f.Path, len(plans))
		}
		p := plans[0]
		if len(p.Edits) > 0 || p.Instructions != "" || !strings.Contains(p.Dropped, "never ignores") {
			t.Errorf("%s %s: edits %d, instructions %q, dropped %q", f.Resource, f.Path, len(p.Edits), p.Instructions, p.Dropped)
		}
	}
}
