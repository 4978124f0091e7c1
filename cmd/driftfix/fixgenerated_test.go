package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestFixWritesGeneratingSource: `driftfix fix --repo` on a checkout writes
// the fix where the repository generates it: an ApplicationSet's
// templatePatch for a generated Application, the repository's own patch
// for a field a vendored copy sets (told by the checkout's Makefile); a
// second run writes nothing.
func TestFixWritesGeneratingSource(t *testing.T) {
	cases := []struct {
		snapshot, writes, untouched string
	}{
		{"appset-ignore-templatepatch", "appsets/platform.yaml", "apps/orders/deployment.yaml"},
		{"vendored-upstream-patch", "deploy/web/local.yaml", "deploy/web/upstream.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.snapshot, func(t *testing.T) {
			snap := "../../remediations/testdata/" + tc.snapshot + ".yaml"
			s, err := os.ReadFile(snap)
			if err != nil {
				t.Fatal(err)
			}
			var parsed struct {
				Repo struct{ Files map[string]string } `yaml:"repo"`
			}
			if err := yaml.Unmarshal(s, &parsed); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for f, c := range parsed.Repo.Files {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, stderr := runCLI("fix", "--snapshot", snap, "--repo", dir)
			if code != exitDrift || !strings.Contains(out, "wrote "+filepath.Join(dir, tc.writes)) || strings.Contains(out, "wrote "+filepath.Join(dir, tc.untouched)) {
				t.Fatalf("exit %d, want %s written and %s not:\n%s\n%s", code, tc.writes, tc.untouched, out, stderr)
			}
			code, out, _ = runCLI("fix", "--snapshot", snap, "--repo", dir)
			if strings.Contains(out, "wrote ") {
				t.Fatalf("a second fix run must change nothing (exit %d):\n%s", code, out)
			}
		})
	}
}

// TestFixChartFromCheckout: a snapshot that carries none of the
// repository's files is fixed from the checkout given with --repo, a Helm
// chart told by the checkout's Chart.yaml; the value goes into the values
// file the chart reads.
func TestFixChartFromCheckout(t *testing.T) {
	s, err := os.ReadFile("../../remediations/testdata/helm-set-value.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var parsed map[string]any
	if err := yaml.Unmarshal(s, &parsed); err != nil {
		t.Fatal(err)
	}
	files := parsed["repo"].(map[string]any)["files"].(map[string]any)
	delete(parsed, "repo")
	dir := t.TempDir()
	for f, c := range files {
		p := filepath.Join(dir, "checkout", filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c.(string)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stripped, err := yaml.Marshal(parsed)
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "snapshot.yaml")
	if err := os.WriteFile(snap, stripped, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI("fix", "--snapshot", snap, "--repo", filepath.Join(dir, "checkout"))
	if code != exitDrift || !strings.Contains(out, "wrote "+filepath.Join(dir, "checkout", "charts/cache/values.yaml")) {
		t.Fatalf("exit %d, want the chart's values written:\n%s\n%s", code, out, stderr)
	}
}
