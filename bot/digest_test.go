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
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/slack/slacktest"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// rowSeal seals the test state's rows as the bot's GitHub credential does
// (memo.Seal); reopening the database with it reads them back.
var rowSeal = func() memo.Seal {
	s, err := memo.NewSeal([]byte("the GitHub App's key"), [32]byte{})
	if err != nil {
		panic(err)
	}
	return s
}()

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
		st, err := state.Open(context.Background(), db, rowSeal)
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
	res := &plan.CycleResult{URLs: map[string]string{"main": "https://argocd.example.com"}, Digest: templates.DigestView{ForPeople: lines}}
	want := slack.Digest(templates.DigestView{Instance: "main", ArgoCDURL: "https://argocd.example.com", ForPeople: lines})
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

// TestCannotCompareInDigest: an application Argo CD cannot compare is listed
// in the digest with Argo CD's message, inert as Slack text; it is not
// stuck, gets no pull request, and its open pull request is neither closed
// nor announced again; once Argo CD compares it again and it is still
// stuck, it is not "newly stuck" either.
func TestCannotCompareInDigest(t *testing.T) {
	const msg = "Failed to load target state: <!channel> <https://evil.example|log in> `x` & <@U123>\nfake line"
	for _, tc := range []struct {
		name string
		sync string // the sync status the list shows
	}{
		{"sync status Unknown", "Unknown"},
		{"OutOfSync with a ComparisonError on refresh", "OutOfSync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, now := stuckWorld(t, worldConfig, "shop")
			w.cycle(&now)
			if len(w.open("shop")) != 1 {
				t.Fatalf("first cycle: open %+v", w.open("shop"))
			}
			posts := len(w.slack.Posts())

			s := w.setApp("shop", "shop", true, now)
			st := drift.Map(s.Application, "status")
			drift.Map(st, "sync")["status"] = tc.sync
			st["conditions"] = []any{map[string]any{"type": "ComparisonError", "message": msg}}
			out := w.cycle(&now)
			if len(out.Result.Stuck) != 0 || len(out.Result.PRs) != 0 || len(out.Published.Closed)+len(out.Published.Opened)+len(out.Published.Updated) != 0 {
				t.Fatalf("an application Argo CD cannot compare was treated as drifting or fixed: stuck %d, PRs %d, %+v", len(out.Result.Stuck), len(out.Result.PRs), out.Published)
			}
			if len(w.open("shop")) != 1 {
				t.Fatal("its open pull request was closed")
			}
			all := w.slack.Posts()
			if len(all) != posts+1 {
				t.Fatalf("%d new digests, want 1", len(all)-posts)
			}
			text := digestText(t, all[len(all)-1])
			var lines []string
			for _, l := range strings.Split(text, "\n") {
				if strings.Contains(l, "argocd/shop") {
					lines = append(lines, l)
				}
			}
			want := "Argo CD says: Failed to load target state: &lt;!channel&gt; &lt;https[:]//evil[.]example|log in&gt; ˋxˋ &amp; &lt;@U123&gt; ⏎ fake line"
			if len(lines) != 1 || !strings.Contains(lines[0], want) {
				t.Errorf("shop is not on its own line with Argo CD's message, escaped: %q\n%s", lines, text)
			}
			for _, bad := range []string{"<!channel>", "<https://evil", "<@U123>", "Newly stuck"} {
				if strings.Contains(text, bad) {
					t.Errorf("the digest holds %q:\n%s", bad, text)
				}
			}

			w.cycle(&now) // nothing new: no digest
			if n := len(w.slack.Posts()); n != posts+1 {
				t.Errorf("an unchanged digest was posted again (%d posts)", n)
			}
			w.setApp("shop", "shop", true, now) // compared again, still stuck
			out = w.cycle(&now)
			if len(out.Result.Stuck) != 1 || len(out.Published.Opened) != 0 || len(w.open("shop")) != 1 {
				t.Fatalf("compared again: stuck %d, %+v", len(out.Result.Stuck), out.Published)
			}
			for _, p := range w.slack.Posts()[posts+1:] {
				if strings.Contains(digestText(t, p), "Newly stuck") {
					t.Error("an application stuck before Argo CD could not compare it was announced newly stuck again")
				}
			}
		})
	}
}

// digestText is the mrkdwn text of a posted digest's blocks, one block a line.
func digestText(t *testing.T, post map[string]string) string {
	t.Helper()
	var atts []slack.Attachment
	if err := json.Unmarshal([]byte(post["attachments"]), &atts); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, a := range atts {
		for _, bl := range a.Blocks {
			if tx, ok := bl["text"].(map[string]any); ok {
				s, _ := tx["text"].(string)
				b.WriteString(s + "\n")
			}
		}
	}
	return b.String()
}
