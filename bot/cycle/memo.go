package cycle

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/templates"
)

// Memo keeps, from one cycle to the next, what each stuck application's
// last diagnosis depended on and what came of it, so that a cycle reuses
// both for an application none of it changed for, without reading or
// diagnosing it again (CycleOptions.Memo). What a diagnosis depends on:
//
//   - what Argo CD's list says of the application (its spec, sync status
//     and compared revision, last operation, its resources' sync
//     statuses), as argocd.AppSummary.Listed digests it;
//   - each resource's live resourceVersion, read from Argo CD's resource
//     tree (one small call instead of a refresh, the managed resources and
//     a diagnosis; a tree served byte for byte as last time is not decoded);
//   - the instance's Argo CD settings, and the cluster objects its
//     diagnosis consults (HPAs, webhooks, namespaces, CRDs, argocd-cm,
//     other Applications), by uid and resourceVersion;
//   - the config (a reloaded config empties the memo), the date its fixes
//     are dated by, and the paths watched for fights;
//   - for each proposed fix with an open pull request, the head commit
//     its check was made on.
//
// A candidate whose Git source has moved past the commit Argo CD compared
// is never reused (collect.ScanOptions.GitCommit). Applications whose
// findings feed an instance's ignore-rule inventory or platform fixes
// need their snapshot each cycle and are always diagnosed. Every
// config.FullCycleEvery cycles nothing is reused. Save and Load keep it
// in the state store, so that a restart or a new leader goes on from it.
type Memo struct {
	mu     sync.Mutex
	cfg    *config.Config
	cycles int
	full   bool
	max    int
	apps   map[string]*memoEntry
	// touched are the applications stored or reused this cycle; the others
	// are dropped when it ends.
	touched map[string]bool
	taken   map[string]*memoEntry
	// dirty are the applications stored since the last Save, gone those
	// dropped since.
	dirty, gone map[string]bool
}

// DefaultMemoMax bounds the applications a Memo keeps.
const DefaultMemoMax = 100_000

// NewMemo returns an empty memo keeping at most max applications
// (DefaultMemoMax when max is 0 or less).
func NewMemo(max int) *Memo {
	if max <= 0 {
		max = DefaultMemoMax
	}
	return &Memo{max: max, apps: map[string]*memoEntry{}, dirty: map[string]bool{}, gone: map[string]bool{}}
}

// memoEntry is one application's last diagnosis: what it depended on, and
// what came of it.
type memoEntry struct {
	// project, namespace and name choose the application's policy.
	project, namespace, name string
	listed                   [16]byte
	settings                 [32]byte
	cluster                  [32]byte
	at                       time.Time
	watch                    string
	// refs are the application's resources; live digests their live
	// resourceVersions in that order (versionsSum).
	refs []drift.Ref
	live [32]byte
	// tree is the digest of the resource tree last served when live was
	// found unchanged: the same tree again holds the same versions.
	tree [32]byte

	kept      []drift.Kept
	keys      []string
	diagnosed bool
	part      memoPart
	writes    *AppWrites
}

// memoPart is what of a CycleResult planning one application gives, kept
// (the rest of a CycleResult is the fleet's).
type memoPart struct {
	newStuck    []templates.AppLine
	forPeople   []templates.PersonLine
	prs         []ProposedPR
	skipped     []string
	notProposed map[string]string
}

// versionsSum digests the live resourceVersion of each of refs, in order,
// as version answers them (false: no live object).
func versionsSum(refs []drift.Ref, version func(drift.Ref) (string, bool)) [32]byte {
	h := sha256.New()
	for _, ref := range refs {
		rv, ok := version(ref)
		if !ok {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
			h.Write([]byte(rv))
		}
		h.Write([]byte{'\n'})
	}
	return [32]byte(h.Sum(nil))
}

// begin starts a cycle under cfg: a new config empties the memo, and every
// cfg.FullCycleEvery-th cycle reuses nothing.
func (m *Memo) begin(cfg *config.Config) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cfg != cfg {
		for k := range m.apps {
			m.gone[k] = true
		}
		clear(m.dirty)
		m.apps, m.cfg = map[string]*memoEntry{}, cfg
	}
	every := cfg.FullCycleEvery
	if every <= 0 {
		every = config.DefaultFullCycleEvery
	}
	m.full = m.cycles%every == 0
	m.cycles++
	m.touched, m.taken = map[string]bool{}, map[string]*memoEntry{}
}

// end drops the applications the cycle neither stored nor reused: no
// longer stuck, failed, or of an instance that did not answer.
func (m *Memo) end() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.apps {
		if !m.touched[k] {
			delete(m.apps, k)
			delete(m.dirty, k)
			m.gone[k] = true
		}
	}
	m.touched, m.taken = nil, nil
}

// Len returns how many applications the memo holds.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.apps)
}

// reuser returns the collect.ScanOptions.Reuse of one instance's scan.
func (m *Memo) reuser(cfg *config.Config, in Instance, cluster func(*drift.Snapshot) []drift.Object, opts CycleOptions, now time.Time) func(context.Context, *collect.ScanResult) bool {
	return func(ctx context.Context, r *collect.ScanResult) bool {
		key := AppKey(in.Name, r.App.Namespace, r.App.Name)
		m.mu.Lock()
		e, full := m.apps[key], m.full
		m.mu.Unlock()
		if e == nil || full || e.listed != r.App.Listed || e.settings != r.Settings {
			return false
		}
		if opts.RunNow != nil && opts.RunNow(key) {
			return false // a person asked for a fresh diagnosis
		}
		if at, _ := datedAt(opts, key, now); !at.Equal(e.at) || watchKey(opts, key) != e.watch {
			return false
		}
		if cfg.Policy.IgnoreRules.Enabled || forPlatform(cfg, in.Name, e.kept) {
			return false
		}
		if e.writes != nil && e.writes.SelfHealSyncs > 0 {
			return false // its count of recent syncs changes as time passes
		}
		if cluster != nil && clusterSum(cluster, probe(r, e.refs)) != e.cluster {
			return false
		}
		if !m.headsUnchanged(ctx, in, opts, e) {
			return false
		}
		m.mu.Lock()
		tree := e.tree
		m.mu.Unlock()
		seen, sum, same, err := in.Client.LiveVersions(ctx, r.App.Namespace, r.App.Name, tree)
		if err != nil {
			return false // read and diagnosed as usual, which reports why
		}
		if !same && versionsSum(e.refs, func(ref drift.Ref) (string, bool) { rv, ok := seen[ref]; return rv, ok }) != e.live {
			return false
		}
		m.mu.Lock()
		e.tree = sum
		m.touched[key], m.taken[key] = true, e
		m.mu.Unlock()
		return true
	}
}

// headsUnchanged says each open pull request of the entry's fixes has the
// head its check was made on, and none was opened since.
func (m *Memo) headsUnchanged(ctx context.Context, in Instance, opts CycleOptions, e *memoEntry) bool {
	if opts.Open == nil || in.BranchFiles == nil {
		return true
	}
	for _, pr := range e.part.prs {
		if !opts.Open(pr.Key) {
			continue
		}
		if pr.Check == nil {
			return false
		}
		if _, sha, err := in.BranchFiles(ctx, pr.RepoURL, pr.Branch); err != nil || sha != pr.Check.SHA {
			return false
		}
	}
	return true
}

// take returns the entry Reuse accepted for an application this cycle.
func (m *Memo) take(key string) *memoEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.taken[key]
}

// store keeps what one application's diagnosis and planning gave, when it
// may be reused: it finished without errors.
func (m *Memo) store(key string, e *memoEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.apps[key]; !ok && len(m.apps) >= m.max {
		return
	}
	m.apps[key], m.touched[key] = e, true
	m.dirty[key] = true
	delete(m.gone, key)
}

// entryFor builds the memo entry of a diagnosed application: r carries its
// snapshot; part is what planning it gave.
func entryFor(r *collect.ScanResult, cluster func(*drift.Snapshot) []drift.Object, at time.Time, watch string, p planned, part *CycleResult, writes *AppWrites) *memoEntry {
	e := &memoEntry{project: r.App.Project, namespace: r.App.Namespace, name: r.App.Name, listed: r.App.Listed, settings: r.Settings, at: at, watch: watch,
		refs: make([]drift.Ref, len(r.Snapshot.Resources)),
		kept: slices.Clip(p.findings), keys: slices.Clip(p.keys), diagnosed: p.diagnosed, writes: writes}
	live := make(map[drift.Ref]drift.Object, len(r.Snapshot.Resources))
	for i := range r.Snapshot.Resources {
		res := &r.Snapshot.Resources[i]
		e.refs[i] = res.Ref()
		if res.Live != nil {
			live[e.refs[i]] = res.Live
		}
	}
	e.live = versionsSum(e.refs, func(ref drift.Ref) (string, bool) {
		o, ok := live[ref]
		return drift.Str(o, "metadata", "resourceVersion"), ok
	})
	if cluster != nil {
		e.cluster = clusterSum(cluster, probe(r, e.refs))
	}
	e.part = memoPart{newStuck: slices.Clip(part.Digest.NewStuck), forPeople: slices.Clip(part.Digest.ForPeople),
		prs: slices.Clip(part.PRs), skipped: slices.Clip(part.Skipped), notProposed: part.NotProposed}
	return e
}

// replay is what an entry gives a cycle that reuses it: its part, with the
// note of why the application is stuck as this cycle's list says, and the
// open pull requests' checks only where they are open now.
func (e *memoEntry) replay(why string, opts CycleOptions) CycleResult {
	var part CycleResult
	part.NotProposed = e.part.notProposed
	part.Digest.NewStuck = slices.Clone(e.part.newStuck)
	for i := range part.Digest.NewStuck {
		part.Digest.NewStuck[i].Note = why
	}
	part.PRs = slices.Clone(e.part.prs)
	for i := range part.PRs {
		if opts.Open == nil || !opts.Open(part.PRs[i].Key) {
			part.PRs[i].Check = nil
		}
	}
	part.Digest.ForPeople = e.part.forPeople // read only: absorbing copies it
	part.Skipped = slices.Clone(e.part.skipped)
	return part
}

// replayWrites is what observing the application's writes again at now
// gives: its live objects are the ones observed, so only the time moves
// (AppWrites.At; the writes themselves are the memo's, not copied).
func (e *memoEntry) replayWrites(now time.Time) (AppWrites, bool) {
	if e.writes == nil {
		return AppWrites{}, false
	}
	aw := *e.writes
	aw.At = now
	aw.Writes = slices.Clip(aw.Writes)
	return aw, true
}

// datedAt is the time an application's fixes are dated by, and when it
// was first seen stuck (zero when not asked).
func datedAt(opts CycleOptions, key string, now time.Time) (at, first time.Time) {
	if opts.FirstSeen == nil {
		return now, time.Time{}
	}
	first = opts.FirstSeen(key)
	return first, first
}

// watchKey names the paths of an application watched for fights.
func watchKey(opts CycleOptions, key string) string {
	if opts.Watch == nil {
		return ""
	}
	var b strings.Builder
	for _, k := range opts.Watch(key) {
		b.WriteString(k.Resource.String())
		b.WriteByte(0)
		b.WriteString(k.Path)
		b.WriteByte('\n')
	}
	return b.String()
}

// forPlatform says an application's findings may feed a platform fix of
// its instance, which needs its snapshot (keepForPlatform).
func forPlatform(cfg *config.Config, instance string, kept []drift.Kept) bool {
	if _, ok := cfg.Platform(instance); !ok {
		return false
	}
	for _, f := range kept {
		if classifiers.Of(f.Cause).Fleet != classifiers.FleetNone {
			return true
		}
	}
	return false
}

// probe is a snapshot of what the cluster context of an application is
// chosen by: the Application's name and namespace and its resources' refs.
func probe(r *collect.ScanResult, refs []drift.Ref) *drift.Snapshot {
	s := &drift.Snapshot{Application: drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": r.App.Name, "namespace": r.App.Namespace}}}
	for _, ref := range refs {
		api := "v1"
		if ref.Group != "" {
			api = ref.Group + "/v1"
		}
		md := map[string]any{"name": ref.Name}
		if ref.Namespace != "" {
			md["namespace"] = ref.Namespace
		}
		s.Resources = append(s.Resources, drift.Resource{Target: drift.Object{"apiVersion": api, "kind": ref.Kind, "metadata": md}})
	}
	return s
}

// clusterSum digests the cluster objects an application's diagnosis
// consults: each by its uid and resourceVersion, or whole when it has none.
func clusterSum(cluster func(*drift.Snapshot) []drift.Object, s *drift.Snapshot) [32]byte {
	if cluster == nil {
		return [32]byte{}
	}
	h := sha256.New()
	for _, o := range cluster(s) {
		uid, rv := drift.Str(o, "metadata", "uid"), drift.Str(o, "metadata", "resourceVersion")
		if uid == "" || rv == "" {
			b, _ := json.Marshal(o)
			h.Write(b)
			h.Write([]byte{'\n'})
			continue
		}
		for _, s := range []string{drift.Str(o, "apiVersion"), drift.Str(o, "kind"), drift.Str(o, "metadata", "namespace"), drift.Str(o, "metadata", "name"), uid, rv} {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
		h.Write([]byte{'\n'})
	}
	return [32]byte(h.Sum(nil))
}
