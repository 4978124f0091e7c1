package slack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/secretfile"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/slack/slacktest"
	"github.com/driftfix/driftfix/templates"
)

const token = "xoxb-test-0000-secret"

func digest(lines int) []slack.Message {
	var v templates.DigestView
	for i := 0; i < lines; i++ {
		v.ForPeople = append(v.ForPeople, templates.PersonLine{App: fmt.Sprintf("app-%03d", i), Namespace: "argocd", Path: "/spec/replicas",
			Resource: drift.Ref{Kind: "Deployment", Name: "web"}, Cause: drift.CauseManualChange, Why: strings.Repeat("changed by hand ", 5)})
	}
	return slack.Digest(v)
}

func TestPostThreadsAndRetries(t *testing.T) {
	srv := slacktest.NewServer(token)
	srv.RateLimit(1)
	defer srv.Close()
	n, err := slack.New(slack.Config{Token: token, APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	msgs := digest(300)
	if len(msgs) < 2 {
		t.Fatalf("digest of %d messages; the test needs a thread", len(msgs))
	}
	start := time.Now()
	thread, err := n.Post(context.Background(), "#gitops", msgs)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < time.Second {
		t.Error("the 429's Retry-After was not waited out")
	}
	posts := srv.Posts()
	if len(posts) != len(msgs) || thread != "1700000000.000001" {
		t.Fatalf("%d posts for %d messages, thread %q", len(posts), len(msgs), thread)
	}
	for i, p := range posts {
		if p["channel"] != "#gitops" {
			t.Errorf("post %d to %q", i, p["channel"])
		}
		if (i == 0) != (p["thread_ts"] == "") || (i > 0 && p["thread_ts"] != thread) {
			t.Errorf("post %d thread_ts %q", i, p["thread_ts"])
		}
		var atts []map[string]any
		if err := json.Unmarshal([]byte(p["attachments"]), &atts); err != nil || len(atts) == 0 || atts[0]["color"] == "" {
			t.Errorf("post %d attachments %q (%v)", i, p["attachments"], err)
		}
	}
}

func TestAuthErrorNeverShowsTheToken(t *testing.T) {
	srv := slacktest.NewServer(token)
	defer srv.Close()
	n, _ := slack.New(slack.Config{Token: "xoxb-wrong-" + token, APIURL: srv.URL})
	_, err := n.Post(context.Background(), "#gitops", digest(1))
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), token) {
		t.Fatalf("error %v", err)
	}
	if _, err := slack.New(slack.Config{}); err == nil {
		t.Fatal("a notifier without a token must be refused")
	}
}

// TestRetries5xxAndDroppedConnections: a 5xx answer or a connection closed
// without an answer is retried with backoff and the message posted once; an
// answer from Slack itself (invalid_auth) is not retried.
func TestRetries5xxAndDroppedConnections(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     func(*slacktest.Server)
		posts     int
		wantError bool
	}{
		{"502 twice", func(s *slacktest.Server) { s.FailAfter(0, 2, 502) }, 1, false},
		{"503 then a dropped connection", func(s *slacktest.Server) { s.FailAfter(0, 1, 503); s.Drop(1) }, 1, false},
		{"500 past the retries", func(s *slacktest.Server) { s.FailAfter(0, 10, 500) }, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := slacktest.NewServer(token)
			defer srv.Close()
			tc.fault(srv)
			n, err := slack.New(slack.Config{Token: token, APIURL: srv.URL, Retries: 3, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = n.Post(context.Background(), "#gitops", digest(1))
			if (err != nil) != tc.wantError || len(srv.Posts()) != tc.posts {
				t.Fatalf("error %v, %d posts; want error %v, %d posts", err, len(srv.Posts()), tc.wantError, tc.posts)
			}
			if tc.wantError && srv.Attempts() != 4 {
				t.Errorf("%d attempts, want 1 + 3 retries", srv.Attempts())
			}
		})
	}
	srv := slacktest.NewServer(token)
	defer srv.Close()
	n, _ := slack.New(slack.Config{Token: "xoxb-wrong", APIURL: srv.URL, Retries: 3, Backoff: time.Millisecond})
	if _, err := n.Post(context.Background(), "#gitops", digest(1)); err == nil || srv.Attempts() != 1 {
		t.Fatalf("invalid_auth must not be retried: %v after %d attempts", err, srv.Attempts())
	}
}

// TestTokenRotation: a token read from a file again when it changes is used
// for the next message, without building the notifier again.
func TestTokenRotation(t *testing.T) {
	srv := slacktest.NewServer(token)
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := secretfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := slack.New(slack.Config{TokenFunc: f.Token, APIURL: srv.URL, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := n.Post(ctx, "#gitops", digest(1)); err != nil {
		t.Fatal(err)
	}
	const rotated = "xoxb-rotated-1111-secret"
	srv.SetToken(rotated)
	if _, err := n.Post(ctx, "#gitops", digest(1)); err == nil || strings.Contains(err.Error(), token) {
		t.Fatalf("the old token must be refused, and not shown: %v", err)
	}
	if err := os.WriteFile(path, []byte(rotated+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Post(ctx, "#gitops", digest(1)); err != nil {
		t.Fatalf("the rotated token must be used without a restart: %v", err)
	}
	if len(srv.Posts()) != 2 {
		t.Errorf("%d posts", len(srv.Posts()))
	}
}
