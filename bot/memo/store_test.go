package memo_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/plan"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/state"
)

// sameValue says where a differs from b ("" when nowhere): every field,
// unexported ones included, with a nil and an empty slice or map taken as
// equal, times compared as instants, and functions (a plan's edit steps,
// which are not kept) skipped.
func sameValue(a, b reflect.Value, at string) string {
	if a.IsValid() != b.IsValid() {
		return at + ": one is missing"
	}
	if !a.IsValid() {
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: %s against %s", at, a.Type(), b.Type())
	}
	if a.Type() == reflect.TypeFor[time.Time]() {
		ta, tb := timeOf(a), timeOf(b)
		if !ta.Equal(tb) {
			return fmt.Sprintf("%s: %v against %v", at, ta, tb)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Func:
		return ""
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return at + ": one is nil"
			}
			return ""
		}
		return sameValue(a.Elem(), b.Elem(), at)
	case reflect.Struct:
		for i := range a.NumField() {
			if d := sameValue(a.Field(i), b.Field(i), at+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice, reflect.Array:
		if a.Type().Elem().Kind() == reflect.Func {
			return ""
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d items against %d", at, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := sameValue(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d keys against %d", at, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			if d := sameValue(a.MapIndex(k), b.MapIndex(k), fmt.Sprintf("%s[%v]", at, k)); d != "" {
				return d
			}
		}
		return ""
	case reflect.String:
		if a.String() != b.String() {
			return fmt.Sprintf("%s: %q against %q", at, a.String(), b.String())
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return at + ": booleans differ"
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return fmt.Sprintf("%s: %d against %d", at, a.Int(), b.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return fmt.Sprintf("%s: %d against %d", at, a.Uint(), b.Uint())
		}
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf("%s: %v against %v", at, a.Float(), b.Float())
		}
	default:
		return fmt.Sprintf("%s: cannot compare a %s", at, a.Kind())
	}
	return ""
}

// timeOf reads a time.Time, exported or not.
func timeOf(v reflect.Value) time.Time {
	if v.CanInterface() {
		return v.Interface().(time.Time)
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(reflect.NewAt(v.Type(), v.Addr().UnsafePointer()).Elem())
	return c.Interface().(time.Time)
}

// TestMemoRecordsReadBack: every application of every corpus that a cycle
// keeps in its memo is written to the state store and read back as it was,
// field by field, its pull requests' policy derived again from the config.
func TestMemoRecordsReadBack(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	f := newMemoFleet(t, now)
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\n" +
		"policy: {labels: [drift], manualChanges: adopt}\n"))
	if err != nil {
		t.Fatal(err)
	}
	mem := memo.New(0)
	res := plan.Cycle(context.Background(), cfg, []plan.Instance{f.instance(t)}, now, plan.CycleOptions{Memo: mem, HardRefreshes: 1 << 20})
	if len(res.PRs) == 0 {
		t.Fatal("no pull request proposed: nothing of one is checked")
	}
	kinds := map[string]int{}
	for _, pr := range res.PRs {
		kinds[string(pr.Plan.Kind)]++
	}
	t.Logf("%d applications kept, %d pull requests of kinds %v", mem.Len(), len(res.PRs), kinds)
	if kinds["adopt-live"] == 0 {
		t.Error("no adopt-live fix: its policy, derived again when read back, is not checked")
	}
	for k, e := range mem.Apps() {
		b, err := memo.EncodeEntry(e)
		if err != nil {
			t.Errorf("%s: not kept: %v", k, err)
			continue
		}
		back, err := memo.DecodeEntry(b, cfg)
		if err != nil {
			t.Errorf("%s: does not read back: %v", k, err)
			continue
		}
		if d := sameValue(reflect.ValueOf(e).Elem(), reflect.ValueOf(back).Elem(), k); d != "" {
			t.Errorf("read back otherwise: %s", d)
		}
	}
}

// openStore opens a state database in a test's directory.
func openStore(t *testing.T, dir string) *state.Store {
	t.Helper()
	seal, err := memo.NewSeal([]byte("the GitHub App's key"), [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(context.Background(), filepath.Join(dir, "state.db"), seal)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestMemoAcrossRestarts: a memo saved in the state store and loaded by a
// new process (a restart, a new leader) is reused at once, and its cycles
// say and propose exactly what full cycles do, on every corpus, before and
// after random changes. A record of another build or secret, another
// config, or one changed in the file, is not read back and is forgotten.
func TestMemoAcrossRestarts(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	f := newMemoFleet(t, now)
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\nfullCycleEvery: 1000\n"))
	if err != nil {
		t.Fatal(err)
	}
	in := f.instance(t)
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	seal, err := memo.NewSeal([]byte("the GitHub App's key"), [32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	first := func(string) time.Time { return now.Add(-2 * time.Hour) }
	at := now
	run := func(mem *memo.Memo) plan.CycleResult {
		return plan.Cycle(ctx, cfg, []plan.Instance{in}, at, plan.CycleOptions{FirstSeen: first, Memo: mem, HardRefreshes: 1 << 20})
	}
	compare := func(step string, got, want plan.CycleResult) {
		t.Helper()
		sameCycle(t, step, "the restarted memo's cycle", got, want)
	}
	mem := memo.New(0)
	run(mem)
	kept := mem.Len()
	if err := mem.Save(ctx, st, seal); err != nil {
		t.Fatal(err)
	}
	// A restart: a new memo reads what the last one saved.
	restarted := func(step string) *memo.Memo {
		t.Helper()
		m := memo.New(0)
		n, err := m.Load(ctx, st, seal, cfg)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if n != mem.Len() {
			t.Errorf("%s: %d read back of %d saved", step, n, mem.Len())
		}
		return m
	}
	mem = restarted("after the first cycle")
	at = at.Add(time.Minute)
	res := run(mem)
	compare("restarted, nothing changed", res, run(nil))
	if res.Reused != kept {
		t.Errorf("restarted, nothing changed: %d reused, want every one kept (%d)", res.Reused, kept)
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	for round := range 2 {
		if err := mem.Save(ctx, st, seal); err != nil {
			t.Fatal(err)
		}
		mem = restarted(fmt.Sprintf("round %d", round))
		changed := 0
		for _, key := range f.keys {
			if rnd.IntN(4) == 0 {
				f.change(rnd, key)
				changed++
			}
		}
		at = at.Add(time.Minute)
		before := mem.Len()
		res := run(mem)
		compare(fmt.Sprintf("round %d, %d changed", round, changed), res, run(nil))
		if res.Reused == 0 || res.Reused > before-changed/2 {
			t.Errorf("round %d: %d reused of %d read back with %d changed", round, res.Reused, before, changed)
		}
	}
	if err := mem.Save(ctx, st, seal); err != nil {
		t.Fatal(err)
	}
	recs := records(t, st)
	if len(recs) != mem.Len()+1 {
		t.Errorf("the store keeps %d records, the memo %d entries and its count: what was dropped is not forgotten", len(recs), mem.Len())
	}

	otherKey, _ := memo.NewSeal([]byte("another key"), [32]byte{1})
	build, _ := memo.NewSeal([]byte("the GitHub App's key"), [32]byte{2})
	cfg2, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\nfullCycleEvery: 999\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		seal memo.Seal
		cfg  *config.Config
	}{{"another secret", otherKey, cfg}, {"another build", build, cfg}, {"another config", seal, cfg2}} {
		if n, err := memo.New(0).Load(ctx, st, c.seal, c.cfg); err != nil || n != 0 {
			t.Errorf("%s: %d records read back (%v), want none", c.name, n, err)
		}
	}

	// A record changed in the file, one byte at a time in turn, is not
	// read back; the next save forgets it.
	var key string
	for k := range recs {
		if k != memo.CountKey {
			key = k
			break
		}
	}
	for i := 0; i < len(recs[key]); i += 1 + len(recs[key])/64 {
		bad := bytes.Clone(recs[key])
		bad[i] ^= 0x20
		if err := st.SaveMemo(ctx, nil, func(write func(string, []byte) error) error { return write(key, bad) }); err != nil {
			t.Fatal(err)
		}
		m := memo.New(0)
		n, err := m.Load(ctx, st, seal, cfg)
		if err != nil || n != len(recs)-2 || m.Apps()[key] != nil {
			t.Fatalf("byte %d of %s changed: %d of %d read back (%v)", i, key, n, len(recs)-1, err)
		}
	}
	// A record moved under another application's key is not read back
	// for it.
	var other string
	for k := range recs {
		if k != memo.CountKey && k != key {
			other = k
			break
		}
	}
	if err := st.SaveMemo(ctx, nil, func(write func(string, []byte) error) error { return write(other, recs[key]) }); err != nil {
		t.Fatal(err)
	}
	if m := memo.New(0); func() bool { _, err := m.Load(ctx, st, seal, cfg); return err != nil || m.Apps()[other] != nil }() {
		t.Errorf("the record of %s, moved under %s, is read back for it", key, other)
	}
	m := memo.New(0)
	if _, err := m.Load(ctx, st, seal, cfg); err != nil {
		t.Fatal(err)
	}
	if err := m.Save(ctx, st, seal); err != nil {
		t.Fatal(err)
	}
	if left := records(t, st); left[key] != nil || left[other] != nil || len(left) != len(recs)-2 {
		t.Errorf("after a save, the changed and the moved records are still kept (%d records of %d)", len(left), len(recs))
	}
}

// TestMemoCountAcrossLoads: a bot that runs one cycle per process, each
// going on from the memo the last one saved (driftfix once in a CronJob),
// still diagnoses every stuck application every fullCycleEvery cycles, and
// reuses in the others; a count changed in the file is not read back.
func TestMemoCountAcrossLoads(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	f := newMemoFleet(t, now)
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\nfullCycleEvery: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	in := f.instance(t)
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	seal, _ := memo.NewSeal([]byte("key"), [32]byte{1})
	var reused []int
	for i := range 7 {
		mem := memo.New(0)
		if _, err := mem.Load(ctx, st, seal, cfg); err != nil {
			t.Fatal(err)
		}
		res := plan.Cycle(ctx, cfg, []plan.Instance{in}, now.Add(time.Duration(i)*time.Minute), plan.CycleOptions{Memo: mem, HardRefreshes: 1 << 20,
			FirstSeen: func(string) time.Time { return now.Add(-2 * time.Hour) }})
		if err := mem.Save(ctx, st, seal); err != nil {
			t.Fatal(err)
		}
		reused = append(reused, res.Reused)
	}
	for i, n := range reused {
		if full := i%3 == 0; full != (n == 0) {
			t.Errorf("cycles reused %v: every third, from the first, must reuse nothing and the others must reuse", reused)
			break
		}
	}
	// A count changed in the file is not read back: the memo goes on as
	// one read back without a count.
	mem := memo.New(0)
	if _, err := mem.Load(ctx, st, seal, cfg); err != nil || mem.Cycles() != len(reused) {
		t.Fatalf("the count read back is %d (%v), want %d", mem.Cycles(), err, len(reused))
	}
	rec := records(t, st)[memo.CountKey]
	rec[len(rec)-1]--
	if err := st.SaveMemo(ctx, nil, func(write func(string, []byte) error) error { return write(memo.CountKey, rec) }); err != nil {
		t.Fatal(err)
	}
	mem = memo.New(0)
	if n, err := mem.Load(ctx, st, seal, cfg); err != nil || n == 0 || mem.Cycles() != 1 {
		t.Errorf("a changed count: %d read back, count %d (%v); want the entries and a count of 1", n, mem.Cycles(), err)
	}
}

// records are the memo's records in a state database.
func records(t *testing.T, st *state.Store) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	if err := st.MemoRecords(context.Background(), func(k string, rec []byte) { out[k] = rec }); err != nil {
		t.Fatal(err)
	}
	return out
}

// keptEntries are the memo entries of a cycle over every corpus (a
// quarter of it with -short), under cfg.
func keptEntries(tb testing.TB, cfg *config.Config) []*memo.Entry {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	f := newMemoFleet(tb, now)
	mem := memo.New(0)
	plan.Cycle(context.Background(), cfg, []plan.Instance{f.instance(tb)}, now, plan.CycleOptions{Memo: mem, HardRefreshes: 1 << 20})
	var out []*memo.Entry
	for _, k := range slices.Sorted(maps.Keys(mem.Apps())) {
		out = append(out, mem.Apps()[k])
	}
	return out
}

// FuzzMemoRecord: any bytes read as a record either fail or read back an
// entry whose record reads back as itself; nothing panics or allocates
// past what the bytes bound. The seeds are the records of every corpus
// application and values of each kind.
func FuzzMemoRecord(f *testing.F) {
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\npolicy: {manualChanges: adopt}\n"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range keptEntries(f, cfg) {
		b, err := memo.EncodeEntry(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := memo.DecodeEntry(b, cfg)
		if err != nil {
			return
		}
		again, err := memo.EncodeEntry(e)
		if err != nil {
			t.Fatalf("read back an entry that is not written: %v", err)
		}
		e2, err := memo.DecodeEntry(again, cfg)
		if err != nil {
			t.Fatalf("a record written does not read back: %v", err)
		}
		if d := sameValue(reflect.ValueOf(e).Elem(), reflect.ValueOf(e2).Elem(), "entry"); d != "" {
			t.Fatalf("read back otherwise: %s", d)
		}
	})
}

// FuzzMemoValue: any bytes read as a finding's value either fail or read
// back a value whose encoding reads back as itself.
func FuzzMemoValue(f *testing.F) {
	for _, v := range []any{nil, true, "x", int64(-3), 1.5, map[string]any{"a": []any{int64(1), nil, map[string]any{}}}} {
		b, err := memo.AppendValue(nil, v, 0)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, rest, err := memo.ReadValue(b, 0)
		if err != nil {
			return
		}
		again, err := memo.AppendValue(nil, v, 0)
		if err != nil {
			t.Fatalf("read back %#v, which does not encode: %v", v, err)
		}
		w, _, err := memo.ReadValue(again, 0)
		if err != nil {
			t.Fatalf("%x does not read back: %v", again, err)
		}
		third, err := memo.AppendValue(nil, w, 0)
		if err != nil || !bytes.Equal(third, again) {
			t.Fatalf("%x (%d bytes left) read back as %#v, encoded as %x, then as %x (%v)", b, len(rest), v, again, third, err)
		}
	})
}

// BenchmarkMemoRecord writes and reads back the records of every corpus
// application a cycle keeps, as Save and Load do.
func BenchmarkMemoRecord(b *testing.B) {
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	entries := keptEntries(b, cfg)
	var size int
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			size = 0
			for _, e := range entries {
				rec, err := memo.EncodeEntry(e)
				if err != nil {
					b.Fatal(err)
				}
				size += len(rec)
			}
		}
		b.ReportMetric(float64(size)/float64(len(entries)), "B/record")
	})
	recs := make([][]byte, len(entries))
	for i, e := range entries {
		recs[i], _ = memo.EncodeEntry(e)
	}
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			for _, rec := range recs {
				if _, err := memo.DecodeEntry(rec, cfg); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestMemoEvidenceReadsBack: evidence is kept field by field, whichever
// fields are set, and a kind this build does not list reads back by name.
func TestMemoEvidenceReadsBack(t *testing.T) {
	cfgRef := drift.Ref{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", Name: "istio-sidecar-injector"}
	ev := []drift.Evidence{
		{Kind: drift.EvidenceWebhook, Object: &cfgRef, Webhook: "sidecar.istio.io", Text: "MutatingWebhookConfiguration istio-sidecar-injector admits it"},
		{Kind: drift.EvidenceDryRun, Proof: drift.ProofDryRunHolds, Text: "a dry run stores the live value too"},
		{Kind: drift.EvidenceManager, Manager: "cainjector", Text: ""},
		{Kind: drift.EvidenceSensitiveRule, Path: "/spec/template", Detail: "/spec/template of Deployment shop/web", Text: "covers a sensitive path"},
		{Kind: "grant-proof", Text: "a kind of a later build"},
	}
	for _, tc := range [][]drift.Evidence{nil, ev} {
		back, left, err := memo.DecodeEvidence(memo.EncodeEvidence(tc))
		if err != nil || left != 0 {
			t.Fatalf("read back: %v, %d bytes left", err, left)
		}
		if d := sameValue(reflect.ValueOf(tc), reflect.ValueOf(back), "evidence"); d != "" {
			t.Errorf("read back otherwise: %s", d)
		}
	}
	b := memo.EncodeEvidence(ev[:1])
	for cut := range len(b) {
		if _, _, err := memo.DecodeEvidence(b[:cut]); err == nil {
			t.Errorf("a record cut at byte %d of %d reads back", cut, len(b))
		}
	}
}
