//go:build e2e

package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRestartGoesOnFromKeptDiagnoses restarts `driftfix run` against the
// real Argo CD and kube-apiserver, one state database for all its runs: a
// run reads back what the last one kept, and once the fix's pull request
// is kept with its head's check, a restarted run's first cycle reuses the
// application's diagnosis instead of reading and diagnosing it again. No
// run opens a second pull request.
func TestRestartGoesOnFromKeptDiagnoses(t *testing.T) {
	s := newStack(t)
	env := newBotEnvWith(t, s, "e2e-restart", "restart.db", hpaApp)
	// Synced by a person, not automatically: an application Argo CD synced
	// automatically within the last hour is diagnosed every cycle, as its
	// count of recent self-heal syncs changes with time alone.
	const name = "e2e-restart"
	s.kubectl(t, "", "-n", "argocd", "delete", "application", name, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "delete", "namespace", name, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "create", "namespace", name)
	s.kubectl(t, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: `+name+`, namespace: argocd}
spec:
  project: default
  source: {repoURL: "`+env.repo+`", path: app, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: `+name+`}
`, "apply", "-f", "-")
	t.Cleanup(func() {
		s.kubectl(t, "", "-n", "argocd", "delete", "application", name, "--ignore-not-found", "--timeout=60s")
		s.kubectl(t, "", "delete", "namespace", name, "--ignore-not-found", "--timeout=60s")
	})
	s.argocdCLI(t, "app", "sync", name)
	s.scaledByHPA(t, name) // the sync created the HPA of Git, which scales the Deployment

	// run starts driftfix, waits for its first cycle and stops it; it
	// returns that cycle's line and the line saying what was read back.
	var last string // the last run's log
	run := func(i int) (done, readBack map[string]any) {
		t.Helper()
		r := &replica{name: "restart"}
		r.cmd = exec.Command(env.bin, "run", "--config", env.cfg, "--listen", freeAddr(t))
		r.cmd.Stdout, r.cmd.Stderr = r, r
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}()
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) && !strings.Contains(r.text(), `"msg":"cycle done"`) {
			time.Sleep(200 * time.Millisecond)
		}
		for _, line := range strings.Split(r.text(), "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) != nil {
				continue
			}
			switch l["msg"] {
			case "cycle done":
				done = l
			case "kept diagnoses read back":
				readBack = l
			}
		}
		if done == nil {
			t.Fatalf("run %d: no cycle within 90 s; log:\n%s", i, r.text())
		}
		if readBack == nil {
			t.Fatalf("run %d: the log does not say what was read back:\n%s", i, r.text())
		}
		if n := len(env.gh.PullRequests("acme", name)); n != 1 {
			t.Fatalf("run %d: %d pull requests, want 1; log:\n%s", i, n, r.text())
		}
		t.Logf("run %d: read back %v, cycle %v", i, readBack["applications"], done)
		last = r.text()
		return done, readBack
	}
	done, readBack := run(1)
	if readBack["applications"] != 0.0 || done["stuck"] != 1.0 || done["reused"] != 0.0 {
		t.Fatalf("first run: read back %v, stuck %v, reused %v; want 0, 1, 0", readBack["applications"], done["stuck"], done["reused"])
	}
	// The second run finds the pull request opened since the diagnosis it
	// read back, and the path it saw differing now watched for fights, so
	// diagnoses again. A later run reuses it, unless the cluster moved
	// meanwhile (a status written, the HPA's included): a few runs are
	// allowed for that.
	for i := 2; i <= 5; i++ {
		done, readBack = run(i)
		if readBack["applications"] != 1.0 {
			t.Fatalf("run %d: %v applications read back, want 1", i, readBack["applications"])
		}
		if i > 2 && done["reused"] == 1.0 {
			return
		}
	}
	t.Fatalf("no restarted run reused the application's diagnosis; the last run's log:\n%s", last)
}
