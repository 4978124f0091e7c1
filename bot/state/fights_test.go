package state

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestFightsKeptAcrossRestarts: a reported fight stays reported with its
// first time, the latest cause at each path wins, and the self-heal counts
// come back oldest first; pruning forgets the old ones.
func TestFightsKeptAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	const app = "main/argocd/web"
	st, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range []time.Time{t0, t0.Add(15 * time.Minute)} {
		if err := st.FightIsReported(ctx, "f1", app, at); err != nil {
			t.Fatal(err)
		}
		if err := st.RecordCauses(ctx, []PathCause{{App: app, Resource: "r", Path: "/spec/replicas", Cause: []string{"controller-write", "hpa-replicas"}[i], Fix: "remove-field", Writer: "kube-controller-manager", At: at}}); err != nil {
			t.Fatal(err)
		}
		if err := st.RecordSelfHeal(ctx, app, SelfHealCount{At: at, Revision: "a1", Syncs: 3 + 3*i}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if st, err = Open(ctx, path, testSeal); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if at, ok, err := st.FightReported(ctx, "f1"); err != nil || !ok || !at.Equal(t0) {
		t.Errorf("fight f1 reported %v at %s (%v), want at %s", ok, at, err, t0)
	}
	if _, ok, err := st.FightReported(ctx, "f2"); err != nil || ok {
		t.Errorf("a fight never reported reads as reported (%v)", err)
	}
	if cs, err := st.Causes(ctx, app); err != nil || len(cs) != 1 || cs[0].Cause != "hpa-replicas" {
		t.Errorf("causes %+v (%v), want the latest alone", cs, err)
	}
	hs, err := st.SelfHealSince(ctx, app, t0)
	if err != nil || len(hs) != 2 || hs[0].Syncs != 3 || hs[1].Syncs != 6 {
		t.Errorf("self-heal counts %+v (%v)", hs, err)
	}
	if err := st.PruneSelfHeal(ctx, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if hs, _ := st.SelfHealSince(ctx, app, t0); len(hs) != 1 {
		t.Errorf("after pruning %+v", hs)
	}
}
