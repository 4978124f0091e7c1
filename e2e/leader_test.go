//go:build e2e

package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// replica is one `driftfix run --leader-elect` process and its log.
type replica struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder
}

func (r *replica) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.Write(p)
}

func (r *replica) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestLeaderElection runs two replicas with --leader-elect against the real
// kube-apiserver: only the Lease holder cycles; killing it (no clean
// release) hands the Lease to the other within 30 s, whose first cycle finds
// the leader's PR on GitHub and opens no duplicate.
func TestLeaderElection(t *testing.T) {
	s := newStack(t)
	env := newBotEnvWith(t, s, "e2e-leader", "a.db", hpaApp)
	s.kubectl(t, "", "-n", "default", "delete", "lease", "driftfix-e2e", "--ignore-not-found")
	s.hpaDrift(t, "e2e-leader", env.repo)

	start := func(name string) *replica {
		// Each replica has its own state database, as two pods would.
		cfg := filepath.Join(env.dir, name+".yaml")
		raw, err := os.ReadFile(env.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(strings.Replace(string(raw), "/state/a.db", "/state/"+name+".db", 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		r := &replica{name: name}
		r.cmd = exec.Command(env.bin, "run", "--config", cfg, "--listen", freeAddr(t), "--leader-elect",
			"--lease-namespace", "default", "--lease-name", "driftfix-e2e", "--kubeconfig", s.kubeconfig)
		r.cmd.Stdout, r.cmd.Stderr = r, r
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		})
		return r
	}
	a := start("a")
	time.Sleep(3 * time.Second) // let a take the Lease first
	b := start("b")

	waitLog := func(r *replica, want string, within time.Duration) time.Duration {
		t.Helper()
		begin := time.Now()
		for time.Since(begin) < within {
			if strings.Contains(r.text(), want) {
				return time.Since(begin)
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("replica %s never logged %q within %s; log:\n%s", r.name, want, within, r.text())
		return 0
	}
	waitLog(a, `"msg":"cycle done"`, 90*time.Second)
	waitLog(b, `"msg":"another replica leads"`, 30*time.Second)
	if strings.Contains(b.text(), `"msg":"cycle done"`) || strings.Contains(b.text(), `"msg":"leading"`) {
		t.Fatalf("the follower cycled while the leader held the Lease:\n%s", b.text())
	}
	if n := len(env.gh.PullRequests("acme", "e2e-leader")); n != 1 {
		t.Fatalf("the leader's cycle opened %d PRs", n)
	}

	killed := time.Now()
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	waitLog(b, `"msg":"leading"`, 30*time.Second)
	handover := time.Since(killed)
	waitLog(b, `"msg":"cycle done"`, 90*time.Second)
	if n := len(env.gh.PullRequests("acme", "e2e-leader")); n != 1 {
		t.Fatalf("after failover there are %d PRs", n)
	}
	t.Logf("failover: replica b led %s after replica a was killed", handover.Round(100*time.Millisecond))
}
