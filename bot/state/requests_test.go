package state

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestRequestsSurviveRestarts: a request for a fix stays until it is
// cleared, across a reopened database, and one action's request says
// nothing about another's; rejections are listed with their reasons and the
// dashboard issue of a repository is remembered per scope.
func TestRequestsSurviveRestarts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	s, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Request(ctx, "k1", ActionOpenNow, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject(ctx, "k2", "main/argocd/web", "asked to stop on the dashboard", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.SetDashboard(ctx, "github.com/acme/shop", "all", 12); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, path, testSeal); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		fix, action string
		want        bool
	}{{"k1", ActionOpenNow, true}, {"k1", ActionRecheck, false}, {"k2", ActionOpenNow, false}} {
		if got, err := s.Requested(ctx, tc.fix, tc.action); err != nil || got != tc.want {
			t.Errorf("Requested(%s, %s) = %v, %v; want %v", tc.fix, tc.action, got, err, tc.want)
		}
	}
	if err := s.ClearRequest(ctx, "k1", ActionOpenNow); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Requested(ctx, "k1", ActionOpenNow); got {
		t.Error("a cleared request is still there")
	}
	rs, err := s.Rejections(ctx)
	if err != nil || len(rs) != 1 || rs[0].Fix != "k2" || rs[0].App != "main/argocd/web" || !rs[0].At.Equal(t0) {
		t.Fatalf("rejections %+v %v", rs, err)
	}
	if n, _ := s.Dashboard(ctx, "github.com/acme/shop", "all"); n != 12 {
		t.Errorf("dashboard issue %d, want 12", n)
	}
	if n, _ := s.Dashboard(ctx, "github.com/acme/shop", "other-shard"); n != 0 {
		t.Errorf("another scope's dashboard %d, want none", n)
	}
	if err := s.SetDashboard(ctx, "github.com/acme/shop", "all", 0); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Dashboard(ctx, "github.com/acme/shop", "all"); n != 0 {
		t.Errorf("a forgotten dashboard is still %d", n)
	}
}

// TestUnrejectAndRequestsByAction: a rejected fix is forgotten once, so it
// is proposed again, and the requests of one action are listed with when
// they were asked, not those of another action.
func TestUnrejectAndRequestsByAction(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"), testSeal)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if err := s.Reject(ctx, "k1", "main/argocd/web", "pull request acme/shop#3 was closed unmerged", t0); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		if got, err := s.Unreject(ctx, "k1"); err != nil || got != want {
			t.Fatalf("Unreject #%d = %v, %v; want %v", i+1, got, err, want)
		}
	}
	if _, ok, _ := s.Rejected(ctx, "k1"); ok {
		t.Fatal("an unrejected fix is still rejected")
	}
	for _, rq := range []struct {
		key, action string
		at          time.Time
	}{{"main/argocd/web", ActionRunNow, t0}, {"main/argocd/cart", ActionRunNow, t0.Add(time.Minute)}, {"k1", ActionUnreject, t0}} {
		if err := s.Request(ctx, rq.key, rq.action, rq.at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Requests(ctx, ActionRunNow)
	if err != nil || len(got) != 2 || !got["main/argocd/web"].Equal(t0) || !got["main/argocd/cart"].Equal(t0.Add(time.Minute)) {
		t.Fatalf("run-now requests %v %v", got, err)
	}
}
