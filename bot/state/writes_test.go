package state

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestPathWritesKeptAcrossRestarts: what each cycle saw at a path is kept in
// order across a restart, read per application and time, and pruned.
func TestPathWritesKeptAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var ws []PathWrite
	for i, m := range []string{"argocd-controller", "rollout-operator", "argocd-controller"} {
		ws = append(ws, PathWrite{App: "main/argocd/web", Resource: "apps Deployment shop/web", Path: "/spec/template/metadata/annotations/x",
			At: t0.Add(time.Duration(i) * 5 * time.Minute), Value: []string{"v-git", "v-op", "v-git"}[i], Manager: m})
	}
	ws = append(ws, PathWrite{App: "main/argocd/other", Resource: "apps Deployment shop/other", Path: "/spec/replicas", At: t0, Value: "v", Manager: "m"})
	if err := s.RecordWrites(ctx, ws); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, path, testSeal); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Writes(ctx, "main/argocd/web", t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d writes read back, want 3: %+v", len(got), got)
	}
	for i := range got {
		if got[i] != ws[i] {
			t.Errorf("write %d: %+v, want %+v", i, got[i], ws[i])
		}
	}
	if later, _ := s.Writes(ctx, "main/argocd/web", t0.Add(time.Minute)); len(later) != 2 {
		t.Errorf("since a minute later: %d writes, want 2", len(later))
	}
	if err := s.PruneWrites(ctx, t0.Add(6*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.Writes(ctx, "main/argocd/web", time.Time{}); len(left) != 1 || left[0].Manager != "argocd-controller" {
		t.Errorf("after pruning: %+v", left)
	}
}
