//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// TestSideBySide times, on the real stack, what a user would write to find
// the drifting applications (`argocd app list`, then `argocd app diff` per
// application) against `driftfix scan`, over SIDE_BY_SIDE_APPS auto-synced
// applications (default 120) of which a quarter are changed by hand. Each is
// run three times; both must name the same applications. It prints both
// times and the ratio. It runs only when e2e/stack/sidebyside.sh asks
// (DRIFTFIX_SIDE_BY_SIDE=1): creating the applications takes minutes.
func TestSideBySide(t *testing.T) {
	if os.Getenv("DRIFTFIX_SIDE_BY_SIDE") != "1" {
		t.Skip("run by e2e/stack/sidebyside.sh")
	}
	n := 120
	if v, err := strconv.Atoi(os.Getenv("SIDE_BY_SIDE_APPS")); err == nil && v > 0 {
		n = v
	}
	s := newStack(t)
	dir := t.TempDir()
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: steady, level: \"3\"}\n"
	repo, err := githubtest.NewRepo(dir, "acme", "sbs", map[string]string{"app/settings.yaml": cm})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "driftfix")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/driftfix").CombinedOutput(); err != nil {
		t.Fatalf("build driftfix: %v\n%s", err, out)
	}
	tokenFile := filepath.Join(s.root, "run", "argocd-token")

	name := func(i int) string { return fmt.Sprintf("sbs-%03d", i) }
	var apps strings.Builder
	for i := 0; i < n; i++ {
		s.kubectl(t, "", "create", "namespace", name(i))
		fmt.Fprintf(&apps, `---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s, namespace: argocd}
spec:
  project: default
  source: {repoURL: %q, path: app, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy: {automated: {prune: true}}
`, name(i), repo, name(i))
	}
	t.Cleanup(func() {
		for i := 0; i < n; i++ {
			s.kubectl(t, "", "-n", "argocd", "delete", "application", name(i), "--ignore-not-found", "--wait=false")
			s.kubectl(t, "", "delete", "namespace", name(i), "--ignore-not-found", "--wait=false")
		}
	})
	s.kubectl(t, apps.String(), "apply", "-f", "-")
	s.waitAll(t, n, func(a argocd.AppSummary) bool { return a.SyncStatus == "Synced" && a.OperationPhase == "Succeeded" }, "Synced")

	// A quarter changed by hand: automated sync without self-heal leaves them OutOfSync.
	want := []string{}
	for i := 0; i < n; i += 4 {
		s.kubectl(t, "", "-n", name(i), "patch", "configmap", "settings", "--type=merge", "-p", `{"data":{"mode":"changed-by-hand"}}`)
		want = append(want, name(i))
	}
	s.waitAll(t, len(want), func(a argocd.AppSummary) bool { return a.SyncStatus == "OutOfSync" }, "OutOfSync")

	// The person's loop runs as the admin (argocd app diff needs projects,
	// get, which driftfix's read-only account does not have).
	session, err := os.ReadFile(filepath.Join(s.root, "run", "argocd-admin-session"))
	if err != nil {
		t.Fatalf("the stack has no admin session (an older up.sh?): %v", err)
	}
	home := t.TempDir() // the CLI keeps its config here, not in the user's home
	argo := func(args ...string) (string, int) {
		cmd := exec.Command(filepath.Join(s.root, "bin", "argocd"), append(args, "--server", strings.TrimPrefix(argoURL, "http://"), "--plaintext", "--auth-token", strings.TrimSpace(string(session)))...)
		cmd.Env = append(os.Environ(), "HOME="+home)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("argocd %v: %v", args, err)
		}
		return out.String(), cmd.ProcessState.ExitCode()
	}
	userLoop := func() []string {
		list, code := argo("app", "list", "-o", "name")
		if code != 0 {
			t.Fatalf("argocd app list: exit %d\n%s", code, list)
		}
		var drifting []string
		for _, app := range strings.Fields(list) {
			app = strings.TrimPrefix(app, "argocd/")
			if !strings.HasPrefix(app, "sbs-") {
				continue
			}
			// exit 1: the live state differs from Git; 0: it does not
			switch out, code := argo("app", "diff", app); code {
			case 0:
			case 1:
				drifting = append(drifting, app)
			default:
				t.Fatalf("argocd app diff %s: exit %d\n%s", app, code, out)
			}
		}
		return drifting
	}
	scan := func() []string {
		cmd := exec.Command(bin, "scan", "--argocd-server", argoURL, "--plaintext", "--argocd-token-file", tokenFile, "--kubeconfig", s.kubeconfig, "--stuck-after", "0s", "--format", "json")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() > 1 {
			t.Fatalf("driftfix scan: %v\n%s", err, errb.String())
		}
		var res struct {
			Stuck []struct{ Application string } `json:"stuck"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("driftfix scan output: %v\n%s", err, out.String())
		}
		var names []string
		for _, r := range res.Stuck {
			if strings.HasPrefix(r.Application, "sbs-") {
				names = append(names, r.Application)
			}
		}
		return names
	}
	var ratios []float64
	for round := 1; round <= 3; round++ {
		t0 := time.Now()
		byUser := userLoop()
		user := time.Since(t0)
		t1 := time.Now()
		byScan := scan()
		df := time.Since(t1)
		slices.Sort(byUser)
		slices.Sort(byScan)
		if !slices.Equal(byUser, want) || !slices.Equal(byScan, want) {
			t.Fatalf("round %d: the applications differ:\n  changed by hand: %v\n  argocd app diff: %v\n  driftfix scan:   %v", round, want, byUser, byScan)
		}
		ratios = append(ratios, user.Seconds()/df.Seconds())
		fmt.Printf("side by side, round %d, %d applications, %d drifting: argocd app list + app diff %.2fs, driftfix scan %.2fs, ratio %.1fx\n",
			round, n, len(want), user.Seconds(), df.Seconds(), ratios[len(ratios)-1])
	}
	slices.Sort(ratios)
	fmt.Printf("side by side: median ratio %.1fx over 3 rounds (%d applications)\n", ratios[1], n)
}

// waitAll waits until at least want sbs- applications satisfy ok.
func (s *stack) waitAll(t *testing.T, want int, ok func(argocd.AppSummary) bool, what string) {
	t.Helper()
	got := 0
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		apps, err := s.argo.ListApplications(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got = 0
		for _, a := range apps {
			if strings.HasPrefix(a.Name, "sbs-") && ok(a) {
				got++
			}
		}
		if got >= want {
			return
		}
	}
	t.Fatalf("only %d of %d applications became %s", got, want, what)
}
