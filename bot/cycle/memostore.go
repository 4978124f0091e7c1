package cycle

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/fights"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// MemoStore keeps a Memo's entries between processes (bot/state's Store),
// each as an opaque record under its application's key.
type MemoStore interface {
	// MemoRecords returns every record kept.
	MemoRecords(ctx context.Context) (map[string][]byte, error)
	// SaveMemo writes put and forgets drop, all or nothing.
	SaveMemo(ctx context.Context, put map[string][]byte, drop []string) error
}

// MemoSeal authenticates the records a Memo keeps: a record is read back
// only by the build of driftfix that wrote it, under the config it was
// written under, and only when it was sealed with the same secret (the
// GitHub credential), so that whoever can write the state file cannot
// make driftfix propose a pull request of their own.
type MemoSeal struct {
	key []byte
}

// NewMemoSeal returns the seal of one build (BuildDigest) and secret.
func NewMemoSeal(secret []byte, build [32]byte) (MemoSeal, error) {
	if len(secret) == 0 {
		return MemoSeal{}, errors.New("the memo's seal needs a secret")
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("driftfix memo record v1\x00"))
	m.Write(build[:])
	return MemoSeal{key: m.Sum(nil)}, nil
}

// BuildDigest is the SHA-256 of the running executable: a record written by
// another build, which may diagnose or plan otherwise, is not read back.
func BuildDigest() ([32]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return [32]byte{}, fmt.Errorf("find the running executable: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return [32]byte{}, fmt.Errorf("read the running executable: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [32]byte{}, fmt.Errorf("read the running executable: %w", err)
	}
	return [32]byte(h.Sum(nil)), nil
}

// mac is the seal of one application's record under one config.
func (s MemoSeal) mac(cfg *config.Config, key string, body []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(cfg.Digest[:])
	m.Write([]byte(key))
	m.Write([]byte{0})
	m.Write(body)
	return m.Sum(nil)
}

// Save writes the entries stored since the last Save and forgets those
// dropped since. Only what Save wrote is reset: after an error the next
// Save writes it again.
func (m *Memo) Save(ctx context.Context, st MemoStore, seal MemoSeal) error {
	if len(seal.key) == 0 {
		return errors.New("save the memo: no seal")
	}
	m.mu.Lock()
	cfg := m.cfg
	entries := make(map[string]*memoEntry, len(m.dirty))
	for k := range m.dirty {
		if e := m.apps[k]; e != nil {
			entries[k] = e
		}
	}
	drop := make([]string, 0, len(m.gone))
	for k := range m.gone {
		drop = append(drop, k)
	}
	m.mu.Unlock()
	if cfg == nil {
		return nil
	}
	put := make(map[string][]byte, len(entries))
	var unkept []string
	for k, e := range entries {
		body, err := encodeEntry(e)
		if err != nil {
			// Kept in this process only; a record of it kept before is
			// stale now.
			unkept = append(unkept, k)
			drop = append(drop, k)
			continue
		}
		put[k] = append(seal.mac(cfg, k, body), body...)
	}
	slices.Sort(drop)
	if err := st.SaveMemo(ctx, put, drop); err != nil {
		return fmt.Errorf("save the memo: %w", err)
	}
	m.mu.Lock()
	for k, e := range entries {
		if m.apps[k] == e {
			delete(m.dirty, k)
		}
	}
	for _, k := range drop {
		if m.apps[k] == nil {
			delete(m.gone, k)
		}
	}
	m.mu.Unlock()
	if len(unkept) > 0 {
		return fmt.Errorf("save the memo: %d applications could not be written and are kept in this process only (the first: %s)", len(unkept), slices.Min(unkept))
	}
	return nil
}

// Load reads back the entries a Save under cfg and seal kept, into an empty
// memo. A record of another build, config or secret, or one that does not
// read back, is dropped (the next Save forgets it). It returns how many
// entries it read back; the first cycle after a Load that read any is not
// a full one.
func (m *Memo) Load(ctx context.Context, st MemoStore, seal MemoSeal, cfg *config.Config) (int, error) {
	if len(seal.key) == 0 {
		return 0, errors.New("load the memo: no seal")
	}
	recs, err := st.MemoRecords(ctx)
	if err != nil {
		return 0, fmt.Errorf("load the memo: %w", err)
	}
	keys := make([]string, 0, len(recs))
	for k := range recs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.apps) > 0 || m.cycles > 0 {
		return 0, errors.New("load the memo: it is not empty")
	}
	m.cfg = cfg
	for _, k := range keys {
		rec := recs[k]
		var e *memoEntry
		if len(rec) > sha256.Size && len(m.apps) < m.max && hmac.Equal(rec[:sha256.Size], seal.mac(cfg, k, rec[sha256.Size:])) {
			e, _ = decodeEntry(rec[sha256.Size:], cfg)
		}
		if e == nil {
			m.gone[k] = true
			continue
		}
		m.apps[k] = e
	}
	if len(m.apps) > 0 {
		m.cycles = 1 // the memo read back is used at once
	}
	return len(m.apps), nil
}

// memoRecord is a memoEntry as the state store keeps it (gob). What is
// derived from the config (each pull request's and the fights' policy) is
// derived again when it is read back; a plan's edit keeps its result, not
// the steps that made it.
type memoRecord struct {
	Project, Namespace, Name string
	Listed                   [16]byte
	Settings, Cluster, Live  [32]byte
	Tree                     [32]byte
	At                       time.Time
	Watch                    string
	Refs                     []drift.Ref
	Kept                     []drift.Kept
	Keys                     []string
	Diagnosed                bool
	NewStuck                 []templates.AppLine
	ForPeople                []templates.PersonLine
	PRs                      []prRecord
	Skipped                  []string
	NotProposed              map[string]string
	Writes                   *writesRecord
}

type prRecord struct {
	Instance, App, Namespace string
	Key, Fingerprint         string
	RepoURL, Base            string
	Branch, Title, Body      string
	Plan                     planRecord
	Planned                  HeadCheck
	Check                    *HeadCheck
}

type planRecord struct {
	Kind                                drift.FixKind
	Resource                            drift.Ref
	Findings                            []findingRecord
	Edits                               []editRecord
	Rationale                           remediations.Rationale
	Verification, Instructions, Dropped string
	Passed                              []remediations.Attempt
}

type editRecord struct {
	File          string
	Before, After []byte
}

type findingRecord struct {
	Resource      drift.Ref
	Path, GitPath drift.Pointer
	Cause         drift.Cause
	Git, Live     memoValue
	InGit, InLive bool
	Evidence      []string
	Owners        []drift.Owner
	Remediation   drift.Remediation
	Hides         []drift.Location
	Unplaced      []string
}

type writesRecord struct {
	App           string
	At            time.Time
	Writes        []fights.Write
	Causes        []drift.Kept
	SelfHealSyncs int
	Revision      string
	LastSync      time.Time
	Synced        bool
}

// encodeEntry is an entry's record.
func encodeEntry(e *memoEntry) ([]byte, error) {
	r := memoRecord{Project: e.project, Namespace: e.namespace, Name: e.name, Listed: e.listed, Settings: e.settings, Cluster: e.cluster,
		Live: e.live, Tree: e.tree, At: e.at, Watch: e.watch, Refs: e.refs, Kept: e.kept, Keys: e.keys, Diagnosed: e.diagnosed,
		NewStuck: e.part.newStuck, ForPeople: e.part.forPeople, Skipped: e.part.skipped, NotProposed: e.part.notProposed}
	for _, pr := range e.part.prs {
		p := pr.Plan
		pl := planRecord{Kind: p.Kind, Resource: p.Resource, Rationale: p.Rationale, Verification: p.Verification,
			Instructions: p.Instructions, Dropped: p.Dropped, Passed: p.Passed}
		for _, f := range p.Findings {
			pl.Findings = append(pl.Findings, findingRecord{Resource: f.Resource, Path: f.Path, GitPath: f.GitPath, Cause: f.Cause,
				Git: memoValue{f.Git}, Live: memoValue{f.Live}, InGit: f.InGit, InLive: f.InLive, Evidence: f.Evidence, Owners: f.Owners,
				Remediation: f.Remediation, Hides: f.Hides, Unplaced: f.Unplaced})
		}
		for _, ed := range p.Edits {
			pl.Edits = append(pl.Edits, editRecord{File: ed.File, Before: ed.Before, After: ed.After})
		}
		r.PRs = append(r.PRs, prRecord{Instance: pr.Instance, App: pr.App, Namespace: pr.Namespace, Key: pr.Key, Fingerprint: pr.Fingerprint,
			RepoURL: pr.RepoURL, Base: pr.Base, Branch: pr.Branch, Title: pr.Title, Body: pr.Body, Plan: pl, Planned: pr.Planned, Check: pr.Check})
	}
	if w := e.writes; w != nil {
		r.Writes = &writesRecord{App: w.App, At: w.At, Writes: w.Writes, Causes: w.Causes, SelfHealSyncs: w.SelfHealSyncs,
			Revision: w.Revision, LastSync: w.LastSync, Synced: w.Synced}
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeEntry reads a record back under cfg.
func decodeEntry(b []byte, cfg *config.Config) (*memoEntry, error) {
	var r memoRecord
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&r); err != nil {
		return nil, err
	}
	pol := cfg.For(r.Project, r.Name, r.Namespace)
	e := &memoEntry{project: r.Project, namespace: r.Namespace, name: r.Name, listed: r.Listed, settings: r.Settings, cluster: r.Cluster,
		live: r.Live, tree: r.Tree, at: r.At, watch: r.Watch, refs: r.Refs, kept: r.Kept, keys: r.Keys, diagnosed: r.Diagnosed,
		part: memoPart{newStuck: r.NewStuck, forPeople: r.ForPeople, skipped: r.Skipped, notProposed: r.NotProposed}}
	for _, pr := range r.PRs {
		pl := pr.Plan
		p := remediations.Plan{Kind: pl.Kind, Resource: pl.Resource, Rationale: pl.Rationale, Verification: pl.Verification,
			Instructions: pl.Instructions, Dropped: pl.Dropped, Passed: pl.Passed}
		for _, f := range pl.Findings {
			p.Findings = append(p.Findings, drift.Finding{Resource: f.Resource, Path: f.Path, GitPath: f.GitPath, Cause: f.Cause,
				Git: f.Git.v, Live: f.Live.v, InGit: f.InGit, InLive: f.InLive, Evidence: f.Evidence, Owners: f.Owners,
				Remediation: f.Remediation, Hides: f.Hides, Unplaced: f.Unplaced})
		}
		for _, ed := range pl.Edits {
			p.Edits = append(p.Edits, remediations.Edit{File: ed.File, Before: ed.Before, After: ed.After})
		}
		e.part.prs = append(e.part.prs, ProposedPR{Instance: pr.Instance, App: pr.App, Namespace: pr.Namespace, Key: pr.Key,
			Fingerprint: pr.Fingerprint, RepoURL: pr.RepoURL, Base: pr.Base, Branch: pr.Branch, Title: pr.Title, Body: pr.Body,
			Policy: prPolicy(pol, p.Kind), Plan: p, Planned: pr.Planned, Check: pr.Check})
	}
	if w := r.Writes; w != nil {
		e.writes = &AppWrites{App: w.App, At: w.At, Writes: w.Writes, Causes: w.Causes, SelfHealSyncs: w.SelfHealSyncs,
			Revision: w.Revision, LastSync: w.LastSync, Synced: w.Synced, Policy: pol.Fights}
	}
	return e, nil
}

// memoValue is a value of a finding (Git's or the live one) as gob keeps
// it: its own encoding, which keeps each number's type (int64 or float64)
// and a null, which gob cannot carry in an interface.
type memoValue struct{ v any }

// Value tags of memoValue's encoding.
const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagString
	tagInt
	tagFloat
	tagObject
	tagArray
)

// maxValueDepth bounds how deep a value read back nests.
const maxValueDepth = 10_000

// GobEncode encodes the value, or fails on a type snapshots do not hold.
func (v memoValue) GobEncode() ([]byte, error) {
	return appendValue(nil, v.v, 0)
}

// GobDecode reads a value GobEncode wrote.
func (v *memoValue) GobDecode(b []byte) error {
	x, rest, err := readValue(b, 0)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return errors.New("memo value: bytes after the value")
	}
	v.v = x
	return nil
}

func appendValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxValueDepth {
		return nil, errors.New("memo value: nested too deep")
	}
	switch x := v.(type) {
	case nil:
		return append(b, tagNull), nil
	case bool:
		if x {
			return append(b, tagTrue), nil
		}
		return append(b, tagFalse), nil
	case string:
		b = append(b, tagString)
		b = binary.AppendUvarint(b, uint64(len(x)))
		return append(b, x...), nil
	case int64:
		return binary.AppendVarint(append(b, tagInt), x), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(b, tagFloat), math.Float64bits(x)), nil
	case map[string]any:
		b = binary.AppendUvarint(append(b, tagObject), uint64(len(x)))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var err error
		for _, k := range keys {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			if b, err = appendValue(b, x[k], depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case []any:
		b = binary.AppendUvarint(append(b, tagArray), uint64(len(x)))
		var err error
		for _, e := range x {
			if b, err = appendValue(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("memo value: a %T is not kept", v)
}

var errShortValue = errors.New("memo value: cut short")

func readLen(b []byte) (int, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return 0, nil, errShortValue
	}
	return int(n), b[k:], nil
}

func readValue(b []byte, depth int) (any, []byte, error) {
	if depth > maxValueDepth {
		return nil, nil, errors.New("memo value: nested too deep")
	}
	if len(b) == 0 {
		return nil, nil, errShortValue
	}
	tag, b := b[0], b[1:]
	switch tag {
	case tagNull:
		return nil, b, nil
	case tagFalse, tagTrue:
		return tag == tagTrue, b, nil
	case tagString:
		n, b, err := readLen(b)
		if err != nil {
			return nil, nil, err
		}
		return string(b[:n]), b[n:], nil
	case tagInt:
		x, k := binary.Varint(b)
		if k <= 0 {
			return nil, nil, errShortValue
		}
		return x, b[k:], nil
	case tagFloat:
		if len(b) < 8 {
			return nil, nil, errShortValue
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b)), b[8:], nil
	case tagObject:
		// Each member takes at least two bytes: n bounds what is made.
		n, b, err := readLen(b)
		if err != nil {
			return nil, nil, err
		}
		o := make(map[string]any, min(n, len(b)/2))
		for range n {
			var kl int
			if kl, b, err = readLen(b); err != nil {
				return nil, nil, err
			}
			k := string(b[:kl])
			var v any
			if v, b, err = readValue(b[kl:], depth+1); err != nil {
				return nil, nil, err
			}
			o[k] = v
		}
		return o, b, nil
	case tagArray:
		n, b, err := readLen(b)
		if err != nil {
			return nil, nil, err
		}
		a := make([]any, 0, n)
		for range n {
			var v any
			if v, b, err = readValue(b, depth+1); err != nil {
				return nil, nil, err
			}
			a = append(a, v)
		}
		return a, b, nil
	}
	return nil, nil, fmt.Errorf("memo value: unknown tag %d", tag)
}
