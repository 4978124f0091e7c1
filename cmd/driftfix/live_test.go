package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/kube/kubetest"
)

const liveToken = "tok-3f9a1c-do-not-log"

// liveServer serves two applications: one OutOfSync for an hour after a
// successful sync (stuck), one that went OutOfSync a minute after its sync (a
// passing scale event), and one Synced.
func liveServer(t *testing.T, now time.Time) (*argocdtest.Server, string) {
	t.Helper()
	load := func(file, phase string, finished time.Time, sync string) *drift.Snapshot {
		s, err := drift.LoadSnapshot("../../testdata/cases/" + file)
		if err != nil {
			t.Fatal(err)
		}
		// A local repository URL: tests never reach for the network.
		drift.Map(s.Application, "spec", "source")["repoURL"] = "file:///nonexistent/" + file + ".git"
		st := drift.Map(s.Application, "status")
		st["sync"] = map[string]any{"status": sync}
		st["operationState"] = map[string]any{"phase": phase, "startedAt": finished.Add(-5 * time.Second).Format(time.RFC3339), "finishedAt": finished.Format(time.RFC3339)}
		return s
	}
	stuck := load("01-hpa-statefulset.yaml", "Succeeded", now.Add(-time.Hour), "OutOfSync")
	passing := load("21-manual-kubectl-patch.yaml", "Succeeded", now.Add(-time.Minute), "OutOfSync")
	synced := load("11-builtin-quantity-hidden.yaml", "Succeeded", now.Add(-time.Hour), "Synced")
	srv := argocdtest.NewServer(liveToken, stuck, passing, synced)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(liveToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var objs []drift.Object
	for _, s := range []*drift.Snapshot{stuck, passing, synced} {
		objs = append(objs, s.Cluster...)
	}
	ks := kubetest.NewServer(objs)
	t.Cleanup(ks.Close)
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: fake, cluster: {server: " + ks.URL + "}}]\n" +
		"users: [{name: u, user: {token: kube-token}}]\ncontexts: [{name: c, context: {cluster: fake, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, tokenFile
}

func TestScanFindsOnlyStuckApplications(t *testing.T) {
	now := time.Now()
	srv, tokenFile := liveServer(t, now)
	var out, errb strings.Builder
	code, err := cmdScan(context.Background(), []string{"--argocd-server", srv.URL, "--argocd-token-file", tokenFile, "--kubeconfig", filepath.Join(filepath.Dir(tokenFile), "kubeconfig"), "--format", "json"}, &out, &errb, now)
	if err != nil || code != exitDrift {
		t.Fatalf("scan: exit %d, %v, %s", code, err, errb.String())
	}
	var res struct {
		Scanned int `json:"scanned"`
		Stuck   []struct {
			Application string         `json:"application"`
			Causes      map[string]int `json:"causes"`
		} `json:"stuck"`
	}
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		t.Fatal(err)
	}
	if res.Scanned != 3 || len(res.Stuck) != 1 || res.Stuck[0].Application != "queue" || res.Stuck[0].Causes["hpa-replicas"] != 1 {
		t.Fatalf("scan result: %s", out.String())
	}
	if strings.Contains(out.String()+errb.String(), liveToken) {
		t.Fatal("the token appeared in the output")
	}
}

func TestLiveDiagnoseAndSnapshot(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	srv, tokenFile := liveServer(t, time.Now())
	args := []string{"--argocd-server", srv.URL, "--argocd-token-file", tokenFile, "--kubeconfig", filepath.Join(filepath.Dir(tokenFile), "kubeconfig"), "--repo-files=false"}
	code, out, stderr := runCLI(append([]string{"diagnose", "queue", "--format", "json"}, args...)...)
	if code != exitDrift || !strings.Contains(out, `"cause": "hpa-replicas"`) {
		t.Fatalf("live diagnose: exit %d\n%s\n%s", code, out, stderr)
	}
	file := filepath.Join(t.TempDir(), "queue.json")
	if code, _, stderr := runCLI(append([]string{"snapshot", "queue", "-o", file}, args...)...); code != exitClean {
		t.Fatalf("snapshot: exit %d, %s", code, stderr)
	}
	code, offline, _ := runCLI("diagnose", "--snapshot", file, "--format", "json")
	if code != exitDrift || offline != out {
		t.Fatalf("the written snapshot diagnoses differently offline:\n%s\nlive:\n%s", offline, out)
	}
	if raw, _ := os.ReadFile(file); strings.Contains(string(raw), liveToken) {
		t.Fatal("the token was written into the snapshot")
	}
	code, _, stderr = runCLI("diagnose", "queue", "--argocd-server", srv.URL, "--no-kube", "--repo-files=false")
	if code != exitUsage || !strings.Contains(stderr, "token") || strings.Contains(stderr, liveToken) {
		t.Fatalf("diagnose without a token: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(append([]string{"diagnose", "nope"}, args...)...)
	if code != exitUsage || !strings.Contains(stderr, "404") {
		t.Fatalf("unknown app: exit %d, %s", code, stderr)
	}
}

func TestOnceDryRun(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	now := time.Now()
	srv, tokenFile := liveServer(t, now)
	dir := filepath.Dir(tokenFile)
	cfg := filepath.Join(dir, "driftfix.yaml")
	if err := os.WriteFile(cfg, []byte("argocd:\n  - name: test\n    server: "+srv.URL+"\n    tokenFile: "+tokenFile+"\n    kubeconfig: "+filepath.Join(dir, "kubeconfig")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	code, err := cmdOnce(context.Background(), []string{"--config", cfg}, &out, &errb, now)
	if code != exitUsage || err == nil || !strings.Contains(err.Error(), "--dry-run") {
		t.Fatalf("without --dry-run: exit %d, %v", code, err)
	}
	code, err = cmdOnce(context.Background(), []string{"--config", cfg, "--dry-run"}, &out, &errb, now)
	if err != nil || code != exitDrift {
		t.Fatalf("exit %d, %v\n%s", code, err, errb.String())
	}
	text := out.String()
	if !strings.Contains(errb.String(), "file:///nonexistent/") {
		t.Errorf("the unreadable repository was not reported: %s", errb.String())
	}
	for _, want := range []string{"3 applications scanned, 1 stuck", "== Slack digest", "Newly stuck OutOfSync"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text+errb.String(), liveToken) {
		t.Fatal("the token appeared in the output")
	}
}
