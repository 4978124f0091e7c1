package state

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestPredicted: a head's check is remembered by repository and commit,
// across a reopened database, and old heads are forgotten.
func TestPredicted(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, file, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	if _, ok, err := s.PredictedFor(ctx, "github.com/acme/apps", "abc"); err != nil || ok {
		t.Fatalf("before: ok=%v err=%v", ok, err)
	}
	if err := s.SavePredicted(ctx, "github.com/acme/apps", "abc", Predicted{Number: 7, Predictions: 2, Reviewed: true, At: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.SavePredicted(ctx, "github.com/acme/other", "def", Predicted{Number: 1, At: now.Add(-40 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, file, testSeal); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, ok, err := s.PredictedFor(ctx, "github.com/acme/apps", "abc")
	if err != nil || !ok || p.Number != 7 || p.Predictions != 2 || !p.Reviewed || !p.At.Equal(now) {
		t.Fatalf("after reopening: %+v ok=%v err=%v", p, ok, err)
	}
	if _, ok, _ := s.PredictedFor(ctx, "github.com/acme/other", "abc"); ok {
		t.Error("a commit is remembered per repository")
	}
	if err := s.ForgetPredictedBefore(ctx, now.Add(-30*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.PredictedFor(ctx, "github.com/acme/other", "def"); ok {
		t.Error("a head checked 40 days ago is still remembered")
	}
	if _, ok, _ := s.PredictedFor(ctx, "github.com/acme/apps", "abc"); !ok {
		t.Error("today's head was forgotten")
	}
}
