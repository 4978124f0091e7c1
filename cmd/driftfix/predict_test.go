package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// predictRepo makes a Git repository with a plain-directory application on
// main, and in the work tree a change that adds an HPA over a Deployment
// declaring replicas; it returns the directory.
func predictRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	when := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	gitAt(t, dir, when, "init", "-q", "-b", "main")
	write("apps/web.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source: {repoURL: https://git.example.com/shop.git, path: apps/web, targetRevision: main}\n")
	write("apps/web/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - {name: web, image: \"nginx:1.27\"}\n")
	gitAt(t, dir, when, "add", ".")
	gitAt(t, dir, when, "commit", "-q", "-m", "base")
	write("apps/web/hpa.yaml", "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 5\n")
	return dir
}

// TestPredictCommand runs driftfix predict on a real repository: the work
// tree's change predicted in each format with exit code 1, a committed head
// and HEAD as base with 0, and every bad input refused with exit code 2 and
// an error that names it.
func TestPredictCommand(t *testing.T) {
	dir := predictRepo(t)
	code, out, stderr := runCLI("predict", "--repo", dir, "--base", "main", "-o", "json")
	if code != exitDrift {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitDrift, stderr)
	}
	var doc struct {
		Applications []string `json:"applications"`
		Predictions  []struct {
			File     string            `json:"file"`
			Line     int               `json:"line"`
			Resource map[string]string `json:"resource"`
			Path     string            `json:"path"`
			Cause    string            `json:"cause"`
			Fix      string            `json:"fix"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(doc.Predictions) != 1 {
		t.Fatalf("predictions: %s", out)
	}
	p := doc.Predictions[0]
	if p.File != "apps/web/deploy.yaml" || p.Line != 6 || p.Resource["kind"] != "Deployment" || p.Resource["name"] != "web" ||
		p.Path != "/spec/replicas" || p.Cause != "hpa-replicas" || p.Fix != "remove-field" {
		t.Errorf("prediction: %+v", p)
	}

	code, out, _ = runCLI("predict", "--repo", dir, "--base", "main")
	if code != exitDrift || !strings.Contains(out, "1 field will differ after sync") || !strings.Contains(out, "apps/web/deploy.yaml:6") {
		t.Errorf("text: exit %d\n%s", code, out)
	}

	code, out, _ = runCLI("predict", "--repo", dir, "--base", "main", "-o", "sarif")
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || code != exitDrift {
		t.Fatalf("sarif: exit %d, %v\n%s", code, err, out)
	}
	if sarif.Version != "2.1.0" || len(sarif.Runs) != 1 || sarif.Runs[0].Tool.Driver.Name != "driftfix" || len(sarif.Runs[0].Tool.Driver.Rules) != 1 ||
		len(sarif.Runs[0].Results) != 1 || sarif.Runs[0].Results[0].RuleID != "hpa-replicas" ||
		sarif.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != "apps/web/deploy.yaml" ||
		sarif.Runs[0].Results[0].Locations[0].PhysicalLocation.Region.StartLine != 6 {
		t.Errorf("sarif:\n%s", out)
	}

	// Committed, the change is the head of HEAD~1..HEAD; HEAD against itself adds nothing.
	when := time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC)
	gitAt(t, dir, when, "add", ".")
	gitAt(t, dir, when, "commit", "-q", "-m", "hpa")
	if code, out, stderr := runCLI("predict", "--repo", dir, "--base", "HEAD~1", "--head", "HEAD", "-o", "json"); code != exitDrift || !strings.Contains(out, "hpa-replicas") {
		t.Errorf("HEAD~1..HEAD: exit %d\n%s\n%s", code, out, stderr)
	}
	if code, out, stderr := runCLI("predict", "--repo", dir, "--base", "HEAD"); code != exitClean || !strings.Contains(out, "nothing to predict") {
		t.Errorf("HEAD..work tree: exit %d\n%s\n%s", code, out, stderr)
	}
	if code, out, stderr := runCLI("predict", "--repo", dir, "--base", "HEAD", "--all"); code != exitDrift || !strings.Contains(out, "predicted at head") {
		t.Errorf("--all: exit %d\n%s\n%s", code, out, stderr)
	}

	notRepo := t.TempDir()
	badCluster := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(badCluster, []byte("- {kind: Namespace, metadata: {name: x}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--base", "main"}, "--repo DIR is required"},
		{[]string{"predict", "--repo", dir}, "--base REV is required"},
		{[]string{"predict", "--repo", dir, "--base", "nosuch"}, "--base nosuch: no such revision"},
		{[]string{"predict", "--repo", dir, "--base", "main", "--head", "nosuch"}, "--head nosuch: no such revision"},
		{[]string{"predict", "--repo", filepath.Join(dir, "nosuch"), "--base", "main"}, "not a directory"},
		{[]string{"predict", "--repo", notRepo, "--base", "main"}, "not a Git repository"},
		{[]string{"predict", "--repo", dir, "--base", "main", "-o", "xml"}, `-o "xml"`},
		{[]string{"predict", "--repo", dir, "--base", "main", "--cluster", "/nonexistent/c.yaml"}, "--cluster /nonexistent/c.yaml"},
		{[]string{"predict", "--repo", dir, "--base", "main", "--cluster", badCluster}, "line 1: object 0 has no apiVersion"},
		{[]string{"predict", "--repo", dir, "--base", "main", "--app", "apps/nosuch"}, "--app apps/nosuch: no such file or directory"},
		{[]string{"predict", "--repo", dir, "--base", "main", "--app", "apps/web/deploy.yaml"}, "holds no Argo CD Application"},
		{[]string{"predict", "--repo", dir, "--base", "main", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	// --app with a directory: an Application is made for it.
	if code, out, stderr := runCLI("predict", "--repo", dir, "--base", "HEAD~1", "--head", "HEAD", "--app", "apps/web"); code != exitDrift || !strings.Contains(out, "hpa-replicas") {
		t.Errorf("--app apps/web: exit %d\n%s\n%s", code, out, stderr)
	}
	// A repository without any Application manifest.
	empty := t.TempDir()
	gitAt(t, empty, when, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(empty, "x.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitAt(t, empty, when, "add", ".")
	gitAt(t, empty, when, "commit", "-q", "-m", "x")
	if code, _, stderr := runCLI("predict", "--repo", empty, "--base", "main"); code != exitUsage || !strings.Contains(stderr, "no Argo CD Application manifest") {
		t.Errorf("no application: exit %d, %s", code, stderr)
	}
}
