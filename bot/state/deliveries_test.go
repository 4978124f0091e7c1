package state

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestFirstDelivery: a delivery id is acted on once within a day, also
// after a reopen; after a day, or once forgotten, it is new again.
func TestFirstDelivery(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		id    string
		at    time.Time
		first bool
	}{
		{"d-1", now, true},
		{"d-1", now.Add(time.Minute), false},
		{"d-2", now.Add(time.Minute), true},
		{"d-1", now.Add(23 * time.Hour), false},
		{"d-1", now.Add(DeliveriesKept + time.Second), true},
	}
	for i, st := range steps {
		if i == 3 { // a restart keeps what was received
			s.Close()
			if s, err = Open(ctx, path, testSeal); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.FirstDelivery(ctx, st.id, st.at)
		if err != nil {
			t.Fatal(err)
		}
		if got != st.first {
			t.Errorf("step %d: FirstDelivery(%s) = %v, want %v", i, st.id, got, st.first)
		}
	}
	if err := s.ForgetDelivery(ctx, "d-2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FirstDelivery(ctx, "d-2", now.Add(DeliveriesKept)); !got {
		t.Error("a forgotten delivery is not new again")
	}
	s.Close()
}
