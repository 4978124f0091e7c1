// Package memo keeps, from one cycle to the next, what each stuck
// application's last diagnosis depended on and what came of it, and keeps
// it between processes in sealed records of its own encoding. The cycle
// (bot/plan) decides when an entry may be reused; what an entry keeps of
// it are the cycle's values (bot/proposals). The memo holds entries, counts
// cycles and writes and reads its records.
package memo

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/templates"
)

// Memo keeps, from one cycle to the next, what each stuck application's
// last diagnosis depended on and what came of it, so that a cycle reuses
// both for an application none of it changed for, without reading or
// diagnosing it again (plan.CycleOptions.Memo). What a diagnosis depends on:
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
	apps   map[string]*Entry
	// touched are the applications stored or reused this cycle; the others
	// are dropped when it ends.
	touched map[string]bool
	taken   map[string]*Entry
	// dirty are the applications stored since the last Save, gone those
	// dropped since.
	dirty, gone map[string]bool
}

// DefaultMax bounds the applications a Memo keeps.
const DefaultMax = 100_000

// New returns an empty memo keeping at most max applications
// (DefaultMax when max is 0 or less).
func New(max int) *Memo {
	if max <= 0 {
		max = DefaultMax
	}
	return &Memo{max: max, apps: map[string]*Entry{}, dirty: map[string]bool{}, gone: map[string]bool{}}
}

// Entry is one application's last diagnosis: what it depended on, and
// what came of it.
type Entry struct {
	// Project, Namespace and Name choose the application's policy.
	Project, Namespace, Name string
	Listed                   [16]byte
	Settings                 [32]byte
	Cluster                  [32]byte
	At                       time.Time
	Watch                    string
	// Refs are the application's resources; Live digests their live
	// resourceVersions in that order (VersionsSum).
	Refs []drift.Ref
	Live [32]byte
	// tree is the digest of the resource tree last served when Live was
	// found unchanged: the same tree again holds the same versions
	// (Memo.Tree, Memo.Reuse).
	tree [32]byte

	Kept      []drift.Kept
	Keys      []string
	Diagnosed bool
	Part      Part
	Writes    *proposals.AppWrites
}

// Part is what of a cycle's result planning one application gives, kept
// (the rest of a cycle's result is the fleet's).
type Part struct {
	NewStuck    []templates.AppLine
	ForPeople   []templates.PersonLine
	PRs         []proposals.ProposedPR
	Skipped     []string
	NotProposed map[string]string
}

// VersionsSum digests the live resourceVersion of each of refs, in order,
// as version answers them (false: no live object).
func VersionsSum(refs []drift.Ref, version func(drift.Ref) (string, bool)) [32]byte {
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

// ClusterSum digests the cluster objects an application's diagnosis
// consults: each by its uid and resourceVersion, or whole when it has none.
func ClusterSum(objs []drift.Object) [32]byte {
	h := sha256.New()
	for _, o := range objs {
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

// Begin starts a cycle under cfg: a new config empties the memo, and every
// cfg.FullCycleEvery-th cycle reuses nothing.
func (m *Memo) Begin(cfg *config.Config) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cfg != cfg {
		for k := range m.apps {
			m.gone[k] = true
		}
		clear(m.dirty)
		m.apps, m.cfg = map[string]*Entry{}, cfg
	}
	every := cfg.FullCycleEvery
	if every <= 0 {
		every = config.DefaultFullCycleEvery
	}
	m.full = m.cycles%every == 0
	m.cycles++
	m.touched, m.taken = map[string]bool{}, map[string]*Entry{}
}

// End drops the applications the cycle neither stored nor reused: no
// longer stuck, failed, or of an instance that did not answer.
func (m *Memo) End() {
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

// Candidate returns the entry kept for an application, or nil when there
// is none or this cycle reuses nothing.
func (m *Memo) Candidate(key string) *Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.full {
		return nil
	}
	return m.apps[key]
}

// Tree returns the digest of the resource tree last served for e.
func (m *Memo) Tree(e *Entry) [32]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return e.tree
}

// Reuse records that this cycle reuses e for an application, whose
// resource tree was served with digest tree.
func (m *Memo) Reuse(key string, e *Entry, tree [32]byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.tree = tree
	m.touched[key], m.taken[key] = true, e
}

// Take returns the entry Reuse accepted for an application this cycle.
func (m *Memo) Take(key string) *Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.taken[key]
}

// Store keeps what one application's diagnosis and planning gave, when it
// may be reused: it finished without errors.
func (m *Memo) Store(key string, e *Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.apps[key]; !ok && len(m.apps) >= m.max {
		return
	}
	m.apps[key], m.touched[key] = e, true
	m.dirty[key] = true
	delete(m.gone, key)
}
