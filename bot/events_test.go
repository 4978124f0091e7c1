package bot

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

const hookSecret = "webhook-secret-of-the-test"

// eventWorld is a world whose bot receives the emulated GitHub's webhook
// deliveries on 127.0.0.1: a receiver, a queue and a runner that has run
// its first cycle.
type eventWorld struct {
	*world
	r    *Runner
	q    *events.Queue
	rc   *events.Receiver
	hook *httptest.Server
	done atomic.Int64 // units of work done
	mu   sync.Mutex
	took map[events.Kind][]time.Duration
}

func newEventWorld(t testing.TB, names ...string) *eventWorld {
	t.Helper()
	w, now := stuckWorld(t, worldConfig, names...)
	return attachEvents(w, now)
}

// attachEvents runs a world's first cycle and gives its bot a receiver the
// emulated GitHub delivers to.
func attachEvents(w *world, now time.Time) *eventWorld {
	t := w.t
	t.Helper()
	e := &eventWorld{world: w, took: map[events.Kind][]time.Duration{}}
	var closeDB func()
	e.r, closeDB = w.runner()
	t.Cleanup(closeDB)
	if out, err := e.r.Once(context.Background(), now); err != nil || len(out.Result.Errors)+len(out.Published.Errors) > 0 {
		t.Fatalf("first cycle: %v %v %v", err, out.Result.Errors, out.Published.Errors)
	}
	e.q = &events.Queue{Handler: e.r, Log: e.r.Log, Done: func(wk events.Work, _ error, took time.Duration) {
		e.mu.Lock()
		e.took[wk.Kind] = append(e.took[wk.Kind], took)
		e.mu.Unlock()
		e.done.Add(1)
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go e.q.Run(ctx)
	e.rc = &events.Receiver{Secret: func() string { return hookSecret }, Deliveries: e.r, Watches: e.r.Watches, Queue: e.q, Seen: e.r.Metrics.Delivery}
	e.hook = httptest.NewServer(e.rc)
	t.Cleanup(func() { e.hook.Close(); cancel() })
	w.gh.SetWebhook(e.hook.URL+"/webhook", hookSecret)
	t.Cleanup(func() { w.gh.SetWebhook("", "") })
	return e
}

// settle waits until every emitted delivery is answered and the queue has
// done its work.
func (e *eventWorld) settle() {
	e.t.Helper()
	e.gh.WaitDeliveries()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if e.q.Idle() {
			return
		}
	}
	e.t.Fatal("the queue did not drain within 20s")
}

// lastDelivery is the last delivery of event.
func (e *eventWorld) lastDelivery(event string) githubtest.Delivery {
	e.t.Helper()
	ds := e.gh.Deliveries()
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].Event == event {
			return ds[i]
		}
	}
	e.t.Fatalf("no %s delivery among %d", event, len(ds))
	return githubtest.Delivery{}
}

// TestWebhookPredictsPullRequest: a person opening a pull request gets its
// driftfix/predict check from the delivery, before any cycle; the delivery
// is acknowledged with 202 and the check is published once.
func TestWebhookPredictsPullRequest(t *testing.T) {
	e := newEventWorld(t, "shop")
	_, sha := e.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
	e.settle()
	d := e.lastDelivery("pull_request")
	if d.Status() != http.StatusAccepted || !strings.Contains(d.Answer, "queued: predict acme/shop#") {
		t.Fatalf("delivery answered %v %q", d.Statuses, d.Answer)
	}
	runs := e.predictRuns("shop", sha)
	if len(runs) != 1 || runs[0].Conclusion != "failure" {
		t.Fatalf("predict check runs on the head: %+v", runs)
	}
}

// quietly runs f with the webhook off: what it does is never delivered.
func (e *eventWorld) quietly(f func()) {
	e.gh.SetWebhook("", "")
	defer e.gh.SetWebhook(e.hook.URL+"/webhook", hookSecret)
	f()
}

// post sends a delivery by hand, signed with secret ("": unsigned).
func (e *eventWorld) post(event, id, secret string, body []byte) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.hook.URL+"/webhook", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	if secret != "" {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestWebhookRefusals: a delivery that is forged (signed with another
// secret, by the emulator as GitHub would with a stale secret), unsigned,
// too large, or not JSON is refused with 401, 413 or 400 and a body saying
// why, and does nothing; an event driftfix does not act on is acknowledged
// and ignored.
func TestWebhookRefusals(t *testing.T) {
	e := newEventWorld(t, "shop")
	e.gh.SetWebhook(e.hook.URL+"/webhook", "a secret driftfix does not hold")
	_, sha := e.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
	e.gh.WaitDeliveries()
	if d := e.lastDelivery("pull_request"); d.Status() != http.StatusUnauthorized || !strings.Contains(d.Answer, "X-Hub-Signature-256 does not match") {
		t.Errorf("forged delivery answered %v %q", d.Statuses, d.Answer)
	} else if len(d.Statuses) != 1 {
		t.Errorf("a refused delivery was sent again: %v", d.Statuses)
	}
	e.gh.SetWebhook(e.hook.URL+"/webhook", hookSecret)
	ev, err := e.gh.Event("acme", "shop", 2, "synchronize")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(ev)
	big := bytes.Repeat([]byte(" "), events.DefaultMaxBody+1)
	for _, c := range []struct {
		name, event, secret string
		body                []byte
		code                int
		says                string
	}{
		{"unsigned", "pull_request", "", body, http.StatusUnauthorized, "no X-Hub-Signature-256 header"},
		{"forged", "pull_request", "guessed", body, http.StatusUnauthorized, "does not match the payload"},
		{"oversized", "pull_request", hookSecret, big, http.StatusRequestEntityTooLarge, "larger than 5242880 bytes"},
		{"not JSON", "pull_request", hookSecret, []byte("{not json"), http.StatusBadRequest, "payload is not valid JSON"},
		{"an event driftfix does not act on", "not_an_event", hookSecret, []byte("{}"), http.StatusAccepted, "ignored"},
		{"a closed pull request", "pull_request", hookSecret, []byte(`{"action":"closed"}`), http.StatusAccepted, "ignored: pull_request closed"},
	} {
		code, said := e.post(c.event, "manual-"+strings.ReplaceAll(c.name, " ", "-"), c.secret, c.body)
		if code != c.code || !strings.Contains(said, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.name, code, said, c.code, c.says)
		}
	}
	e.settle()
	if runs := e.predictRuns("shop", sha); len(runs) != 0 {
		t.Errorf("a refused delivery published a check: %+v", runs)
	}
}

// TestWebhookReplay: a delivery sent again (GitHub's redelivery, or an
// attacker replaying a captured one) is acknowledged and not acted on, also
// after a restart; the pull request keeps one check, made once.
func TestWebhookReplay(t *testing.T) {
	e := newEventWorld(t, "shop")
	_, sha := e.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
	e.settle()
	d := e.lastDelivery("pull_request")
	creates, updates := e.gh.CallCount(checkRuns), len(e.predictRuns("shop", sha))
	again, err := e.gh.Redeliver(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status() != http.StatusOK || !strings.Contains(again.Answer, "already received delivery "+d.ID) {
		t.Errorf("replayed delivery answered %v %q", again.Statuses, again.Answer)
	}
	// A restart: a new runner on the same database.
	r2, closeDB := e.runner()
	defer closeDB()
	rc := &events.Receiver{Secret: func() string { return hookSecret }, Deliveries: r2, Queue: e.q}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	e.gh.SetWebhook(srv.URL+"/webhook", hookSecret)
	if again, _ = e.gh.Redeliver(d.ID); again.Status() != http.StatusOK {
		t.Errorf("replayed after a restart: %v %q", again.Statuses, again.Answer)
	}
	e.settle()
	if e.gh.CallCount(checkRuns) != creates || len(e.predictRuns("shop", sha)) != updates {
		t.Errorf("a replayed delivery published: check creates %d→%d", creates, e.gh.CallCount(checkRuns))
	}
}

// TestWebhookUnknownSenders: an event of a repository no application reads,
// or one naming another installation than the repository's, is dropped.
func TestWebhookUnknownSenders(t *testing.T) {
	e := newEventWorld(t, "shop")
	var n int
	var sha string
	e.quietly(func() { n, sha = e.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML}) })
	ev, err := e.gh.Event("acme", "shop", n, "synchronize")
	if err != nil {
		t.Fatal(err)
	}
	ev["installation"] = map[string]any{"id": 999999}
	d, err := e.gh.Deliver("pull_request", ev)
	if err != nil || d.Status() != http.StatusAccepted {
		t.Fatalf("delivery: %v %+v", err, d)
	}
	ev, _ = e.gh.Event("acme", "shop", n, "reopened")
	repo := ev["repository"].(map[string]any)
	repo["full_name"], repo["html_url"] = "acme/elsewhere", e.gh.URL+"/acme/elsewhere"
	d, _ = e.gh.Deliver("pull_request", ev)
	if d.Status() != http.StatusAccepted || !strings.Contains(d.Answer, "does not watch acme/elsewhere") {
		t.Errorf("a repository no application reads: %v %q", d.Statuses, d.Answer)
	}
	e.settle()
	if runs := e.predictRuns("shop", sha); len(runs) != 0 {
		t.Errorf("an event of another installation published a check: %+v", runs)
	}
	if !strings.Contains(e.logs.String(), "installation 999999 is not the App's installation on acme/shop") {
		t.Errorf("the drop is not logged:\n%s", e.logs.String())
	}
}

// TestWebhookOlderSynchronizeLate: a synchronize sent for an older head
// that arrives after the newer one predicts nothing stale: the check is on
// the newest head only, once.
func TestWebhookOlderSynchronizeLate(t *testing.T) {
	e := newEventWorld(t, "shop")
	var n int
	var old map[string]any
	e.quietly(func() {
		n, _ = e.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
		var err error
		if old, err = e.gh.Event("acme", "shop", n, "synchronize"); err != nil {
			t.Fatal(err)
		}
	})
	oldSHA := old["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	if err := e.gh.CommitFile("acme", "shop", "add-api", "apps/shop/api.yaml", strings.Replace(apiYAML, "api:1.0.0", "api:1.0.1", 1), "person"); err != nil {
		t.Fatal(err)
	}
	newSHA := e.gh.Head("acme", "shop", "add-api")
	e.settle()
	if d := e.lastDelivery("pull_request"); d.Action != "synchronize" || d.Status() != http.StatusAccepted {
		t.Fatalf("synchronize delivery: %+v", d)
	}
	if _, err := e.gh.Deliver("pull_request", old); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if runs := e.predictRuns("shop", oldSHA); len(runs) != 0 {
		t.Errorf("the older head got a check from the late event: %+v", runs)
	}
	if runs := e.predictRuns("shop", newSHA); len(runs) != 1 {
		t.Errorf("the newest head has %d predict checks, want 1", len(runs))
	}
}

// TestWebhookLostDeliveryCaughtByPoll: a delivery that never arrives (the
// receiver down through every redelivery) is caught by the next cycle.
func TestWebhookLostDeliveryCaughtByPoll(t *testing.T) {
	e := newEventWorld(t, "shop")
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	e.gh.SetWebhook(downURL+"/webhook", hookSecret)
	_, sha := e.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
	e.gh.WaitDeliveries()
	if d := e.lastDelivery("pull_request"); d.Status() != 0 || len(d.Statuses) != 1+githubtest.WebhookRetries {
		t.Fatalf("the lost delivery was tried %v, want %d attempts unanswered", d.Statuses, 1+githubtest.WebhookRetries)
	}
	if runs := e.predictRuns("shop", sha); len(runs) != 0 {
		t.Fatalf("checked without a delivery or cycle: %+v", runs)
	}
	if _, err := e.r.Once(context.Background(), worldNow.Add(15*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if runs := e.predictRuns("shop", sha); len(runs) != 1 {
		t.Errorf("the poll did not catch the lost delivery: %+v", runs)
	}
}

// TestWebhookCommandAndRerun: a /driftfix command on driftfix's pull
// request is followed from its delivery (the pull request snoozed, the
// comment acknowledged); a person's "Re-run" of driftfix/predict publishes
// the check again on the same run.
func TestWebhookCommandAndRerun(t *testing.T) {
	e := newEventWorld(t, "shop")
	prs := e.open("shop")
	if len(prs) != 1 {
		t.Fatalf("the first cycle opened %d pull requests, want 1", len(prs))
	}
	e.gh.SetPermission("acme", "shop", "ops", githost.PermissionWrite)
	id := e.gh.CommentAs("acme", "shop", prs[0].Number, "ops", "MEMBER", "/driftfix snooze 7d")
	e.settle()
	var reactions []string
	for _, c := range e.gh.Comments("acme", "shop", prs[0].Number) {
		if c.ID == id {
			reactions = c.Reactions
		}
	}
	if strings.Join(reactions, ",") != "+1 by driftfix[bot]" {
		t.Errorf("the command's reactions: %v", reactions)
	}
	if open := e.open("shop"); len(open) != 0 {
		t.Errorf("snoozed from its delivery, the pull request is still open: %+v", open)
	}

	_, sha := e.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
	e.settle()
	runs := e.predictRuns("shop", sha)
	if len(runs) != 1 {
		t.Fatalf("predict runs: %+v", runs)
	}
	if err := e.gh.RerequestCheck("acme", "shop", runs[0].ID); err != nil {
		t.Fatal(err)
	}
	e.settle()
	again := e.predictRuns("shop", sha)
	if len(again) != 1 || again[0].Updates != runs[0].Updates+1 {
		t.Errorf("after Re-run: %d runs, updates %d→%d; want the run published again", len(again), runs[0].Updates, again[0].Updates)
	}
}

// TestWebhookRateLimitPauses: once a unit finds the installation's rate
// limit spent, that installation's next units are left to the cycles for a
// while instead of each spending a request to learn it again; the cycle
// catches up.
func TestWebhookRateLimitPauses(t *testing.T) {
	e := newEventWorld(t, "shop")
	e.gh.SetRateLimit(0, time.Now().Add(time.Hour))
	_, first := e.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
	e.settle()
	e.gh.SetRateLimit(5000, time.Now().Add(time.Hour))
	calls := e.gh.CallCount("GET /repos/{owner}/{repo}/pulls/{number}")
	_, second := e.personPR("shop", "add-api-2", map[string]string{"apps/shop/api2.yaml": strings.ReplaceAll(apiYAML, "api", "api2")})
	e.settle()
	if n := len(e.predictRuns("shop", first)) + len(e.predictRuns("shop", second)); n != 0 {
		t.Fatalf("%d checks published while the rate limit pause holds", n)
	}
	if got := e.gh.CallCount("GET /repos/{owner}/{repo}/pulls/{number}"); got != calls {
		t.Errorf("a unit called GitHub during the pause: %d → %d reads of a pull request", calls, got)
	}
	if !strings.Contains(e.logs.String(), "rate limit is spent until") {
		t.Errorf("the pause is not logged:\n%s", e.logs.String())
	}
	// The limit reset (the client of a new runner has not seen it spent).
	r2, closeDB := e.runner()
	defer closeDB()
	out, err := r2.Once(context.Background(), worldNow.Add(15*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.predictRuns("shop", first)) != 1 || len(e.predictRuns("shop", second)) != 1 {
		t.Errorf("the cycle did not catch up with the paused units: %+v", out.Predicted)
	}
}

// TestWebhookPushRunsACycle: a push to the branch an application tracks
// has the serving bot run a cycle after the push delay, long before the
// schedule's next tick; a push to a branch nothing tracks does not.
func TestWebhookPushRunsACycle(t *testing.T) {
	e := newEventWorld(t, "shop")
	e.cfg.Schedule = "0 0 1 1 *" // the next tick is months away
	e.r.SetPushDelay(10 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.r.Serve(ctx) }()
	defer func() { cancel(); <-served }()
	before := e.r.LastCycle()

	if err := e.gh.CommitFile("acme", "shop", "notes", "README.md", "a branch no application reads\n", "person"); err != nil {
		t.Fatal(err)
	}
	e.settle()
	time.Sleep(200 * time.Millisecond)
	if e.r.LastCycle() != before {
		t.Fatal("a push to a branch no application tracks ran a cycle")
	}
	if err := e.gh.CommitFile("acme", "shop", "main", "apps/shop/README.md", "tracked\n", "person"); err != nil {
		t.Fatal(err)
	}
	e.settle()
	waitUntil(t, "the cycle the push asked for", 10*time.Second, func() bool { return e.r.LastCycle() != before })
}

// TestWebhookDashboardBox: a box ticked on the Drift Dashboard is acted on
// from the issues edited delivery: "stop" closes the fix's pull request at
// once, without a cycle; the box of a person who cannot write does nothing.
func TestWebhookDashboardBox(t *testing.T) {
	w, now := stuckWorld(t, dashboardConfig, "shop")
	e := attachEvents(w, now)
	if len(e.open("shop")) != 1 {
		t.Fatalf("open pull requests after the first cycle: %+v", e.open("shop"))
	}
	before := e.r.LastCycle()
	if err := e.gh.TickAs("acme", "shop", e.dashboard("shop").Number, "reader", "- [ ] stop proposing this fix and close"); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if d := e.lastDelivery("issues"); d.Status() != http.StatusAccepted || !strings.Contains(d.Answer, "queued: dashboard acme/shop#") {
		t.Fatalf("the dashboard's delivery: %v %q", d.Statuses, d.Answer)
	}
	if len(e.open("shop")) != 1 {
		t.Fatal("a box ticked by an account that cannot write closed the pull request")
	}
	e.gh.SetPermission("acme", "shop", "maintainer", githost.PermissionWrite)
	body := e.dashboard("shop").Body
	if err := e.gh.EditIssueAs("acme", "shop", e.dashboard("shop").Number, "maintainer", strings.Replace(body, "- [x] stop proposing this fix and close", "- [x] stop proposing this fix and close", 1)); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if open := e.open("shop"); len(open) != 0 {
		t.Errorf("stopped from the dashboard's delivery, the pull request is still open: %+v", open)
	}
	if e.r.LastCycle() != before {
		t.Error("a cycle ran: the box should be acted on by the event's work")
	}
}

// TestWebhookTakesAChangedPolicy: the unit after a policy change works
// under the new policy (here a dry run: no check), and the parts it
// replaced are released; a policy Reload refuses changes nothing.
func TestWebhookTakesAChangedPolicy(t *testing.T) {
	e := newEventWorld(t, "shop")
	released := 0
	e.r.OwnClose(func() { released++ })
	refuse := true
	e.r.Reload = func(ctx context.Context) (*Parts, error) {
		if refuse {
			return nil, errors.New("line 1: schedule: not a schedule")
		}
		cfg := *e.r.Config
		cfg.DryRun = true
		e.r.Reload = nil // once
		return &Parts{Config: &cfg, Instances: e.r.Instances, Publisher: e.r.Publisher, MemoSeal: e.r.MemoSeal, Close: func() {}}, nil
	}
	_, first := e.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
	e.settle()
	if len(e.predictRuns("shop", first)) != 1 || released != 0 {
		t.Fatalf("under a refused change: %d checks, parts released %d times; want the old policy at work", len(e.predictRuns("shop", first)), released)
	}
	refuse = false
	_, second := e.personPR("shop", "add-api-2", map[string]string{"apps/shop/api2.yaml": strings.ReplaceAll(apiYAML, "api", "api2")})
	e.settle()
	if n := len(e.predictRuns("shop", second)); n != 0 || !e.r.Config.DryRun {
		t.Errorf("after the change to a dry run: %d checks (dry run %v)", n, e.r.Config.DryRun)
	}
	if released != 1 {
		t.Errorf("the replaced parts were released %d times, want 1", released)
	}
}
