package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/predict"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/robfig/cron/v3"
)

// Runner runs cycles: scan, plan, publish. Never two at once.
type Runner struct {
	Config    *config.Config
	Instances []plan.Instance
	Publisher *publish.Publisher // nil: plan only (dry run)
	Metrics   *Metrics           // nil: none
	Log       *slog.Logger
	// RunAtStart runs a cycle as soon as Serve starts, then on the schedule.
	RunAtStart bool
	// PredictPerCycle bounds the pull request heads driftfix/predict checks
	// in one cycle (0: publish.DefaultPredictPerCycle; below 0: none, and
	// no repository's pull requests are listed for it).
	PredictPerCycle int
	// Charts fetches charts of Helm chart repositories and OCI registries
	// for predicting pull requests, only from those a base branch names
	// (predict.Options.ChartsFromBase). Nil: none is fetched (Argo CD
	// renders the Applications it knows).
	Charts predict.FetchCharts

	busy   sync.Mutex
	mu     sync.Mutex
	health Health
	// MemoSeal, with a Publisher's Store, keeps stuck applications'
	// diagnoses in the state store after each cycle, sealed, and each Serve
	// (a restart, gaining leadership), or a Once outside Serve, goes on from
	// them (memo.Memo.Save and Load). Nil: they are kept between the
	// cycles of one Serve only.
	MemoSeal *memo.Seal

	// memo keeps stuck applications' diagnoses between the cycles of one
	// Serve (memo.Memo).
	memo *memo.Memo

	// Reload, when set, returns the parts a changed policy makes (nil, nil
	// when it did not change); each cycle and unit of work asks it first.
	Reload  func(ctx context.Context) (*Parts, error)
	cycling atomic.Bool     // a cycle runs or waits for the lock
	ev      eventState      // what events use between cycles (work.go)
	watched map[string]bool // repositories the last cycle's applications read (work.go)
	// appRepos is the repository of each application of the last cycle,
	// by key (slackact.go).
	appRepos map[string]string
	// policySwap tells Serve a reload swapped the policy (timingC).
	policySwap chan struct{}
	clk        clock // nil: the real time
}

// Health is what the last finished cycles say about the bot.
type Health struct {
	// Last is when the last cycle finished (zero before the first).
	Last time.Time
	// LastSuccess is when the last cycle that scanned every instance and
	// published everything finished (zero before the first).
	LastSuccess time.Time
	// Down says why the last cycle could do nothing at all (no instance
	// could be scanned); nil when it could.
	Down error
}

// Outcome is one cycle's result and what was published.
type Outcome struct {
	Result    plan.CycleResult
	Published publish.Published
	// Predicted is what driftfix/predict published on open pull requests.
	Predicted publish.PredictedPRs
	Duration  time.Duration
}

// ErrBusy says a cycle was asked for while another was running.
var ErrBusy = fmt.Errorf("a cycle is already running")

// Incomplete says why the cycle did not do all its work: the instances it
// could not scan and the publishing steps that failed; nil when it did. An
// application that failed on its own (a repository that cannot be read) is
// reported in the cycle's errors and does not make it incomplete.
func (o Outcome) Incomplete() error {
	var why []string
	if n := len(o.Result.FailedInstances); n > 0 {
		why = append(why, fmt.Sprintf("could not scan Argo CD %s %s", plural(n, "instance", "instances"), strings.Join(o.Result.FailedInstances, ", ")))
	}
	if n := len(o.Published.Errors); n > 0 {
		why = append(why, fmt.Sprintf("%d publishing %s failed", n, plural(n, "step", "steps")))
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New(strings.Join(why, "; "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Once runs one cycle. A cycle stopped through ctx finishes the pull request
// it is writing and publishes nothing after it.
func (r *Runner) Once(ctx context.Context, now time.Time) (Outcome, error) {
	if !r.cycling.CompareAndSwap(false, true) {
		return Outcome{}, ErrBusy
	}
	defer r.cycling.Store(false)
	r.busy.Lock() // a unit of work in hand finishes first
	defer r.busy.Unlock()
	r.reload(ctx)
	log := r.log()
	if r.Publisher != nil && r.Publisher.Store != nil && r.store() == nil {
		log.Warn("the publisher's store keeps no webhook deliveries, snoozes or memo: they are off; give it bot/state's store")
	}
	start := time.Now()
	var opts plan.CycleOptions
	opts.Memo = r.memo
	if opts.Memo == nil && r.memoStore() != nil {
		// One cycle, as a CronJob's driftfix once: it goes on from the
		// memo the last one kept.
		opts.Memo = r.loadMemo(ctx)
	}
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
			opts.RunNow = r.Publisher.RunNow(ctx)
		}
	}
	out := Outcome{Result: plan.Cycle(ctx, r.Config, r.Instances, now, opts)}
	for _, err := range out.Result.Errors {
		log.Warn("cycle", "error", err.Error())
	}
	if r.Publisher != nil && ctx.Err() == nil {
		out.Published = r.Publisher.Publish(ctx, &out.Result, now)
	}
	if r.Publisher != nil && ctx.Err() == nil && r.PredictPerCycle >= 0 {
		p := NewPredictor(r.Config, r.Instances, &out.Result)
		p.Charts = r.Charts
		out.Predicted = r.Publisher.PredictPRs(ctx, p, r.PredictPerCycle, now)
		for _, err := range out.Predicted.Errors {
			log.Warn("predict pull requests", "error", err.Error())
		}
	}
	if ctx.Err() == nil {
		r.keepLast(&out.Result)
		r.setWatched(&out.Result)
	}
	if st := r.memoStore(); st != nil && opts.Memo != nil {
		if err := opts.Memo.Save(ctx, st, *r.MemoSeal); err != nil {
			log.Warn("keep diagnoses", "error", err.Error())
		}
	}
	out.Duration = time.Since(start)
	end := time.Now()
	incomplete := out.Incomplete()
	if ctx.Err() != nil && incomplete == nil {
		incomplete = fmt.Errorf("the cycle was stopped: %w", ctx.Err())
	}
	r.mu.Lock()
	r.health.Last = end
	r.health.Down = nil
	if n := len(r.Instances); n > 0 && len(out.Result.FailedInstances) >= n {
		r.health.Down = fmt.Errorf("the last cycle, at %s, could not scan any Argo CD instance: %s", end.UTC().Format(time.RFC3339), errors.Join(out.Result.Errors...))
	}
	if incomplete == nil {
		r.health.LastSuccess = end
	}
	r.mu.Unlock()
	r.Metrics.observe(out, end, incomplete == nil)
	log.Info("cycle done", "scanned", out.Result.Scanned, "stuck", len(out.Result.Stuck), "reused", out.Result.Reused, "proposed", len(out.Result.PRs),
		"opened", len(out.Published.Opened), "updated", len(out.Published.Updated), "closed", len(out.Published.Closed),
		"predicted", len(out.Predicted.Checked),
		"errors", len(out.Result.Errors)+len(out.Published.Errors), "duration", out.Duration.Round(time.Millisecond).String())
	return out, ctx.Err()
}

// memoStore is where the memo is kept, or nil when it is not.
func (r *Runner) memoStore() memo.Store {
	if r.MemoSeal == nil {
		return nil
	}
	if st := r.store(); st != nil {
		return st
	}
	return nil
}

// loadMemo returns a memo holding what the state store kept, when it keeps
// one, and says in the log what it read back.
func (r *Runner) loadMemo(ctx context.Context) *memo.Memo {
	m := memo.New(0)
	if st := r.memoStore(); st != nil {
		n, err := m.Load(ctx, st, *r.MemoSeal, r.Config)
		if err != nil {
			r.log().Warn("read the kept diagnoses: the next cycle diagnoses every stuck application", "error", err.Error())
		} else {
			r.log().Info("kept diagnoses read back", "applications", n)
		}
	}
	return m
}

// LastCycle returns when the last cycle finished (zero before the first).
func (r *Runner) LastCycle() time.Time { return r.Health().Last }

// Health returns what the last finished cycles say.
func (r *Runner) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.health
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return r.Log
}

// Serve runs a cycle at every tick of the config's cron schedule, each after
// a random delay up to the jitter (and at once with RunAtStart), until ctx
// ends; a tick that comes while a cycle runs is skipped. A reloaded policy's
// schedule and jitter take effect at once: the next tick is computed again
// from the new schedule and logged; a schedule cron cannot read is refused,
// logged with its key, and the one in use keeps running. When ctx ends it
// waits for the cycle in flight, which stops cleanly.
func (r *Runner) Serve(ctx context.Context) error {
	spec, jitter := r.timing()
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return fmt.Errorf("read the schedule %q: %w", spec, err)
	}
	log := r.log()
	clk := r.clock()
	r.busy.Lock()
	r.memo = r.loadMemo(ctx)
	r.busy.Unlock()
	var wg sync.WaitGroup
	defer wg.Wait()
	changed := r.timingC()
	refused := "" // the last schedule refused, not logged again
	next := sched.Next(clk.Now())
	atStart := r.RunAtStart // the pending tick is the one at start, which a change keeps
	if atStart {
		next = clk.Now()
	}
	at := next.Add(draw(jitter))
	log.Info("next cycle", "at", next.UTC().Format(time.RFC3339))
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			spec2, jitter2 := r.timing()
			if spec2 == spec && jitter2 == jitter {
				continue
			}
			if spec2 != spec {
				s, err := cron.ParseStandard(spec2)
				if err != nil {
					if spec2 != refused {
						log.Error("changed schedule refused: the schedule in use stays", "key", "schedule", "schedule", spec2, "in_use", spec, "error", err.Error())
						refused = spec2
					}
					if jitter2 == jitter {
						continue
					}
					spec2 = spec
				} else {
					sched, refused = s, ""
					if !atStart {
						next = sched.Next(clk.Now())
					}
				}
			}
			at = next.Add(draw(jitter2))
			log.Info("schedule changed", "from", spec, "to", spec2, "jitter_from", jitter.String(), "jitter_to", jitter2.String(),
				"next_cycle", next.UTC().Format(time.RFC3339))
			spec, jitter = spec2, jitter2
			continue
		case <-clk.After(at.Sub(clk.Now())):
		case d := <-r.soonC(): // an event asked for a cycle
			log.Info("cycle asked for by an event", "in", d.String())
			select {
			case <-ctx.Done():
				return nil
			case <-clk.After(d):
			}
		}
		atStart = false
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Once(ctx, clk.Now()); err == ErrBusy {
				log.Warn("skipping a tick: the previous cycle is still running")
			}
		}()
		next = sched.Next(clk.Now())
		at = next.Add(draw(jitter))
		log.Info("next cycle", "at", next.UTC().Format(time.RFC3339))
	}
}

// draw is a random delay up to the jitter (none for 0).
func draw(jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return 0
	}
	return rand.N(jitter)
}

// timing is the policy's schedule and jitter, read under the lock a reload
// swaps the policy under.
func (r *Runner) timing() (string, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Config.Schedule, r.Config.Jitter
}

// timingC is the channel a reload tells Serve on that the policy changed,
// so it reads the schedule and jitter again.
func (r *Runner) timingC() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.policySwap == nil {
		r.policySwap = make(chan struct{}, 1)
	}
	return r.policySwap
}

// policyChanged tells Serve, without waiting, that a reload swapped the
// policy.
func (r *Runner) policyChanged() {
	select {
	case r.timingC() <- struct{}{}:
	default: // one already waits
	}
}

// clock is the time Serve waits on: the real one, or a test's.
type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (r *Runner) clock() clock {
	if r.clk == nil {
		return realClock{}
	}
	return r.clk
}
