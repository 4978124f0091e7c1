package state

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestAppSnoozes: a snooze holds for its time, survives a reopen, is
// replaced by a later one and is forgotten when it ends.
func TestAppSnoozes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	week := 7 * 24 * time.Hour
	if err := s.SnoozeApp(ctx, "prod/shop/cart", now.Add(week), "U1 (alice)"); err != nil {
		t.Fatal(err)
	}
	if err := s.SnoozeApp(ctx, "prod/shop/web", now.Add(time.Hour), "U2 (bob)"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, path, testSeal); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.AppSnoozes(ctx, now.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got["prod/shop/cart"].Until.Equal(now.Add(week)) || got["prod/shop/cart"].By != "U1 (alice)" {
		t.Fatalf("snoozes two hours later = %v, want only prod/shop/cart for a week", got)
	}
	if err := s.SnoozeApp(ctx, "prod/shop/cart", now.Add(3*time.Hour), "U3 (carol)"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.AppSnoozes(ctx, now.Add(2*time.Hour)); got["prod/shop/cart"].By != "U3 (carol)" {
		t.Errorf("a later snooze did not replace the earlier: %v", got)
	}
	if got, _ := s.AppSnoozes(ctx, now.Add(3*time.Hour)); len(got) != 0 {
		t.Errorf("a snooze outlived its end: %v", got)
	}
}
