package publish

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestForkWorkApart: a fork's head queued for prediction does not hold up
// the caller (a cycle or an event, under the runner's lock) while its
// renders run; the same head queued again while it waits or runs is not
// predicted twice; heads are predicted one at a time; WaitForks returns when
// every queued head is done, and a head done can be queued again.
func TestForkWorkApart(t *testing.T) {
	p := &Publisher{}
	f := &p.forks
	release := make(chan struct{})
	var running, most, ran atomic.Int32
	job := func() {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		running.Add(-1)
		ran.Add(1)
	}
	start := time.Now()
	if !f.add("acme/shop@a", job) || !f.add("acme/shop@b", job) {
		t.Fatal("a new head was not queued")
	}
	if f.add("acme/shop@a", job) {
		t.Error("a head already queued was queued again")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("queueing took %v while the prediction runs: the caller waited for it", took)
	}
	close(release)
	p.WaitForks()
	if ran.Load() != 2 || most.Load() != 1 {
		t.Errorf("ran %d predictions, at most %d at once; want 2, one at a time", ran.Load(), most.Load())
	}
	if !f.add("acme/shop@a", func() { ran.Add(1) }) {
		t.Error("a head done could not be queued again")
	}
	p.WaitForks()
	if ran.Load() != 3 {
		t.Errorf("ran %d, want 3", ran.Load())
	}
}
