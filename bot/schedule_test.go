package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/config"
)

// fakeClock is Serve's time in tests: it moves only when the test says,
// and fires the waits whose deadline it passes.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []fakeWait
}

type fakeWait struct {
	at time.Time
	c  chan time.Time
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan time.Time, 1)
	if d <= 0 {
		c <- f.now
		return c
	}
	f.waits = append(f.waits, fakeWait{f.now.Add(d), c})
	return c
}

// advance sets the time and fires every wait it reaches.
func (f *fakeClock) advance(to time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = to
	kept := f.waits[:0]
	for _, w := range f.waits {
		if w.at.After(to) {
			kept = append(kept, w)
			continue
		}
		w.c <- to
	}
	f.waits = kept
}

// pending is the deadline of the last wait asked for (the one Serve waits
// on), zero when none.
func (f *fakeClock) pending() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waits) == 0 {
		return time.Time{}
	}
	return f.waits[len(f.waits)-1].at
}

// logLines are the JSON log lines with message msg since from.
func logLines(logs string, msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(logs, "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// TestScheduleFollowsReloadedPolicy: a running bot whose policy file
// changes its schedule (and jitter) waits for the new schedule's next tick
// from then on, without a restart, and logs the change with that tick; a
// changed schedule cron cannot read is refused with its key named, and the
// schedule in use keeps running its cycles.
func TestScheduleFollowsReloadedPolicy(t *testing.T) {
	w, _ := stuckWorld(t, worldConfig, "shop")
	r, closeDB := w.runner()
	defer closeDB()
	r.PredictPerCycle = -1
	policy := filepath.Join(w.dir, "driftfix.yaml")
	write := func(extra string) {
		t.Helper()
		if err := os.WriteFile(policy, []byte(worldConfig+extra), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("schedule: '0 0 1 1 *'\njitter: 0s\n")
	// As driftfix run's policy watch: the file read again, a changed valid
	// policy handed over, an invalid one refused and not read again.
	inst, pub := r.Instances, r.Publisher
	var (
		used, bad []byte
		refusals  []error
		direct    *config.Config // handed over as is, past the parser
	)
	r.Reload = func(ctx context.Context) (*Parts, error) {
		if direct != nil {
			cfg := direct
			direct = nil
			return &Parts{Config: cfg, Instances: inst, Publisher: pub}, nil
		}
		b, err := os.ReadFile(policy)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(b, used) || bytes.Equal(b, bad) {
			return nil, nil
		}
		cfg, err := config.Parse(b)
		if err != nil {
			bad = b
			refusals = append(refusals, err)
			return nil, err
		}
		used = b
		return &Parts{Config: cfg, Instances: inst, Publisher: pub}, nil
	}
	// The policy taken now, as CheckPolicy does, but waiting for a cycle
	// that holds the runner.
	reload := func(ctx context.Context) {
		r.busy.Lock()
		defer r.busy.Unlock()
		r.reload(ctx)
	}
	reload(context.Background()) // the policy at start
	if r.Config.Schedule != "0 0 1 1 *" {
		t.Fatalf("the policy at start was not taken: %q", r.Config.Schedule)
	}
	clk := &fakeClock{now: worldNow} // 2026-12-02 12:00 UTC
	r.clk = clk
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	defer func() { cancel(); <-served }()

	waitPending := func(what string, ok func(time.Time) bool) {
		t.Helper()
		waitUntil(t, what, 10*time.Second, func() bool { return ok(clk.pending()) })
	}
	at := func(want time.Time) func(time.Time) bool { return func(p time.Time) bool { return p.Equal(want) } }
	waitPending("the first wait, until New Year", at(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)))

	write("schedule: '*/5 * * * *'\njitter: 0s\n")
	reload(ctx)
	waitPending("the wait for the reloaded schedule's tick", at(worldNow.Add(5*time.Minute)))
	changes := logLines(w.logs.String(), "schedule changed")
	if len(changes) != 1 || changes[0]["from"] != "0 0 1 1 *" || changes[0]["to"] != "*/5 * * * *" || changes[0]["next_cycle"] != "2026-12-02T12:05:00Z" {
		t.Fatalf("the change is not logged with its next cycle: %v", changes)
	}
	if !r.LastCycle().IsZero() {
		t.Fatal("a cycle ran before the new schedule's tick")
	}
	clk.advance(worldNow.Add(5 * time.Minute))
	waitUntil(t, "the cycle of the reloaded schedule's tick", 30*time.Second, func() bool { return !r.LastCycle().IsZero() })
	waitPending("the tick after", at(worldNow.Add(10*time.Minute)))

	// A step of zero passes a glance at its fields, not cron: refused at
	// reload, the key named, the schedule in use kept.
	write("schedule: '*/0 * * * *'\njitter: 0s\n")
	reload(ctx)
	var es config.Errors
	if len(refusals) != 1 || !errors.As(refusals[0], &es) || es[0].Key != "schedule" {
		t.Fatalf("the invalid schedule was not refused with its key: %v", refusals)
	}
	first := r.LastCycle()
	clk.advance(worldNow.Add(10 * time.Minute))
	waitUntil(t, "the old schedule's cycle after the refusal", 30*time.Second, func() bool { return r.LastCycle() != first })
	waitPending("the old schedule's tick after", at(worldNow.Add(15*time.Minute)))

	// A jitter change moves the pending tick within the new jitter.
	write("schedule: '*/5 * * * *'\njitter: 2m\n")
	reload(ctx)
	waitPending("the tick with the new jitter", func(p time.Time) bool {
		return !p.Before(worldNow.Add(15*time.Minute)) && p.Before(worldNow.Add(17*time.Minute)) && len(logLines(w.logs.String(), "schedule changed")) == 2
	})
	if c := logLines(w.logs.String(), "schedule changed")[1]; c["jitter_from"] != "0s" || c["jitter_to"] != "2m0s" {
		t.Errorf("the jitter change is not logged: %v", c)
	}

	// A policy handed over past the parser with a schedule cron cannot
	// read: Serve refuses it with the key named and keeps its schedule.
	cfg := *r.Config
	cfg.Schedule, cfg.Jitter = "61 * * * *", 0
	direct = &cfg
	reload(ctx)
	waitUntil(t, "the refusal", 10*time.Second, func() bool {
		return len(logLines(w.logs.String(), "changed schedule refused: the schedule in use stays")) == 1
	})
	refused := logLines(w.logs.String(), "changed schedule refused: the schedule in use stays")[0]
	if refused["key"] != "schedule" || refused["schedule"] != "61 * * * *" || refused["in_use"] != "*/5 * * * *" {
		t.Errorf("the refusal does not name the key and both schedules: %v", refused)
	}
	// The jitter it also changed (to none) is taken.
	waitPending("the tick without jitter", at(worldNow.Add(15*time.Minute)))
	second := r.LastCycle()
	clk.advance(worldNow.Add(15 * time.Minute))
	waitUntil(t, "the kept schedule's cycle", 30*time.Second, func() bool { return r.LastCycle() != second })
}
