package main

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// TestSetupGitHubAppWebhook: with --webhook-url, the App created through
// the manifest flow has its hook on at that URL and subscribes to the
// events driftfix acts on; GitHub (the emulator) then signs its deliveries
// with the webhook secret setup wrote, which driftfix's receiver accepts.
// Without it the App subscribes to nothing; an http URL off loopback is
// refused before anything is created.
func TestSetupGitHubAppWebhook(t *testing.T) {
	gh, err := githubtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer gh.Close()
	dir := filepath.Join(t.TempDir(), "creds")
	secretFile := filepath.Join(dir, "github-webhook-secret")
	rc := &events.Receiver{Secret: func() string { b, _ := os.ReadFile(secretFile); return string(b) }, Queue: &events.Queue{}}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	page, out, exit := startSetup(t, gh, dir, "--webhook-url", hook.URL+"/webhook")
	createApp(t, gh, page, exit)
	if !strings.Contains(out.String(), "GitHub sends the App's events to "+hook.URL+"/webhook") {
		t.Errorf("the output does not say where events go:\n%s", out)
	}
	m := gh.Manifests()[0].Manifest
	h, _ := m["hook_attributes"].(map[string]any)
	if h["url"] != hook.URL+"/webhook" || h["active"] != true {
		t.Errorf("hook sent: %v", h)
	}
	if ev, _ := m["default_events"].([]any); len(ev) != 6 {
		t.Errorf("events subscribed: %v", m["default_events"])
	}
	d, err := gh.Deliver("ping", map[string]any{"zen": "Practicality beats purity.", "hook_id": 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status() != http.StatusAccepted {
		t.Errorf("the receiver with the written secret answered %v %q", d.Statuses, d.Answer)
	}

	gh2, _ := githubtest.NewServer()
	defer gh2.Close()
	page, out, exit = startSetup(t, gh2, filepath.Join(t.TempDir(), "creds"))
	createApp(t, gh2, page, exit)
	if ev, _ := gh2.Manifests()[0].Manifest["default_events"].([]any); len(ev) != 0 {
		t.Errorf("a poll-only App subscribes to %v", ev)
	}
	if !strings.Contains(out.String(), "The App has no webhook") {
		t.Errorf("the output does not say the App is poll-only:\n%s", out)
	}
	if code, _, stderr := runCLI("setup", "github-app", "--webhook-url", "http://driftfix.example.com/webhook", "--dir", t.TempDir()); code != exitUsage || !strings.Contains(stderr, "must be https") {
		t.Errorf("an http webhook URL: exit %d %s", code, stderr)
	}
}

// createApp walks the manifest flow as a browser: the page, its form,
// GitHub's redirect, setup's exit.
func createApp(t *testing.T, gh *githubtest.Server, page string, exit chan int) {
	t.Helper()
	resp, err := http.Get(page + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	action := regexp.MustCompile(`action="([^"]+)"`).FindStringSubmatch(string(body))
	manifest := regexp.MustCompile(`name="manifest" value="([^"]+)"`).FindStringSubmatch(string(body))
	if action == nil || manifest == nil {
		t.Fatalf("the page has no manifest form:\n%s", body)
	}
	resp, err = http.PostForm(html.UnescapeString(action[1]), url.Values{"manifest": {html.UnescapeString(manifest[1])}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case code := <-exit:
		if code != exitClean {
			t.Fatalf("setup exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("setup did not finish after the redirect")
	}
}
