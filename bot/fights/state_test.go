package fights

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/state"
)

// TestFightRecordedInState runs the fight through the state database, as a
// bot restarting between cycles would: each cycle's writes are recorded,
// the next cycle watches what the database holds, and the fight is told
// from the writes read back; the database holds no value.
func TestFightRecordedInState(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	const app = "main/argocd/web"
	toState := func(w Write) state.PathWrite {
		ref, _ := json.Marshal(w.Resource)
		return state.PathWrite{App: app, Resource: string(ref), Path: w.Path, At: w.At, Value: w.Value, Manager: w.Manager}
	}
	fromState := func(p state.PathWrite) Write {
		var ref drift.Ref
		if err := json.Unmarshal([]byte(p.Resource), &ref); err != nil {
			t.Fatal(err)
		}
		return Write{Resource: ref, Path: p.Path, At: p.At, Value: p.Value, Manager: p.Manager}
	}
	read := func(st *state.Store) []Write {
		ps, err := st.Writes(ctx, app, t0.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var ws []Write
		for _, p := range ps {
			ws = append(ws, fromState(p))
		}
		return ws
	}
	for i := 0; i < 8; i++ {
		st, err := state.Open(ctx, path, noSeal{}) // a fresh process each cycle
		if err != nil {
			t.Fatal(err)
		}
		tier, by := "gold", "argocd-controller"
		if i%2 == 1 {
			tier, by = "silver", "tier-operator"
		}
		at := t0.Add(time.Duration(i) * 5 * time.Minute)
		ws, err := Observe(cycleSnapshot(at, 2, "argocd-controller", tier, by), at, Watched(read(st)))
		if err != nil {
			t.Fatal(err)
		}
		var ps []state.PathWrite
		for _, w := range ws {
			if w.Value == tier {
				t.Fatalf("the value itself would be stored: %+v", w)
			}
			ps = append(ps, toState(w))
		}
		if err := st.RecordWrites(ctx, ps); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	st, err := state.Open(ctx, path, noSeal{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fs := Detect(read(st), 0)
	if len(fs) != 1 || fs[0].Writers != [2]string{"argocd-controller", "tier-operator"} || fs[0].Flips != 6 || len(fs[0].Paths) != 2 {
		t.Fatalf("fights told from the state database: %+v", fs)
	}
}

// noSeal opens no sealed row: the fights' tables carry none, and these
// tests write no other.
type noSeal struct{}

func (noSeal) SealRow(table, key string, body []byte) []byte     { return nil }
func (noSeal) OpenRow(table, key string, body, seal []byte) bool { return false }
