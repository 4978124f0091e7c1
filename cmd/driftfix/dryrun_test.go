package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/kube/kubetest"
)

// TestSnapshotDryRunEvidence: with --dry-run-evidence the snapshot carries
// what the API server answered to a dry-run apply of the differing
// resource's Git manifest; without it nothing is sent to the API server.
func TestSnapshotDryRunEvidence(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	s, err := drift.LoadSnapshot("../../testdata/cases/01-hpa-statefulset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	drift.Map(s.Application, "spec", "source")["repoURL"] = "file:///nonexistent/queue.git"
	drift.Map(s.Application, "status")["resources"] = []any{
		map[string]any{"group": "apps", "kind": "StatefulSet", "namespace": "jobs", "name": "queue", "status": "OutOfSync"}}
	srv := argocdtest.NewServer(liveToken, s)
	defer srv.Close()
	ks := kubetest.NewServer(s.Cluster)
	defer ks.Close()
	ks.DryRun = func(o drift.Object, _ string) (drift.Object, error) {
		out := drift.DeepCopy(o).(map[string]any)
		drift.Map(out, "spec")["podManagementPolicy"] = "OrderedReady" // a default the API server fills
		return out, nil
	}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(tokenFile, []byte(liveToken), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: fake, cluster: {server: "+ks.URL+"}}]\n"+
		"users: [{name: u, user: {token: kube-token}}]\ncontexts: [{name: c, context: {cluster: fake, user: u}}]\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"snapshot", "queue", "--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--kubeconfig", kubeconfig, "--repo-files=false", "--renders=false"}
	plain := filepath.Join(dir, "plain.json")
	if code, _, stderr := runCLI(append(args, "-f", plain)...); code != exitClean {
		t.Fatalf("snapshot: exit %d, %s", code, stderr)
	}
	if n := len(ks.Patches()); n != 0 {
		t.Fatalf("without --dry-run-evidence, %d dry-runs were sent", n)
	}
	withEvidence := filepath.Join(dir, "evidence.json")
	if code, _, stderr := runCLI(append(args, "-f", withEvidence, "--dry-run-evidence")...); code != exitClean {
		t.Fatalf("snapshot --dry-run-evidence: exit %d, %s", code, stderr)
	}
	got, err := drift.LoadSnapshot(withEvidence)
	if err != nil {
		t.Fatal(err)
	}
	if p := ks.Patches(); len(p) != 1 || p[0].Path != "/apis/apps/v1/namespaces/jobs/statefulsets/queue" || p[0].Query.Get("dryRun") != "All" {
		t.Fatalf("dry-runs sent: %+v", p)
	}
	if len(got.Resources) == 0 || drift.Str(got.Resources[0].DryRun, "spec", "podManagementPolicy") != "OrderedReady" {
		t.Fatalf("snapshot has no dry-run evidence: %+v", got.Resources)
	}
	if raw, _ := os.ReadFile(plain); strings.Contains(string(raw), `"dryRun"`) {
		t.Fatal("a snapshot without --dry-run-evidence has a dryRun field")
	}
}
