package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/slack/slacktest"
)

// TestSlackButtonsOfRun: run with a Slack signing secret and no webhook
// secret serves the digest's buttons at /slack/actions on --webhook-listen:
// a press signed as Slack signs it is acknowledged, a forged one refused
// with 401 and counted in /metrics; GitHub's /webhook is not served; the
// secret is never logged.
func TestSlackButtonsOfRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts driftfix as a process")
	}
	srv, tokenFile := liveServer(t, time.Now())
	dir := t.TempDir()
	cfg := writePolicy(t, dir, "dryRun: true\n", argoEntry{"test", srv.URL, tokenFile, ""})
	secretFile := filepath.Join(dir, "slack-signing-secret")
	if err := os.WriteFile(secretFile, []byte("slack-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, hook := freeAddr(t), freeAddr(t)
	p := startDriftfix(t, "run", "--config", cfg, "--listen", addr, "--slack-signing-secret-file", secretFile, "--webhook-listen", hook)
	sl := slacktest.NewServer("xoxb-unused")
	defer sl.Close()
	client := &http.Client{Timeout: 5 * time.Second}
	press := func(secret string) (int, string) {
		resp, err := slacktest.Interact(client, "http://"+hook+"/slack/actions", secret, time.Now(),
			sl.Payload(slacktest.BlockAction{User: "U0ALICE", ActionID: slack.ButtonRecheck, Value: "test/argocd/shop"}))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor(t, "the receiver", 20*time.Second, p, func() bool { code, _ := press("slack-s3cret"); return code != 0 })
	if code, body := press("slack-s3cret"); code != http.StatusOK {
		t.Errorf("signed press: %d %q", code, body)
	}
	if code, body := press("another secret"); code != http.StatusUnauthorized || !strings.Contains(body, "X-Slack-Signature does not match") {
		t.Errorf("forged press: %d %q", code, body)
	}
	resp, err := client.Post("http://"+hook+"/webhook", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/webhook without a webhook secret: %d, want 404", resp.StatusCode)
	}
	_, m := get(t, "http://"+addr+"/metrics")
	if v, _ := metric(m, `driftfix_slack_presses_total{action="none",outcome="forged"}`); v != 1 {
		t.Errorf("forged presses counted %v, want 1", v)
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("exit: %v; log:\n%s", err, p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), "slack-s3cret") {
		t.Error("the signing secret appeared in the log")
	}
}
