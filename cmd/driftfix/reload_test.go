package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// configMapDir lays a policy out as the kubelet mounts a ConfigMap: the
// file is a link through ..data to a timestamped directory, and an update
// swaps ..data in one rename.
type configMapDir struct {
	t   *testing.T
	dir string
	n   int
}

func (c *configMapDir) write(content string) {
	c.t.Helper()
	c.n++
	data := filepath.Join(c.dir, fmt.Sprintf("..2026_12_07_%02d", c.n))
	if err := os.Mkdir(data, 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "driftfix.yaml"), []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
	tmp := filepath.Join(c.dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(data), tmp); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "..data")); err != nil {
		c.t.Fatal(err)
	}
	if c.n == 1 {
		if err := os.Symlink("..data/driftfix.yaml", filepath.Join(c.dir, "driftfix.yaml")); err != nil {
			c.t.Fatal(err)
		}
	}
}

// TestPolicyChangeOnARunningProcess: a running driftfix run takes a changed
// policy file (a ConfigMap's swap) without a restart: an invalid change is
// refused, logged with its line and key, counted in driftfix_policy_invalid
// while the old policy keeps working; a valid change (going live: dryRun
// false) is taken at the next unit of work, and the gauge falls back to 0.
func TestPolicyChangeOnARunningProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts driftfix as a process")
	}
	srv, tokenFile := liveServer(t, time.Now())
	work := t.TempDir()
	base := readFile(t, writePolicy(t, work, "", argoEntry{"test", srv.URL, tokenFile, ""}))
	cm := &configMapDir{t: t, dir: t.TempDir()}
	cm.write("dryRun: true\n" + base)
	addr := freeAddr(t)
	p := startDriftfix(t, "run", "--config", filepath.Join(cm.dir, "driftfix.yaml"), "--listen", addr, "--policy-check", "100ms")
	scrape := func() string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitFor(t, "the first cycle", 30*time.Second, p, func() bool { return strings.Contains(p.stderr.String(), `"msg":"cycle done"`) })

	cm.write("dryRun: true\nschedule: every now and then\n" + base)
	waitFor(t, "the invalid change counted", 10*time.Second, p, func() bool {
		v, _ := metric(scrape(), "driftfix_policy_invalid")
		return v == 1
	})
	log := p.stderr.String()
	if !strings.Contains(log, `"msg":"changed policy refused: the policy in use stays"`) || !strings.Contains(log, `"key":"schedule"`) || !strings.Contains(log, `"line":2`) {
		t.Errorf("the refusal does not name the key and line:\n%s", log)
	}
	if code, body := get(t, "http://"+addr+"/readyz"); code != http.StatusOK {
		t.Errorf("refusing a change made the bot unready: %d %s", code, body)
	}

	cm.write("dryRun: false\n" + base)
	waitFor(t, "the valid change taken", 10*time.Second, p, func() bool {
		return strings.Contains(p.stderr.String(), `"msg":"policy changed: the new one is used from now on","dry_run":false`)
	})
	m := scrape()
	if v, _ := metric(m, "driftfix_policy_invalid"); v != 0 {
		t.Errorf("driftfix_policy_invalid %v after a valid change, want 0", v)
	}
	if v, _ := metric(m, `driftfix_policy_reloads_total{result="applied"}`); v != 1 {
		t.Errorf(`driftfix_policy_reloads_total{result="applied"} %v, want 1`, v)
	}
	if v, _ := metric(m, `driftfix_policy_reloads_total{result="invalid"}`); v != 1 {
		t.Errorf(`driftfix_policy_reloads_total{result="invalid"} %v, want 1 (refused once, not at every check)`, v)
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("exit: %v; log:\n%s", err, p.stderr.String())
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWebhookReceiverOfRun: run serves GitHub's deliveries on
// --webhook-listen only with a webhook secret: a signed ping is
// acknowledged, an unsigned delivery refused with 401; /metrics counts both.
func TestWebhookReceiverOfRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts driftfix as a process")
	}
	srv, tokenFile := liveServer(t, time.Now())
	dir := t.TempDir()
	cfg := writePolicy(t, dir, "dryRun: true\n", argoEntry{"test", srv.URL, tokenFile, ""})
	secretFile := filepath.Join(dir, "github-webhook-secret")
	if err := os.WriteFile(secretFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, hook := freeAddr(t), freeAddr(t)
	p := startDriftfix(t, "run", "--config", cfg, "--listen", addr, "--webhook-secret-file", secretFile, "--webhook-listen", hook)
	post := func(secret string) (int, string) {
		body := []byte(`{"zen":"Design for failure.","hook_id":1}`)
		req, _ := http.NewRequest(http.MethodPost, "http://"+hook+"/webhook", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "ping")
		req.Header.Set("X-GitHub-Delivery", "ping-"+secret)
		if secret != "" {
			req.Header.Set("X-Hub-Signature-256", sign(secret, body))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor(t, "the receiver", 20*time.Second, p, func() bool { code, _ := post("s3cret"); return code != 0 })
	if code, body := post("s3cret"); code != http.StatusAccepted || !strings.Contains(body, "ping") {
		t.Errorf("signed ping: %d %q", code, body)
	}
	if code, body := post(""); code != http.StatusUnauthorized {
		t.Errorf("unsigned delivery: %d %q", code, body)
	}
	_, m := get(t, "http://"+addr+"/metrics")
	if v, _ := metric(m, `driftfix_webhook_deliveries_total{event="ping",outcome="unsigned"}`); v != 1 {
		t.Errorf("unsigned deliveries counted %v, want 1", v)
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("exit: %v; log:\n%s", err, p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), "s3cret") {
		t.Error("the webhook secret appeared in the log")
	}
}

func sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// TestScheduleChangeOnARunningProcess: a running driftfix run whose policy
// file changes its schedule waits for the new schedule's next tick, and
// says so; a schedule cron cannot read (a step of zero) is refused at
// reload with its key and line, and the schedule in use keeps running.
func TestScheduleChangeOnARunningProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts driftfix as a process")
	}
	srv, tokenFile := liveServer(t, time.Now())
	work := t.TempDir()
	base := readFile(t, writePolicy(t, work, "", argoEntry{"test", srv.URL, tokenFile, ""}))
	cm := &configMapDir{t: t, dir: t.TempDir()}
	cm.write("dryRun: true\nschedule: '0 0 1 1 *'\n" + base)
	p := startDriftfix(t, "run", "--config", filepath.Join(cm.dir, "driftfix.yaml"), "--listen", freeAddr(t), "--policy-check", "100ms")
	waitFor(t, "the first cycle", 30*time.Second, p, func() bool { return strings.Contains(p.stderr.String(), `"msg":"cycle done"`) })

	cm.write("dryRun: true\nschedule: '*/0 * * * *'\n" + base)
	waitFor(t, "the refusal", 10*time.Second, p, func() bool {
		return strings.Contains(p.stderr.String(), `"msg":"changed policy refused: the policy in use stays"`)
	})
	log := p.stderr.String()
	if !strings.Contains(log, `"key":"schedule"`) || !strings.Contains(log, `"line":2`) {
		t.Errorf("the refusal does not name the key and line:\n%s", log)
	}
	if strings.Contains(log, `"msg":"schedule changed"`) {
		t.Errorf("a refused schedule was taken:\n%s", log)
	}

	cm.write("dryRun: true\nschedule: '*/5 * * * *'\n" + base)
	var change struct{ From, To, Next string }
	waitFor(t, "the schedule change", 10*time.Second, p, func() bool {
		for _, line := range strings.Split(p.stderr.String(), "\n") {
			var l struct {
				Msg  string `json:"msg"`
				From string `json:"from"`
				To   string `json:"to"`
				Next string `json:"next_cycle"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "schedule changed" {
				change.From, change.To, change.Next = l.From, l.To, l.Next
				return true
			}
		}
		return false
	})
	if change.From != "0 0 1 1 *" || change.To != "*/5 * * * *" {
		t.Errorf("schedule changed from %q to %q, want from the old to the new", change.From, change.To)
	}
	next, err := time.Parse(time.RFC3339, change.Next)
	if err != nil {
		t.Fatalf("next cycle %q: %v", change.Next, err)
	}
	if until := time.Until(next); until <= -time.Minute || until > 5*time.Minute || next.Minute()%5 != 0 || next.Second() != 0 {
		t.Errorf("next cycle at %s, %s from now: not the new schedule's next tick", next, until)
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("exit: %v; log:\n%s", err, p.stderr.String())
	}
}
