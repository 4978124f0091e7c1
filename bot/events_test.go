package bot

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/events"
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

func newEventWorld(t *testing.T, names ...string) *eventWorld {
	t.Helper()
	w, now := stuckWorld(t, worldConfig, names...)
	e := &eventWorld{world: w, took: map[events.Kind][]time.Duration{}}
	var closeDB func()
	e.r, closeDB = w.runner()
	t.Cleanup(closeDB)
	if out, err := e.r.Once(context.Background(), now); err != nil || len(out.Result.Errors)+len(out.Published.Errors) > 0 {
		t.Fatalf("first cycle: %v %v %v", err, out.Result.Errors, out.Published.Errors)
	}
	e.q = &events.Queue{Handler: e.r, Done: func(wk events.Work, _ error, took time.Duration) {
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
