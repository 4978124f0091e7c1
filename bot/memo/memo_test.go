package memo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/plan"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/templates"
)

// memoFleet serves every corpus snapshot as one stuck application of its
// own namespace, with its cluster context and its repository.
type memoFleet struct {
	srv     *argocdtest.Server
	mu      sync.Mutex
	snaps   map[string]*drift.Snapshot // by namespace/name
	cluster map[string][]drift.Object
	keys    []string
	rv      int
}

func newMemoFleet(t testing.TB, now time.Time) *memoFleet {
	var files []string
	for _, dir := range []string{"testdata/cases", "testdata/realworld", "testdata/heldout"} {
		files = append(files, corpus.Snapshots(t, dir, ".yaml")...)
	}
	files = append(files, corpus.Snapshots(t, "testdata/real", ".json")...)
	if testing.Short() {
		files = files[:len(files)/4]
	}
	f := &memoFleet{snaps: map[string]*drift.Snapshot{}, cluster: map[string][]drift.Object{}}
	f.srv = argocdtest.NewServer("t")
	t.Cleanup(f.srv.Close)
	for i, file := range files {
		s, err := drift.LoadSnapshot(file)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(file), err)
		}
		md := drift.Map(s.Application, "metadata")
		md["namespace"] = fmt.Sprintf("apps-%03d", i)
		st := drift.Map(s.Application, "status")
		if st == nil {
			st = map[string]any{}
			s.Application["status"] = st
		}
		st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
		sync, _ := st["sync"].(map[string]any)
		if sync == nil {
			sync = map[string]any{}
			st["sync"] = sync
		}
		sync["status"] = "OutOfSync"
		for j := range s.Resources {
			for _, o := range []drift.Object{s.Resources[j].Live} {
				if o != nil && drift.Str(o, "metadata", "resourceVersion") == "" {
					drift.Map(o, "metadata")["resourceVersion"] = "1"
				}
			}
		}
		key := md["namespace"].(string) + "/" + s.AppName()
		f.snaps[key], f.cluster[key] = s, s.Cluster
		f.keys = append(f.keys, key)
		f.srv.Add(s)
	}
	return f
}

func (f *memoFleet) instance(t testing.TB) plan.Instance {
	c, err := argocd.New(argocd.Config{BaseURL: f.srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return plan.Instance{Name: "main", URL: "https://argocd.example.com", Client: c,
		Cluster: func(s *drift.Snapshot) []drift.Object {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.cluster[drift.Str(s.Application, "metadata", "namespace")+"/"+s.AppName()]
		},
		RepoFiles: func(_ context.Context, s *drift.Snapshot) (map[string]string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.snaps[drift.Str(s.Application, "metadata", "namespace")+"/"+s.AppName()].Repo.Files, nil
		}}
}

// change changes one application as Kubernetes, Git or Argo CD would,
// returning what it did.
func (f *memoFleet) change(rnd *rand.Rand, key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.snaps[key]
	s := &drift.Snapshot{Application: drift.DeepCopy(old.Application).(map[string]any), Cluster: old.Cluster, Renders: old.Renders, Repo: old.Repo,
		Resources: slices.Clone(old.Resources)}
	f.rv++
	bump := func(o drift.Object) { drift.Map(o, "metadata")["resourceVersion"] = strconv.Itoa(1000 + f.rv) }
	var live []int
	for i, r := range s.Resources {
		if r.Live != nil {
			live = append(live, i)
		}
	}
	what := ""
	switch n := rnd.IntN(6); {
	case n == 0 && len(live) > 0: // a person edits a field Git declares
		i := live[rnd.IntN(len(live))]
		l := drift.DeepCopy(s.Resources[i].Live).(map[string]any)
		what = "edited " + s.Resources[i].Ref().String()
		if t := s.Resources[i].Target; t != nil {
			if p, ok := stringLeaf(t, nil); ok {
				setPath(l, p, "edited-"+strconv.Itoa(f.rv))
				what += " at /" + strings.Join(p, "/")
			}
		}
		bump(l)
		s.Resources[i].Live = l
	case n == 1 && len(live) > 0: // a controller writes status only
		i := live[rnd.IntN(len(live))]
		l := drift.DeepCopy(s.Resources[i].Live).(map[string]any)
		bump(l)
		s.Resources[i].Live = l
		what = "new resourceVersion of " + s.Resources[i].Ref().String()
	case n == 2 && len(live) > 0: // deleted by hand
		i := live[rnd.IntN(len(live))]
		s.Resources[i].Live = nil
		what = "deleted " + s.Resources[i].Ref().String()
	case n == 3: // Argo CD compared a new commit
		drift.Map(s.Application, "status", "sync")["revision"] = fmt.Sprintf("%040d", f.rv)
		what = "new revision"
	case n == 4: // the cluster context changed: its objects are gone
		f.cluster[key] = nil
		what = "cluster context emptied"
	default: // the spec changed
		drift.Map(s.Application, "spec")["revisionHistoryLimit"] = int64(f.rv)
		what = "spec changed"
	}
	f.snaps[key] = s
	f.srv.Add(s)
	return what
}

// stringLeaf finds a string field of an object outside its metadata.
func stringLeaf(v any, at []string) ([]string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		if len(at) == 0 && (k == "metadata" || k == "apiVersion" || k == "kind") {
			continue
		}
		p := append(slices.Clone(at), k)
		if _, ok := m[k].(string); ok {
			return p, true
		}
		if q, ok := stringLeaf(m[k], p); ok {
			return q, true
		}
	}
	return nil, false
}

func setPath(o map[string]any, p []string, v string) {
	for _, k := range p[:len(p)-1] {
		next, ok := o[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			o[k] = next
		}
		o = next
	}
	o[p[len(p)-1]] = v
}

// seen is what a cycle says and would publish, as text to compare.
func seen(res plan.CycleResult) []string {
	var out []string
	for _, r := range res.Stuck {
		out = append(out, fmt.Sprintf("stuck %s %s/%s why=%q diagnosed=%v err=%v findings=%+v", r.Instance, r.App.Namespace, r.App.Name, r.Why, r.Diagnosed, r.Err, r.Findings))
	}
	for _, a := range res.Apps {
		out = append(out, fmt.Sprintf("app %s/%s stuck=%v failed=%v keys=%v first=%v", a.App.Namespace, a.App.Name, a.Stuck, a.Failed, a.Keys, a.FirstSeen))
	}
	for _, pr := range res.PRs {
		check := "none"
		if pr.Check != nil {
			check = pr.Check.SHA + " " + pr.Check.Digest
		}
		out = append(out, fmt.Sprintf("pr %s %s %s %s\n%s\nplanned=%s check=%s", pr.Key, pr.Fingerprint, pr.Branch, pr.Title, pr.Body, pr.Planned.Digest, check))
	}
	for _, s := range res.Skipped {
		out = append(out, "skipped "+s)
	}
	for k, why := range res.NotProposed {
		out = append(out, "not proposed "+k+" "+why)
	}
	for _, l := range res.Digest.NewStuck {
		out = append(out, fmt.Sprintf("new %+v", l))
	}
	for _, l := range res.Digest.ForPeople {
		out = append(out, fmt.Sprintf("people %+v", l))
	}
	for _, l := range res.Digest.Fleet {
		out = append(out, fmt.Sprintf("fleet %+v", l))
	}
	for _, aw := range res.Writes {
		// As publishing records them: each write at the time they were
		// observed.
		aw.Writes = slices.Clone(aw.Writes)
		for i := range aw.Writes {
			aw.Writes[i].At = aw.At
		}
		out = append(out, fmt.Sprintf("writes %+v", aw))
	}
	for _, err := range res.Errors {
		out = append(out, "error "+err.Error())
	}
	sort.Strings(out)
	return out
}

// peopleKey is the order the cycle keeps the lines left for people in: by
// application, resource and path.
func peopleKey(l templates.PersonLine) [3]string {
	return [3]string{plan.AppKey(l.Instance, l.Namespace, l.App), l.Resource.String(), l.Path}
}

// sameCycle fails the test where a cycle that reused from a memo (who)
// says or proposes other than a full one, or either puts the lines left for
// people out of order.
func sameCycle(t *testing.T, step, who string, got, want plan.CycleResult) {
	t.Helper()
	for _, res := range []plan.CycleResult{got, want} {
		// What seen does not say: the order people read lines in.
		if !slices.IsSortedFunc(res.Digest.ForPeople, func(a, b templates.PersonLine) int {
			ka, kb := peopleKey(a), peopleKey(b)
			return slices.Compare(ka[:], kb[:])
		}) {
			t.Errorf("%s: the lines left for people are not in order", step)
		}
	}
	g, w := seen(got), seen(want)
	if slices.Equal(g, w) {
		return
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			t.Errorf("%s: %s lacks %.4000s", step, who, l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			t.Errorf("%s: %s has %.4000s, a full cycle not", step, who, l)
		}
	}
}

// TestMemoCycleAsFull: a cycle that reuses what it can from the memo says
// and proposes exactly what a full cycle says and proposes, on every
// corpus, with nothing changed and after random changes of the kinds a
// fleet sees (a person's edit, a status write, a deletion, a new commit, a
// new spec, a changed cluster context); what changed is diagnosed again.
func TestMemoCycleAsFull(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	f := newMemoFleet(t, now)
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\nfullCycleEvery: 1000\n"))
	if err != nil {
		t.Fatal(err)
	}
	in := f.instance(t)
	first := func(string) time.Time { return now.Add(-2 * time.Hour) }
	// Hard refreshes are not bounded: under a bound, which suspected
	// renders get one depends on the order workers take applications in,
	// even between two full cycles.
	mem := memo.New(0)
	// Each step's cycles run a minute after the last step's: what a reused
	// application gives is dated by the cycle, not by when it was kept.
	at := now
	memoCycle := func() plan.CycleResult {
		at = at.Add(time.Minute)
		return plan.Cycle(context.Background(), cfg, []plan.Instance{in}, at, plan.CycleOptions{FirstSeen: first, Memo: mem, HardRefreshes: 1 << 20})
	}
	fullCycle := func() plan.CycleResult {
		return plan.Cycle(context.Background(), cfg, []plan.Instance{in}, at, plan.CycleOptions{FirstSeen: first, HardRefreshes: 1 << 20})
	}
	compare := func(step string, got, want plan.CycleResult) {
		t.Helper()
		sameCycle(t, step, "the memo cycle", got, want)
	}

	res := memoCycle()
	if res.Reused != 0 || len(res.Stuck) < len(f.keys)/2 {
		t.Fatalf("first cycle: reused %d (want 0), stuck %d of %d", res.Reused, len(res.Stuck), len(f.keys))
	}
	stored := mem.Len()
	if stored < len(res.Stuck)/2 {
		t.Fatalf("the memo keeps %d of %d stuck applications", stored, len(res.Stuck))
	}
	res = memoCycle()
	compare("nothing changed", res, fullCycle())
	if res.Reused != stored {
		t.Errorf("nothing changed: %d reused, want every one kept (%d)", res.Reused, stored)
	}

	rnd := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 3; round++ {
		changed := 0
		for _, key := range f.keys {
			if rnd.IntN(4) == 0 {
				f.change(rnd, key)
				changed++
			}
		}
		before := mem.Len()
		res = memoCycle()
		compare(fmt.Sprintf("round %d, %d changed", round, changed), res, fullCycle())
		if res.Reused > before-changed/2 {
			t.Errorf("round %d: %d reused of %d kept with %d changed: changed applications were reused", round, res.Reused, before, changed)
		}
		if res.Reused == 0 {
			t.Errorf("round %d: nothing reused", round)
		}
		t.Logf("round %d: %d of %d applications changed; %d stuck, %d reused", round, changed, len(f.keys), len(res.Stuck), res.Reused)
	}
}

// TestMemoFullEvery: every fullCycleEvery cycles nothing is reused.
func TestMemoFullEvery(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	s := corpus.Load(t, "testdata/cases/01-hpa-statefulset.yaml")
	st := drift.Map(s.Application, "status")
	st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
	srv := argocdtest.NewServer("t", s)
	defer srv.Close()
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	in := plan.Instance{Name: "main", Client: c}
	cfg, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\nfullCycleEvery: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	mem := memo.New(0)
	var reused []int
	for range 7 {
		res := plan.Cycle(context.Background(), cfg, []plan.Instance{in}, now, plan.CycleOptions{Memo: mem})
		if len(res.Stuck) != 1 {
			t.Fatalf("stuck %d, want 1; errors %v", len(res.Stuck), res.Errors)
		}
		reused = append(reused, res.Reused)
	}
	if want := []int{0, 1, 1, 0, 1, 1, 0}; !slices.Equal(reused, want) {
		t.Errorf("reused per cycle %v, want %v", reused, want)
	}
	// A reloaded config is a new config: nothing is reused under it.
	again, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\nfullCycleEvery: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if res := plan.Cycle(context.Background(), again, []plan.Instance{in}, now, plan.CycleOptions{Memo: mem}); res.Reused != 0 {
		t.Errorf("a reloaded config reused %d diagnoses", res.Reused)
	}
}
