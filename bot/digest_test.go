package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/slack/slacktest"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// TestDigestResumesExactlyOnce: a split digest that Slack stops taking
// half-way (5xx past the retries) is continued by the next cycle, also after
// a restart, from the first message not posted, in the same thread; every
// message is posted exactly once, in order.
func TestDigestResumesExactlyOnce(t *testing.T) {
	srv := slacktest.NewServer(slackToken)
	defer srv.Close()
	cfg, err := config.Parse([]byte(worldConfig))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "state.db")
	publisher := func() (*publish.Publisher, func()) {
		st, err := state.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		sl, err := slack.New(slack.Config{Token: slackToken, APIURL: srv.URL, Retries: 2, Backoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return &publish.Publisher{Config: cfg, Store: st, Notifier: sl}, func() { st.Close() }
	}
	var lines []templates.PersonLine
	for i := 0; i < 300; i++ {
		lines = append(lines, templates.PersonLine{App: fmt.Sprintf("app-%03d", i), Namespace: "argocd", Instance: "main", Path: "/spec/replicas",
			Resource: drift.Ref{Kind: "Deployment", Name: "web"}, Cause: drift.CauseManualChange, Why: strings.Repeat("changed by hand ", 5)})
	}
	res := &cycle.CycleResult{URLs: map[string]string{"main": "https://argocd.example.com"}, Digest: templates.DigestView{ForPeople: lines}}
	want := templates.Digest(templates.DigestView{Instance: "main", ArgoCDURL: "https://argocd.example.com", ForPeople: lines})
	if len(want) < 4 {
		t.Fatalf("the digest has %d messages; the test needs a split one", len(want))
	}
	now := worldNow

	srv.FailAfter(2, 100, 503) // two messages go through, then Slack fails
	p, closeDB := publisher()
	out := p.Publish(context.Background(), res, now)
	closeDB()
	if len(out.Errors) != 1 || len(srv.Posts()) != 2 || !strings.Contains(out.Errors[0].Error(), "the rest follows next cycle") {
		t.Fatalf("first cycle: %d posts, errors %v", len(srv.Posts()), out.Errors)
	}
	srv.FailAfter(0, 0, 0)
	for i := 0; i < 2; i++ { // a restart, then a cycle with nothing new
		p, closeDB = publisher()
		out = p.Publish(context.Background(), res, now.Add(time.Duration(i+1)*15*time.Minute))
		closeDB()
		if len(out.Errors) != 0 {
			t.Fatal(out.Errors)
		}
	}
	posts := srv.Posts()
	if len(posts) != len(want) {
		t.Fatalf("%d posts for a digest of %d messages", len(posts), len(want))
	}
	for i, m := range want {
		atts, _ := json.Marshal(m.Attachments)
		var got, exp any
		json.Unmarshal([]byte(posts[i]["attachments"]), &got)
		json.Unmarshal(atts, &exp)
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Errorf("post %d is not message %d of the digest", i, i)
		}
		if (i == 0) != (posts[i]["thread_ts"] == "") || (i > 0 && posts[i]["thread_ts"] != "1700000000.000001") {
			t.Errorf("post %d thread_ts %q", i, posts[i]["thread_ts"])
		}
	}
}
