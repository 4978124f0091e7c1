package events

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	gh "github.com/google/go-github/v89/github"
)

// TestFromEvent: each event driftfix acts on becomes its unit of work; the
// others say why they are ignored.
func TestFromEvent(t *testing.T) {
	repo := `"repository":{"full_name":"acme/shop","html_url":"https://github.com/acme/shop","default_branch":"main"},"installation":{"id":7}`
	for _, c := range []struct {
		event, payload string
		want           []string // Work.String() of each unit
		why            string
	}{
		{"pull_request", `{"action":"opened","pull_request":{"number":3,"head":{"sha":"abc"}},` + repo + `}`, []string{"predict acme/shop#3"}, ""},
		{"pull_request", `{"action":"synchronize","pull_request":{"number":3},` + repo + `}`, []string{"predict acme/shop#3"}, ""},
		{"pull_request", `{"action":"ready_for_review","pull_request":{"number":3},` + repo + `}`, []string{"predict acme/shop#3"}, ""},
		{"pull_request", `{"action":"labeled","pull_request":{"number":3},` + repo + `}`, nil, "pull_request labeled"},
		{"issue_comment", `{"action":"created","issue":{"number":4},"comment":{"user":{"login":"ops","type":"User"}},` + repo + `}`, []string{"comment acme/shop#4"}, ""},
		{"issue_comment", `{"action":"edited","issue":{"number":4},"comment":{"user":{"login":"ops","type":"User"}},` + repo + `}`, []string{"comment acme/shop#4"}, ""},
		{"issue_comment", `{"action":"created","issue":{"number":4},"comment":{"user":{"login":"driftfix[bot]","type":"Bot"}},` + repo + `}`, nil, "by a bot account"},
		{"issue_comment", `{"action":"deleted","issue":{"number":4},` + repo + `}`, nil, "issue_comment deleted"},
		{"issues", `{"action":"edited","issue":{"number":5,"body":"<!-- driftfix:dashboard=all -->\n- [x] stop"},"sender":{"login":"ops","type":"User"},` + repo + `}`, []string{"dashboard acme/shop#5"}, ""},
		{"issues", `{"action":"edited","issue":{"number":5,"body":"a bug report"},"sender":{"login":"ops"},` + repo + `}`, nil, "not a Drift Dashboard"},
		{"issues", `{"action":"edited","issue":{"number":5,"body":"<!-- driftfix:dashboard=all -->"},"sender":{"login":"driftfix[bot]","type":"Bot"},` + repo + `}`, nil, "by a bot account"},
		{"check_run", `{"action":"rerequested","check_run":{"name":"driftfix/predict","head_sha":"abc","pull_requests":[{"number":3},{"number":9}]},` + repo + `}`, []string{"predict acme/shop#3", "predict acme/shop#9"}, ""},
		{"check_run", `{"action":"rerequested","check_run":{"name":"driftfix/verify","head_sha":"abc"},` + repo + `}`, []string{"verify acme/shop@abc"}, ""},
		{"check_run", `{"action":"rerequested","check_run":{"name":"ci/test","head_sha":"abc"},` + repo + `}`, nil, "not a driftfix check"},
		{"check_run", `{"action":"completed","check_run":{"name":"driftfix/predict"},` + repo + `}`, nil, "check_run completed"},
		{"check_suite", `{"action":"rerequested","check_suite":{"head_sha":"abc","pull_requests":[{"number":3}]},` + repo + `}`, []string{"predict acme/shop#3", "verify acme/shop@abc"}, ""},
		{"push", `{"ref":"refs/heads/main","after":"def",` + repo + `}`, []string{"push to acme/shop main"}, ""},
		{"push", `{"ref":"refs/tags/v1","after":"def",` + repo + `}`, nil, "not a branch"},
		{"push", `{"ref":"refs/heads/old","deleted":true,` + repo + `}`, nil, "push deleted"},
		{"installation", `{"action":"created","installation":{"id":7}}`, []string{"refresh the installations"}, ""},
		{"installation_repositories", `{"action":"added","installation":{"id":7}}`, []string{"refresh the installations"}, ""},
		{"ping", `{"zen":"Keep it logically awesome."}`, nil, "ping"},
		{"star", `{"action":"created",` + repo + `}`, nil, "not an event driftfix acts on"},
	} {
		parsed, err := gh.ParseWebHook(c.event, []byte(c.payload))
		if err != nil {
			t.Fatalf("%s: %v", c.event, err)
		}
		works, why := FromEvent(parsed)
		var got []string
		for _, w := range works {
			got = append(got, w.String())
			if w.Kind != Refresh && (w.Repo != "acme/shop" || w.Installation != 7) {
				t.Errorf("%s %s: work %+v lacks its repository or installation", c.event, c.payload, w)
			}
		}
		if strings.Join(got, "; ") != strings.Join(c.want, "; ") || !strings.Contains(why, c.why) {
			t.Errorf("%s %s: %v %q, want %v %q", c.event, c.payload, got, why, c.want, c.why)
		}
	}
}

type recorder struct {
	mu   sync.Mutex
	done []Work
	gate chan struct{}
}

func (r *recorder) Do(_ context.Context, w Work) error {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, w)
	return nil
}

// TestQueueCoalesces: units of one key waiting are done once, with the
// newest event; an event older than one queued or done for its key does
// nothing; the queue refuses work beyond its bound.
func TestQueueCoalesces(t *testing.T) {
	rec := &recorder{gate: make(chan struct{})}
	q := &Queue{Handler: rec, Max: 3}
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	pr := func(n int, sha string, at time.Time) Work {
		return Work{Kind: Predict, Repo: "acme/shop", Number: n, HeadSHA: sha, At: at}
	}
	steps := []struct {
		w    Work
		want Outcome
	}{
		{pr(1, "a", t0), Queued},
		{pr(1, "b", t0.Add(time.Second)), Coalesced},
		{pr(1, "old", t0.Add(-time.Second)), Stale},
		{pr(2, "c", t0), Queued},
		{Work{Kind: Dashboard, Repo: "acme/shop", Number: 1}, Queued},
	}
	for i, s := range steps {
		got, err := q.Add(s.w)
		if err != nil || got != s.want {
			t.Fatalf("step %d: %v %v, want %v", i, got, err, s.want)
		}
	}
	if _, err := q.Add(pr(3, "d", t0)); err != ErrFull {
		t.Fatalf("a fourth key in a queue of 3: %v, want ErrFull", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	close(rec.gate)
	for deadline := time.Now().Add(5 * time.Second); !q.Idle() && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got []string
	for _, w := range rec.done {
		got = append(got, w.String()+"@"+w.HeadSHA)
	}
	if want := "predict acme/shop#1@b; predict acme/shop#2@c; dashboard acme/shop#1@"; strings.Join(got, "; ") != want {
		t.Errorf("done %q, want %q", strings.Join(got, "; "), want)
	}
	if o, _ := q.Add(pr(1, "older", t0)); o != Stale {
		t.Errorf("an event older than one done: %v, want stale", o)
	}
}

// FuzzFromEvent: no payload makes the parsing or the mapping panic, and
// every unit names its kind.
func FuzzFromEvent(f *testing.F) {
	for _, s := range []string{`{"action":"opened","pull_request":{"number":1}}`, `{"ref":"refs/heads/main"}`, `{"action":"rerequested","check_suite":{}}`, `null`, `[]`} {
		f.Add("pull_request", s)
		f.Add("push", s)
		f.Add("check_suite", s)
	}
	f.Fuzz(func(t *testing.T, event, payload string) {
		parsed, err := gh.ParseWebHook(event, []byte(payload))
		if err != nil {
			return
		}
		works, why := FromEvent(parsed)
		if len(works) == 0 && why == "" {
			t.Errorf("%s %q: no work and no reason", event, payload)
		}
		for _, w := range works {
			if w.Kind == "" || w.Key() == "" {
				t.Errorf("%s %q: work without a kind: %+v", event, payload, w)
			}
		}
	})
}
