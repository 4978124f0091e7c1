package state

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestCooldownCommandsAndSnoozes: a fix's sightings count cycles, not
// calls; a command is followed once, across a reopened database; a snooze
// holds until its time.
func TestCooldownCommandsAndSnoozes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for i, want := range []int{1, 1, 2, 3} {
		at := t0.Add(time.Duration(max(i-1, 0)) * 10 * time.Minute)
		sg, err := st.Seen(ctx, "fix1", at)
		if err != nil || sg.Cycles != want || !sg.First.Equal(t0) {
			t.Fatalf("sighting %d: %+v %v, want %d cycles since %s", i, sg, err, want, t0)
		}
	}
	if err := st.Unseen(ctx, "fix1"); err != nil {
		t.Fatal(err)
	}
	if sg, _ := st.Seen(ctx, "fix1", t0.Add(time.Hour)); sg.Cycles != 1 || !sg.First.Equal(t0.Add(time.Hour)) {
		t.Fatalf("a fix that comes back starts again: %+v", sg)
	}
	if again, err := st.Followed(ctx, "github.com/acme/shop", 7, t0); err != nil || again {
		t.Fatalf("first follow: %v %v", again, err)
	}
	if err := st.Snooze(ctx, "fix2", t0.Add(14*24*time.Hour), "snoozed by @ops"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, err = Open(ctx, path, testSeal); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if again, _ := st.Followed(ctx, "github.com/acme/shop", 7, t0); !again {
		t.Fatal("a command was followed twice")
	}
	if again, _ := st.Followed(ctx, "github.com/acme/other", 7, t0); again {
		t.Fatal("a comment id of another repository counted as followed")
	}
	if until, why, on, _ := st.Snoozed(ctx, "fix2", t0.Add(13*24*time.Hour)); !on || why != "snoozed by @ops" || !until.Equal(t0.Add(14*24*time.Hour)) {
		t.Fatalf("snooze during: %v %q %v", on, why, until)
	}
	if _, _, on, _ := st.Snoozed(ctx, "fix2", t0.Add(15*24*time.Hour)); on {
		t.Fatal("a snooze held past its time")
	}
	if err := st.SaveCheck(ctx, "fix1", Checked{SHA: "abc", Digest: "d1", Planned: true, Success: true}, t0); err != nil {
		t.Fatal(err)
	}
	if c, ok, _ := st.CheckFor(ctx, "fix1"); !ok || c != (Checked{SHA: "abc", Digest: "d1", Planned: true, Success: true}) {
		t.Fatalf("check %+v %v", c, ok)
	}
}
