package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// cacheApp is a multi-source Application: a chart from a Helm repository
// with a value file of the GitOps repository (the $values ref).
const cacheApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: cache, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: cache}
  sources:
  - {repoURL: https://charts.example.com, chart: redis, targetRevision: 1.2.3, helm: {valueFiles: [$values/values/cache.yaml]}}
  - {repoURL: https://git.example.com/shop.git, targetRevision: main, ref: values}
`

// TestPredictWithArgoCDAtHand: with --argocd-server, an application whose
// chart predict cannot fetch is rendered by argocd-server (the manifests
// endpoint, at the base and head commits, for the source of this
// repository) and predicted; without it, it is listed as not predicted,
// needing Argo CD at hand, and nothing reaches the network.
func TestPredictWithArgoCDAtHand(t *testing.T) {
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
	gitAt(t, dir, when, "remote", "add", "origin", "https://git.example.com/shop.git")
	write("apps/cache.yaml", cacheApp)
	write("values/cache.yaml", "replicas: 1\n")
	gitAt(t, dir, when, "add", ".")
	gitAt(t, dir, when, "commit", "-q", "-m", "base")
	gitAt(t, dir, when, "checkout", "-q", "-b", "change")
	write("values/cache.yaml", "replicas: 3\nautoscaling: true\n")
	gitAt(t, dir, when, "commit", "-q", "-am", "autoscale")
	sha := func(rev string) string {
		out, err := exec.Command("git", "-C", dir, "rev-parse", rev).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}

	docs, err := yamledit.Documents([]byte(cacheApp))
	if err != nil || len(docs) != 1 {
		t.Fatalf("parse the Application: %v", err)
	}
	app, _ := docs[0].(map[string]any)
	app["status"] = map[string]any{"sync": map[string]any{"status": "Synced", "revisions": []any{"1.2.3", sha("main")}}}
	srv := argocdtest.NewServer("token", &drift.Snapshot{Application: app})
	t.Cleanup(srv.Close)
	deploy := func(replicas bool) drift.Object {
		spec := map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "cache"}}}
		if replicas {
			spec["replicas"] = int64(3)
		}
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "cache"}, "spec": spec}
	}
	hpa := map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "cache"},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "cache"}, "minReplicas": int64(2), "maxReplicas": int64(4)}}
	// the chart's repository keeps its version; this repository's source is at the commit asked for
	srv.AddRender("argocd", "cache", []string{"1.2.3", sha("main")}, deploy(false))
	srv.AddRender("argocd", "cache", []string{"1.2.3", sha("change")}, deploy(true), hpa)

	t.Setenv("ARGOCD_AUTH_TOKEN", "token")
	t.Setenv("ARGOCD_SERVER", "")
	t.Setenv("ARGOCD_OPTS", "")
	code, out, stderr := runCLI("predict", "--repo", dir, "--base", "main", "--head", "change", "-o", "json", "--argocd-server", srv.URL, "--plaintext")
	if code != exitDrift {
		t.Fatalf("exit %d, want %d: %s\n%s", code, exitDrift, stderr, out)
	}
	var doc struct {
		Applications []string `json:"applications"`
		Predictions  []struct {
			Application, Path, Cause string
		} `json:"predictions"`
		NotPredicted []struct{ Application string } `json:"notPredicted"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Predictions) != 1 || doc.Predictions[0].Application != "cache" || doc.Predictions[0].Path != "/spec/replicas" || doc.Predictions[0].Cause != "hpa-replicas" || len(doc.NotPredicted) != 0 {
		t.Errorf("with Argo CD at hand: %s", out)
	}

	srv.Close() // a run that names no server reaches none
	code, out, stderr = runCLI("predict", "--repo", dir, "--base", "main", "--head", "change", "-o", "json")
	doc.NotPredicted = nil
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if code != exitClean || len(doc.NotPredicted) != 1 || doc.NotPredicted[0].Application != "cache" || !strings.Contains(out, "Argo CD at hand") {
		t.Errorf("without Argo CD: exit %d, %s %s", code, out, stderr)
	}
}
