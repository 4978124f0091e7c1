package events

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Handler does one unit of work. The bot's runner is one: it holds the
// cycle's lock while it works, so a unit and a cycle never write the same
// pull request at once.
type Handler interface {
	Do(ctx context.Context, w Work) error
}

// ErrFull says the queue holds as much work as it may: the delivery is
// refused (GitHub may send it again) and the next cycle catches it.
var ErrFull = errors.New("the work queue is full")

// DefaultQueueSize bounds the units of work waiting.
const DefaultQueueSize = 1000

// Queue holds the work deliveries ask for, one pending unit per key
// (Work.Key): a unit added while one with its key waits replaces it, so a
// burst of events on one pull request is done once. One worker does the
// units in the order their keys first came.
type Queue struct {
	// Handler does the work.
	Handler Handler
	// Max bounds the units waiting (default DefaultQueueSize).
	Max int
	// Log gets a line per unit that failed (nil: discard).
	Log *slog.Logger
	// Done, when set, is told each unit done, with its error and how long
	// it waited and ran since it was first queued.
	Done func(w Work, err error, took time.Duration)

	mu      sync.Mutex
	pending map[string]*queued
	order   []string
	wake    chan struct{}
	// latest is when the newest event of each key came (Work.At), kept
	// while the key is pending or was done within keepLatest: an older
	// event arriving later does nothing.
	latest map[string]time.Time
	busy   bool // a unit is in hand
}

type queued struct {
	w     Work
	since time.Time
}

// keepLatest is how long a key's newest event time is kept after its work.
const keepLatest = time.Hour

// Outcome says what Add did with a unit.
type Outcome string

// What Add does with a unit.
const (
	Queued    Outcome = "queued"
	Coalesced Outcome = "coalesced" // merged into a unit of the same key already waiting
	Stale     Outcome = "stale"     // older than an event already queued or done for its key
)

// Add queues a unit of work; ErrFull when the queue is full.
func (q *Queue) Add(w Work) (Outcome, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	key := w.Key()
	if !w.At.IsZero() {
		if last, ok := q.latest[key]; ok && w.At.Before(last) {
			return Stale, nil
		}
		q.latest[key] = w.At
	}
	if p := q.pending[key]; p != nil {
		w.Rerun = w.Rerun || p.w.Rerun
		p.w = w
		return Coalesced, nil
	}
	max := q.Max
	if max <= 0 {
		max = DefaultQueueSize
	}
	if len(q.pending) >= max {
		return "", ErrFull
	}
	q.pending[key] = &queued{w: w, since: time.Now()}
	q.order = append(q.order, key)
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return Queued, nil
}

// Idle reports whether no unit waits and none is in hand.
func (q *Queue) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending) == 0 && !q.busy
}

// Len is how many units wait.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

func (q *Queue) init() {
	if q.pending == nil {
		q.pending, q.latest, q.wake = map[string]*queued{}, map[string]time.Time{}, make(chan struct{}, 1)
	}
}

// next takes the oldest waiting unit, if any.
func (q *Queue) next() (queued, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	for len(q.order) > 0 {
		key := q.order[0]
		q.order = q.order[1:]
		if p := q.pending[key]; p != nil {
			delete(q.pending, key)
			q.busy = true
			return *p, true
		}
	}
	q.busy = false
	q.order = nil // let the slice's array go once drained
	return queued{}, false
}

// forget drops the event times of keys neither waiting nor done lately.
func (q *Queue) forget(now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for k, at := range q.latest {
		if q.pending[k] == nil && now.Sub(at) > keepLatest {
			delete(q.latest, k)
		}
	}
}

// Run does the queued work until ctx ends; the unit in hand is finished.
func (q *Queue) Run(ctx context.Context) {
	q.mu.Lock()
	q.init()
	wake := q.wake
	q.mu.Unlock()
	log := q.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	tidy := time.NewTicker(10 * time.Minute)
	defer tidy.Stop()
	for {
		for {
			if ctx.Err() != nil {
				return
			}
			u, ok := q.next()
			if !ok {
				break
			}
			err := q.Handler.Do(ctx, u.w)
			if err != nil {
				log.Warn("event work failed: the next cycle catches up", "work", u.w.String(), "delivery", u.w.Delivery, "error", err.Error())
			}
			if q.Done != nil {
				q.Done(u.w, err, time.Since(u.since))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case now := <-tidy.C:
			q.forget(now)
		}
	}
}
