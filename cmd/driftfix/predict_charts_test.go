package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/helmrepo/helmrepotest"
)

// TestPredictFetchesCharts runs driftfix predict as a CI step would on a
// change that bumps an Application's chart (a chart repository on
// loopback) into a version whose Deployment declares replicas under its
// own HPA: fetched by default and predicted, kept in --chart-cache, and
// with --offline listed as not predicted because of that flag.
func TestPredictFetchesCharts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  %s\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - {name: web, image: \"nginx:1.27\"}\n"
	hpa := "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 5\n"
	repo := helmrepotest.NewRepo(t,
		helmrepotest.Package(t, "web", "1.0.0", map[string]string{"templates/deploy.yaml": strings.Replace(deploy, "%s", "minReadySeconds: 0", 1), "templates/hpa.yaml": hpa}),
		helmrepotest.Package(t, "web", "1.1.0", map[string]string{"templates/deploy.yaml": strings.Replace(deploy, "%s", "replicas: 3", 1), "templates/hpa.yaml": hpa}))
	dir := t.TempDir()
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source: {repoURL: \"" + repo.URL + "\", chart: web, targetRevision: \"%s\"}\n"
	write := func(v string) {
		if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(strings.Replace(app, "%s", v, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	when := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	gitAt(t, dir, when, "init", "-q", "-b", "main")
	write("1.0.0")
	gitAt(t, dir, when, "add", ".")
	gitAt(t, dir, when, "commit", "-q", "-m", "base")
	write("1.1.*")

	cache := t.TempDir()
	code, out, stderr := runCLI("predict", "--repo", dir, "--base", "main", "--chart-cache", cache, "-o", "json")
	if code != exitDrift {
		t.Fatalf("exit %d, want %d (drift predicted); stderr %s\n%s", code, exitDrift, stderr, out)
	}
	var doc predictDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Predictions) != 1 || doc.Predictions[0].Cause != "hpa-replicas" || doc.Predictions[0].Resource.Name != "web" || len(doc.NotPredicted) != 0 {
		t.Fatalf("predicted:\n%s", out)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 2 { // base's 1.0.0 and head's 1.1.0
		t.Errorf("the chart cache holds %d files, want 2", len(ents))
	}

	code, out, _ = runCLI("predict", "--repo", dir, "--base", "main", "--offline")
	if code != exitClean || !strings.Contains(out, "Not predicted (1):") || !strings.Contains(out, "--offline") {
		t.Fatalf("--offline: exit %d\n%s", code, out)
	}
	// A head that names a new repository fetches nothing from it with
	// --charts-from-base.
	other := helmrepotest.NewRepo(t, helmrepotest.Package(t, "web", "1.1.0", map[string]string{"templates/deploy.yaml": strings.Replace(deploy, "%s", "replicas: 3", 1), "templates/hpa.yaml": hpa}))
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(strings.Replace(strings.Replace(app, "%s", "1.1.0", 1), repo.URL, other.URL, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI("predict", "--repo", dir, "--base", "main", "--chart-cache", "", "--charts-from-base")
	if code != exitClean || other.Requests.Load() != 0 || !strings.Contains(out, "is not named at main") {
		t.Fatalf("--charts-from-base: exit %d, %d requests to the head's repository\n%s", code, other.Requests.Load(), out)
	}
	code, _, stderr = runCLI("predict", "--repo", dir, "--base", "main", "--chart-max-bytes", "0")
	if code != exitUsage || !strings.Contains(stderr, "--chart-max-bytes") {
		t.Fatalf("--chart-max-bytes 0: exit %d, %s", code, stderr)
	}
}
