package bot

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/memo"
)

// TestServeGoesOnFromKeptDiagnoses: a bot restarted, as a new leader is,
// reads back the diagnoses the last one kept in the state store and reuses
// them in its first cycle, without opening a second pull request (once
// the pull requests it opened are kept with their heads' checks); a bot
// whose seal differs (another GitHub credential or build) reads none back
// and diagnoses every stuck application again.
func TestServeGoesOnFromKeptDiagnoses(t *testing.T) {
	w, _ := stuckWorld(t, worldConfig, "shop", "cart")
	w.cfg.Jitter = 0
	seal, err := memo.NewSeal(w.gh.PrivateKeyPEM, [32]byte{7})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := memo.NewSeal(w.gh.PrivateKeyPEM, [32]byte{8})
	serve := func(seal memo.Seal) (reused, stuck, opened float64, readBack string) {
		t.Helper()
		from := len(w.logs.String())
		r, closeDB := w.runner()
		defer closeDB()
		r.MemoSeal, r.RunAtStart, r.PredictPerCycle = &seal, true, -1
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Serve(ctx) }()
		deadline := time.Now().Add(30 * time.Second)
		for r.LastCycle().IsZero() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		if r.LastCycle().IsZero() {
			t.Fatalf("no cycle ran:\n%s", w.logs.String()[from:])
		}
		for _, line := range strings.Split(w.logs.String()[from:], "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) != nil {
				continue
			}
			switch l["msg"] {
			case "cycle done":
				reused, _ = l["reused"].(float64)
				stuck, _ = l["stuck"].(float64)
				opened, _ = l["opened"].(float64)
			case "kept diagnoses read back", "read the kept diagnoses: the next cycle diagnoses every stuck application":
				readBack = line
			}
		}
		return reused, stuck, opened, readBack
	}
	reused, stuck, opened, _ := serve(seal)
	if reused != 0 || stuck != 2 || opened != 2 {
		t.Fatalf("first start: %v reused, %v stuck, %v opened; want 0, 2, 2", reused, stuck, opened)
	}
	// The pull requests opened since their diagnosis: checked on their
	// heads, which the memo then keeps.
	reused, stuck, opened, _ = serve(seal)
	if reused != 0 || stuck != 2 || opened != 0 {
		t.Fatalf("second start: %v reused, %v stuck, %v opened; want 0, 2, 0", reused, stuck, opened)
	}
	reused, stuck, opened, readBack := serve(seal)
	if reused != 2 || stuck != 2 || opened != 0 {
		t.Errorf("restarted: %v reused, %v stuck, %v opened; want 2, 2, 0", reused, stuck, opened)
	}
	if !strings.Contains(readBack, `"applications":2`) {
		t.Errorf("restarted: the log does not say 2 kept diagnoses were read back: %s", readBack)
	}
	reused, stuck, opened, readBack = serve(other)
	if reused != 0 || stuck != 2 || opened != 0 {
		t.Errorf("another build: %v reused, %v stuck, %v opened; want 0, 2, 0", reused, stuck, opened)
	}
	if !strings.Contains(readBack, `"applications":0`) {
		t.Errorf("another build: the log does not say none was read back: %s", readBack)
	}
}

// TestOnceGoesOnFromKeptDiagnoses: driftfix once, one cycle per process as
// a CronJob runs it, goes on from the diagnoses the last run kept.
func TestOnceGoesOnFromKeptDiagnoses(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop", "cart")
	seal, err := memo.NewSeal(w.gh.PrivateKeyPEM, [32]byte{7})
	if err != nil {
		t.Fatal(err)
	}
	var reused, opened []int
	for range 3 {
		r, closeDB := w.runner()
		r.MemoSeal, r.PredictPerCycle = &seal, -1
		out, err := r.Once(context.Background(), now)
		closeDB()
		if err != nil || len(out.Result.Errors)+len(out.Published.Errors) > 0 {
			t.Fatalf("cycle: %v %v %v", err, out.Result.Errors, out.Published.Errors)
		}
		reused, opened = append(reused, out.Result.Reused), append(opened, len(out.Published.Opened))
		now = now.Add(15 * time.Minute)
	}
	// The second run diagnoses again: the pull requests were opened since.
	if !slices.Equal(reused, []int{0, 0, 2}) || !slices.Equal(opened, []int{2, 0, 0}) {
		t.Errorf("runs reused %v and opened %v; want [0 0 2] and [2 0 0]", reused, opened)
	}
}
