package bot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/robfig/cron/v3"
)

// Runner runs cycles: scan, plan, publish. Never two at once.
type Runner struct {
	Config    *config.Config
	Instances []cycle.Instance
	Publisher *publish.Publisher // nil: plan only (dry run)
	Metrics   *Metrics           // nil: none
	Log       *slog.Logger
	// RunAtStart runs a cycle as soon as Serve starts, then on the schedule.
	RunAtStart bool

	busy sync.Mutex
	mu   sync.Mutex
	last time.Time // end of the last finished cycle
}

// Outcome is one cycle's result and what was published.
type Outcome struct {
	Result    cycle.CycleResult
	Published publish.Published
	Duration  time.Duration
}

// ErrBusy says a cycle was asked for while another was running.
var ErrBusy = fmt.Errorf("a cycle is already running")

// Once runs one cycle. A cycle stopped through ctx finishes the pull request
// it is writing and publishes nothing after it.
func (r *Runner) Once(ctx context.Context, now time.Time) (Outcome, error) {
	if !r.busy.TryLock() {
		return Outcome{}, ErrBusy
	}
	defer r.busy.Unlock()
	log := r.log()
	start := time.Now()
	var opts cycle.CycleOptions
	if r.Publisher != nil && r.Publisher.Store != nil {
		opts.FirstSeen = func(key string) time.Time {
			t, err := r.Publisher.Store.FirstSeen(ctx, key, now)
			if err != nil {
				log.Warn("first-seen time", "app", key, "error", err.Error())
				return now
			}
			return t
		}
	}
	if r.Publisher != nil {
		opts.Open = r.Publisher.OpenPRs(ctx)
		if r.Publisher.Store != nil {
			opts.Watch = r.Publisher.Watch(ctx, now)
			opts.RuleIdle = r.Publisher.RuleIdle(ctx, now)
		}
	}
	out := Outcome{Result: cycle.Cycle(ctx, r.Config, r.Instances, now, opts)}
	for _, err := range out.Result.Errors {
		log.Warn("cycle", "error", err.Error())
	}
	if r.Publisher != nil && ctx.Err() == nil {
		out.Published = r.Publisher.Publish(ctx, &out.Result, now)
	}
	out.Duration = time.Since(start)
	r.Metrics.observe(out)
	r.mu.Lock()
	r.last = time.Now()
	r.mu.Unlock()
	log.Info("cycle done", "scanned", out.Result.Scanned, "stuck", len(out.Result.Stuck), "proposed", len(out.Result.PRs),
		"opened", len(out.Published.Opened), "updated", len(out.Published.Updated), "closed", len(out.Published.Closed),
		"errors", len(out.Result.Errors)+len(out.Published.Errors), "duration", out.Duration.Round(time.Millisecond).String())
	return out, ctx.Err()
}

// LastCycle returns when the last cycle finished (zero before the first).
func (r *Runner) LastCycle() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return r.Log
}

// Serve runs a cycle at every tick of the config's cron schedule, each after
// a random delay up to the jitter (and at once with RunAtStart), until ctx ends; a tick that comes while a
// cycle runs is skipped. When ctx ends it waits for the cycle in flight,
// which stops cleanly.
func (r *Runner) Serve(ctx context.Context) error {
	sched, err := cron.ParseStandard(r.Config.Schedule)
	if err != nil {
		return fmt.Errorf("schedule %q: %w", r.Config.Schedule, err)
	}
	log := r.log()
	var wg sync.WaitGroup
	defer wg.Wait()
	next := sched.Next(time.Now())
	if r.RunAtStart {
		next = time.Now()
	}
	for {
		log.Info("next cycle", "at", next.UTC().Format(time.RFC3339))
		delay := time.Until(next)
		if r.Config.Jitter > 0 {
			delay += rand.N(r.Config.Jitter)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Once(ctx, time.Now()); err == ErrBusy {
				log.Warn("skipping a tick: the previous cycle is still running")
			}
		}()
		next = sched.Next(time.Now())
	}
}
