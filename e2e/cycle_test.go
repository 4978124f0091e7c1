//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/slack/slacktest"
)

// botEnv is what a driftfix process needs around the real stack: GitHub
// emulated over a bare repository Argo CD reads, Slack, secrets in files,
// a policy file, and the driftfix binary.
type botEnv struct {
	dir, bin, cfg, repo string
	gh                  *githubtest.Server
	sl                  *slacktest.Server
}

const e2eSlackToken = "xoxb-e2e-cycle-token"

func newBotEnv(t *testing.T, s *stack, repoName, stateName string) *botEnv {
	t.Helper()
	return newBotEnvWith(t, s, repoName, stateName, map[string]string{"app/deployment.yaml": deployment})
}

// newBotEnvWith is newBotEnv over a repository holding files on main.
func newBotEnvWith(t *testing.T, s *stack, repoName, stateName string, files map[string]string) *botEnv {
	t.Helper()
	dir := t.TempDir()
	repo, err := githubtest.NewRepo(dir, "acme", repoName, files)
	if err != nil {
		t.Fatal(err)
	}
	gh, err := githubtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	if err := gh.AddRepo(dir, "acme", repoName); err != nil {
		t.Fatal(err)
	}
	sl := slacktest.NewServer(e2eSlackToken)
	t.Cleanup(sl.Close)
	bin := filepath.Join(dir, "driftfix")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/driftfix").CombinedOutput(); err != nil {
		t.Fatalf("build driftfix: %v\n%s", err, out)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := write("app.pem", string(gh.PrivateKeyPEM))
	slackFile := write("slack-token", e2eSlackToken+"\n")
	cfg := write("driftfix.yaml", `stateFile: `+filepath.Join(dir, "state", stateName)+`
argocd:
  - name: e2e
    server: `+argoURL+`
    insecurePlaintext: true # the stack's argocd-server listens on loopback without TLS
    tokenFile: `+filepath.Join(s.root, "run", "argocd-token")+`
    kubeconfig: `+s.kubeconfig+`
github: {appID: `+strconv.FormatInt(gh.AppID, 10)+`, privateKeyFile: `+key+`, baseURL: "`+gh.API+`"}
slack: {tokenFile: `+slackFile+`, channel: "#e2e", apiURL: "`+sl.URL+`"}
policy: {stuckAfter: 1s, minStuckFor: 0s, labels: [driftfix]}
`)
	return &botEnv{dir: dir, bin: bin, cfg: cfg, repo: repo, gh: gh, sl: sl}
}

// hpaApp is an application's Git whose Deployment web declares replicas 2
// beside the HorizontalPodAutoscaler that scales it, part of the same
// desired state: Argo CD syncs both and the autoscaler's minimum of 4
// takes the replica count Git declares. The HPA is in Git, as a team that
// autoscales keeps it; one only in the cluster, which anyone who may write
// to the namespace can create, proves nothing and gets no fix.
var hpaApp = map[string]string{"app/deployment.yaml": deployment, "app/hpa.yaml": hpaManifest}

const hpaManifest = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 4
  maxReplicas: 6
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
`

// hpaDrift deploys the application, whose repository is hpaApp's, and
// waits until its HPA owns the replicas.
func (s *stack) hpaDrift(t *testing.T, name, repo string) {
	t.Helper()
	s.kubectl(t, "", "-n", "argocd", "delete", "application", name, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "delete", "namespace", name, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "create", "namespace", name)
	// Not waiting for Synced: the HPA may scale the Deployment before Argo
	// CD reports the sync, and the application is never Synced again.
	s.applicationIn(t, name, repo, "app", name, "", false)
	s.scaledByHPA(t, name)
}

// scaledByHPA waits until the HPA of Git has scaled the application's
// Deployment web (in the namespace of the application's name) to its
// minimum and the application is stuck OutOfSync after a successful sync.
func (s *stack) scaledByHPA(t *testing.T, name string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		out := s.kubectl(t, "", "-n", name, "get", "deployment", "web", "--ignore-not-found", "-o", "jsonpath={.spec.replicas}")
		if out == "4" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the HPA of Git never scaled deployment %s/web to 4 (replicas %q):\n%s", name, out,
				s.kubectl(t, "", "-n", name, "get", "hpa", "-o", "yaml"))
		}
	}
	s.waitFor(t, name, func(a argocd.AppSummary) bool { return a.SyncStatus == "OutOfSync" && a.OperationPhase == "Succeeded" },
		"OutOfSync after a successful sync, the HPA having scaled it")
	time.Sleep(2 * time.Second) // past stuckAfter
}

// TestFullCycle runs the driftfix binary as a platform would (`driftfix
// once` with a policy file, a GitHub App key and a Slack token in files)
// against the real Argo CD and API server, with GitHub emulated over the very
// repository Argo CD reads: the first cycle opens a PR removing replicas an
// HPA owns; once a person merges it, a later cycle finds the application
// Synced and the digest says so.
func TestFullCycle(t *testing.T) {
	s := newStack(t)
	env := newBotEnvWith(t, s, "e2e-cycle", "driftfix.db", hpaApp)
	gh, sl, bin, cfg := env.gh, env.sl, env.bin, env.cfg
	const slackToken = e2eSlackToken
	once := func() string {
		t.Helper()
		cmd := exec.Command(bin, "once", "--config", cfg)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
			t.Fatalf("driftfix once: %v\n%s\n%s", err, out.String(), errb.String())
		}
		for _, secret := range []string{s.token, slackToken, "PRIVATE KEY"} {
			if strings.Contains(out.String()+errb.String(), strings.TrimSpace(secret)) {
				t.Fatal("a secret appeared in driftfix's output")
			}
		}
		return out.String()
	}

	s.hpaDrift(t, "e2e-cycle", env.repo)

	out := once()
	prs := gh.PullRequests("acme", "e2e-cycle")
	if len(prs) != 1 || !strings.Contains(out, "opened: acme/e2e-cycle#1") {
		t.Fatalf("the first cycle must open one PR; PRs %+v\n%s", prs, out)
	}
	fixed, err := gh.File("acme", "e2e-cycle", prs[0].Head, "app/deployment.yaml")
	if err != nil || strings.Contains(fixed, "replicas") {
		t.Fatalf("the PR's branch must drop replicas: %v\n%s", err, fixed)
	}
	head := gh.Head("acme", "e2e-cycle", prs[0].Head)
	if runs := gh.CheckRuns("acme", "e2e-cycle", head); len(runs) != 1 || runs[0].Name != "driftfix/verify" || runs[0].Conclusion != "success" {
		t.Fatalf("the PR's head must carry a passing driftfix/verify check: %+v", runs)
	}
	if out := once(); strings.Contains(out, "opened:") || len(gh.PullRequests("acme", "e2e-cycle")) != 1 {
		t.Fatalf("a second cycle must not open another PR:\n%s", out)
	}
	// The second cycle renders the head's own files and diagnoses them
	// against the real live state: the check still passes, now said of the commit.
	runs := gh.CheckRuns("acme", "e2e-cycle", head)
	if len(runs) != 1 || runs[0].Conclusion != "success" || !strings.Contains(runs[0].Summary, "from commit") || !strings.Contains(runs[0].Text, "| fixed |") {
		t.Fatalf("the head's own check must pass: %+v", runs)
	}

	if err := gh.Merge("acme", "e2e-cycle", prs[0].Number); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(3 * time.Second) {
		all.WriteString(once())
		if strings.Contains(all.String(), "fixed (Synced again): acme/e2e-cycle#1") {
			break
		}
	}
	if !strings.Contains(all.String(), "merged: acme/e2e-cycle#1") || !strings.Contains(all.String(), "fixed (Synced again): acme/e2e-cycle#1") {
		t.Fatalf("after the merge driftfix must report the PR merged and the app Synced:\n%s", all.String())
	}
	s.waitFor(t, "e2e-cycle", func(a argocd.AppSummary) bool { return a.SyncStatus == "Synced" }, "Synced after the merge")
	if cs := gh.Comments("acme", "e2e-cycle", prs[0].Number); len(cs) != 1 || !strings.Contains(cs[0].Body, "is Synced") {
		t.Fatalf("the merged PR must get one comment saying the application is Synced: %+v", cs)
	}
	posts := sl.Posts()
	if len(posts) == 0 || !strings.Contains(posts[len(posts)-1]["attachments"], "Synced again") {
		t.Fatalf("the last digest must say the app is Synced again: %+v", posts)
	}
}
