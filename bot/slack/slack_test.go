package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/templates"
)

const token = "xoxb-test-0000-secret"

// fakeSlack speaks the Web API's chat.postMessage on 127.0.0.1: it checks the
// bearer token, answers 429 with Retry-After when told to, and records posts.
type fakeSlack struct {
	mu      sync.Mutex
	posts   []map[string]string
	limited int
	n       int
}

func (f *fakeSlack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/chat.postMessage" {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+token && r.Form.Get("token") != token {
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	if f.limited > 0 {
		f.limited--
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "ratelimited"})
		return
	}
	post := map[string]string{}
	for k := range r.Form {
		post[k] = r.Form.Get(k)
	}
	f.posts = append(f.posts, post)
	f.n++
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": post["channel"], "ts": fmt.Sprintf("1700000000.%06d", f.n)})
}

func digest(lines int) []templates.Message {
	var v templates.DigestView
	for i := 0; i < lines; i++ {
		v.ForPeople = append(v.ForPeople, templates.PersonLine{App: fmt.Sprintf("app-%03d", i), Namespace: "argocd", Path: "/spec/replicas",
			Resource: drift.Ref{Kind: "Deployment", Name: "web"}, Cause: drift.CauseManualChange, Why: strings.Repeat("changed by hand ", 5)})
	}
	return templates.Digest(v)
}

func TestPostThreadsAndRetries(t *testing.T) {
	f := &fakeSlack{limited: 1}
	srv := httptest.NewServer(f)
	defer srv.Close()
	n, err := New(Config{Token: token, APIURL: srv.URL})
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
	if len(f.posts) != len(msgs) || thread != "1700000000.000001" {
		t.Fatalf("%d posts for %d messages, thread %q", len(f.posts), len(msgs), thread)
	}
	for i, p := range f.posts {
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
	srv := httptest.NewServer(&fakeSlack{})
	defer srv.Close()
	n, _ := New(Config{Token: "xoxb-wrong-" + token, APIURL: srv.URL})
	_, err := n.Post(context.Background(), "#gitops", digest(1))
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), token) {
		t.Fatalf("error %v", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("a notifier without a token must be refused")
	}
}
