package memo

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/fights"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// Store keeps a Memo's entries between processes (bot/state's Store),
// each as an opaque record under its application's key.
type Store interface {
	// MemoRecords calls each with every record kept, one at a time.
	MemoRecords(ctx context.Context, each func(app string, rec []byte)) error
	// SaveMemo forgets the applications of drop, then calls put, whose
	// write keeps an application's record (nil: forgets it) as of when it
	// returns; all or nothing.
	SaveMemo(ctx context.Context, drop []string, put func(write func(app string, rec []byte) error) error) error
}

// Seal authenticates the records a Memo keeps: a record is read back
// only by the build of driftfix that wrote it, under the config it was
// written under, and only when it was sealed with the same secret (the
// GitHub credential), so that whoever can write the state file cannot
// make driftfix propose a pull request of their own.
//
// The same secret and construction seal the state store's rows that lead
// driftfix to act (SealRow, bot/state's Sealer), under a key of their
// own that is bound to neither the build nor the config: a rejection or a
// snooze outlives an upgrade and a policy edit.
type Seal struct {
	key []byte
	// rows is the key of SealRow.
	rows []byte
}

// NewSeal returns the seal of one build (BuildDigest) and secret.
func NewSeal(secret []byte, build [32]byte) (Seal, error) {
	if len(secret) == 0 {
		return Seal{}, errors.New("the memo's seal needs a secret")
	}
	return Seal{
		key:  sum(secret, []byte("driftfix memo record v1\x00"), build[:]),
		rows: sum(secret, []byte("driftfix state row v1\x00")),
	}, nil
}

// ProcessSeal is a seal of a random secret, for running without a
// credential: what it seals is read back by this process only.
func ProcessSeal() (Seal, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return Seal{}, fmt.Errorf("make a secret for this process's seal: %w", err)
	}
	return NewSeal(secret, [32]byte{})
}

// sum is the HMAC-SHA256 under key of parts, one after the other.
func sum(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// SealRow returns the seal of one row of a state table: its table, its
// key (what names it in a log) and its body (the rest of its fields, in a
// fixed encoding).
func (s Seal) SealRow(table, key string, body []byte) []byte {
	return sum(s.rows, []byte(table), []byte{0}, binary.AppendUvarint(nil, uint64(len(key))), []byte(key), body)
}

// OpenRow reports whether seal is the seal of a row (SealRow). A zero
// Seal opens nothing.
func (s Seal) OpenRow(table, key string, body, seal []byte) bool {
	return len(s.rows) > 0 && len(seal) == sha256.Size && hmac.Equal(seal, s.SealRow(table, key, body))
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
func (s Seal) mac(cfg *config.Config, key string, body []byte) []byte {
	return sum(s.key, cfg.Digest[:], []byte(key), []byte{0}, body)
}

// seal writes into rec's first sha256.Size bytes, left for it, the seal of
// the body after them.
func (s Seal) seal(cfg *config.Config, key string, rec []byte) {
	copy(rec, s.mac(cfg, key, rec[sha256.Size:]))
}

// open returns the body of a sealed record, if its seal is key's under cfg.
func (s Seal) open(cfg *config.Config, key string, rec []byte) ([]byte, bool) {
	if len(rec) <= sha256.Size || !hmac.Equal(rec[:sha256.Size], s.mac(cfg, key, rec[sha256.Size:])) {
		return nil, false
	}
	return rec[sha256.Size:], true
}

// Save writes the entries stored since the last Save, forgets those dropped
// since, and writes the memo's count of cycles, in one transaction, each
// record encoded into one buffer in turn. After an error the next Save
// writes them again.
func (m *Memo) Save(ctx context.Context, st Store, seal Seal) error {
	if len(seal.key) == 0 {
		return errors.New("save the memo: no seal")
	}
	m.mu.Lock()
	cfg, cycles := m.cfg, m.cycles
	keys := slices.Sorted(maps.Keys(m.dirty))
	drop := slices.Sorted(maps.Keys(m.gone))
	m.mu.Unlock()
	if cfg == nil {
		return nil
	}
	saved := make(map[string]*Entry, len(keys))
	var unkept []string
	err := st.SaveMemo(ctx, drop, func(write func(string, []byte) error) error {
		buf := make([]byte, sha256.Size, 4096)
		// The memo's own record: how many cycles it has seen, so that a
		// bot run one cycle per process (driftfix once) still diagnoses
		// everything every fullCycleEvery cycles.
		rec := binary.AppendUvarint(buf[:sha256.Size], uint64(cycles))
		seal.seal(cfg, memoCountKey, rec)
		if err := write(memoCountKey, rec); err != nil {
			return err
		}
		for _, k := range keys {
			m.mu.Lock()
			e := m.apps[k]
			m.mu.Unlock()
			if e == nil {
				continue
			}
			rec, err := appendEntry(buf[:sha256.Size], e)
			if err != nil {
				// Kept in this process only; a record of it kept before
				// is stale now.
				unkept = append(unkept, k)
				rec = nil
			} else {
				seal.seal(cfg, k, rec)
				buf = rec
			}
			if err := write(k, rec); err != nil {
				return err
			}
			saved[k] = e
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save the memo: %w", err)
	}
	m.mu.Lock()
	for k, e := range saved {
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

// Load reads back the entries a Save under cfg and seal kept, and its count
// of cycles, into an empty memo. A record of another build, config or
// secret, or one that does not read back, is dropped (the next Save
// forgets it). It returns how many entries it read back. The count goes on
// where the Save left it: every config.FullCycleEvery cycles is a full one
// across restarts too.
func (m *Memo) Load(ctx context.Context, st Store, seal Seal, cfg *config.Config) (int, error) {
	if len(seal.key) == 0 {
		return 0, errors.New("load the memo: no seal")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.apps) > 0 || m.cycles > 0 {
		return 0, errors.New("load the memo: it is not empty")
	}
	m.cfg = cfg
	counted := false
	err := st.MemoRecords(ctx, func(k string, rec []byte) {
		body, sealed := seal.open(cfg, k, rec)
		if k == memoCountKey {
			if n, w := binary.Uvarint(body); sealed && w == len(body) && n <= math.MaxInt32 {
				m.cycles, counted = int(n), true
			}
			return
		}
		var e *Entry
		if sealed && len(m.apps) < m.max {
			e, _ = decodeEntry(body, cfg)
		}
		if e == nil {
			m.gone[k] = true
			return
		}
		m.apps[k] = e
	})
	if err != nil {
		clear(m.apps)
		clear(m.gone)
		m.cfg = nil
		return 0, fmt.Errorf("load the memo: %w", err)
	}
	if !counted && len(m.apps) > 0 {
		m.cycles = 1 // the memo read back is used at once
	}
	return len(m.apps), nil
}

// memoCountKey is the key of the memo's own record, its count of cycles
// (no application's key is empty).
const memoCountKey = ""

// A record is a Entry in a compact encoding of its own: lengths and
// integers as varints, strings and bytes as they are (a string is kept
// byte for byte, valid UTF-8 or not), times in time.Time's binary form,
// findings' values tagged (appendValue). What is derived from the config
// (each pull request's and the fights' policy) is derived again when it is
// read back; a plan's edit keeps its result, not the steps that made it.
// memoRecordVersion starts every record. Version 2 keeps evidence as its
// fields (drift.Evidence), version 1 kept its sentences.
const memoRecordVersion = 2

// encodeEntry is an entry's record.
func encodeEntry(e *Entry) ([]byte, error) { return appendEntry(nil, e) }

// appendEntry appends an entry's record to b.
func appendEntry(b []byte, e *Entry) ([]byte, error) {
	w := &recWriter{b: b}
	w.uint(memoRecordVersion)
	w.str(e.Project)
	w.str(e.Namespace)
	w.str(e.Name)
	w.raw(e.Listed[:])
	w.raw(e.Settings[:])
	w.raw(e.Cluster[:])
	w.raw(e.Live[:])
	w.raw(e.tree[:])
	w.time(e.At)
	w.str(e.Watch)
	w.uint(uint64(len(e.Refs)))
	for _, r := range e.Refs {
		w.ref(r)
	}
	w.kept(e.Kept)
	w.strs(e.Keys)
	w.bool(e.Diagnosed)
	w.uint(uint64(len(e.Part.NewStuck)))
	for _, l := range e.Part.NewStuck {
		w.str(l.App)
		w.str(l.Namespace)
		w.str(l.Note)
		w.uint(uint64(len(l.Causes)))
		for _, c := range l.Causes {
			w.str(string(c))
		}
		w.str(l.Instance)
		w.str(l.Key)
	}
	w.uint(uint64(len(e.Part.ForPeople)))
	for _, l := range e.Part.ForPeople {
		w.str(l.App)
		w.str(l.Namespace)
		w.str(l.Instance)
		w.ref(l.Resource)
		w.str(l.Path)
		w.str(string(l.Cause))
		w.str(l.Why)
	}
	w.uint(uint64(len(e.Part.PRs)))
	for i := range e.Part.PRs {
		w.pr(&e.Part.PRs[i])
	}
	w.strs(e.Part.Skipped)
	w.uint(uint64(len(e.Part.NotProposed)))
	for _, k := range slices.Sorted(maps.Keys(e.Part.NotProposed)) {
		w.str(k)
		w.str(e.Part.NotProposed[k])
	}
	w.bool(e.Writes != nil)
	if aw := e.Writes; aw != nil {
		w.str(aw.App)
		w.time(aw.At)
		w.uint(uint64(len(aw.Writes)))
		for _, x := range aw.Writes {
			w.ref(x.Resource)
			w.str(x.Path)
			w.time(x.At)
			w.str(x.Value)
			w.str(x.Manager)
		}
		w.kept(aw.Causes)
		w.int(int64(aw.SelfHealSyncs))
		w.str(aw.Revision)
		w.time(aw.LastSync)
		w.bool(aw.Synced)
	}
	return w.b, w.err
}

func (w *recWriter) pr(pr *proposals.ProposedPR) {
	for _, s := range []string{pr.Instance, pr.App, pr.Namespace, pr.Key, pr.Fingerprint, pr.RepoURL, pr.Base, pr.Branch, pr.Title, pr.Body} {
		w.str(s)
	}
	p := &pr.Plan
	w.str(string(p.Kind))
	w.ref(p.Resource)
	w.uint(uint64(len(p.Findings)))
	for i := range p.Findings {
		f := &p.Findings[i]
		w.ref(f.Resource)
		w.strs(f.Path)
		w.strs(f.GitPath)
		w.str(string(f.Cause))
		w.value(f.Git)
		w.value(f.Live)
		w.bool(f.InGit)
		w.bool(f.InLive)
		w.bool(f.SchemaScalar)
		w.evidence(f.Evidence)
		w.uint(uint64(len(f.Owners)))
		for _, o := range f.Owners {
			w.str(o.Manager)
			w.str(o.Operation)
			w.str(o.Subresource)
			w.str(o.Time)
		}
		w.str(string(f.Remediation.Kind))
		w.str(f.Remediation.File)
		w.str(f.Remediation.Reason)
		w.str(f.Remediation.Grant)
		w.uint(uint64(len(f.Hides)))
		for _, h := range f.Hides {
			w.ref(h.Resource)
			w.strs(h.Path)
		}
		w.strs(f.Unplaced)
	}
	w.uint(uint64(len(p.Edits)))
	for _, ed := range p.Edits {
		w.str(ed.File)
		w.bytes(ed.Before)
		w.bytes(ed.After)
	}
	w.str(string(p.Rationale.Cause))
	w.evidence(p.Rationale.Evidence)
	w.str(p.Rationale.Why)
	w.str(p.Rationale.Risk)
	w.str(p.Rationale.Undo)
	w.str(p.Verification)
	w.str(p.Instructions)
	w.str(p.Dropped)
	w.uint(uint64(len(p.Passed)))
	for _, a := range p.Passed {
		w.str(string(a.Kind))
		w.str(a.Why)
	}
	w.check(pr.Planned)
	w.bool(pr.Check != nil)
	if pr.Check != nil {
		w.check(*pr.Check)
	}
}

func (w *recWriter) check(c proposals.HeadCheck) {
	w.str(c.SHA)
	w.bool(c.Success)
	w.str(c.Title)
	w.str(c.Summary)
	w.str(c.Text)
	w.str(c.DetailsURL)
	w.str(c.Digest)
}

func (w *recWriter) kept(ks []drift.Kept) {
	w.uint(uint64(len(ks)))
	for _, k := range ks {
		w.ref(k.Resource)
		w.str(k.Path)
		w.str(string(k.Cause))
		w.str(string(k.Fix))
		w.str(k.Writer)
		w.evidence(k.Evidence)
		w.strs(k.Unplaced)
	}
}

// decodeEntry reads a record back under cfg.
func decodeEntry(b []byte, cfg *config.Config) (*Entry, error) {
	r := &recReader{b: b}
	if v := r.uint(); v != memoRecordVersion {
		return nil, fmt.Errorf("memo record: version %d", v)
	}
	e := &Entry{Project: r.str(), Namespace: r.str(), Name: r.str()}
	r.raw(e.Listed[:])
	r.raw(e.Settings[:])
	r.raw(e.Cluster[:])
	r.raw(e.Live[:])
	r.raw(e.tree[:])
	e.At = r.time()
	e.Watch = r.str()
	if n := r.count(4); n > 0 {
		e.Refs = make([]drift.Ref, n)
		for i := range e.Refs {
			e.Refs[i] = r.ref()
		}
	}
	e.Kept = r.kept()
	e.Keys = r.strs()
	e.Diagnosed = r.bool()
	for range r.count(6) {
		l := templates.AppLine{App: r.str(), Namespace: r.str(), Note: r.str()}
		for range r.count(1) {
			l.Causes = append(l.Causes, drift.Cause(r.str()))
		}
		l.Instance, l.Key = r.str(), r.str()
		e.Part.NewStuck = append(e.Part.NewStuck, l)
	}
	for range r.count(10) {
		e.Part.ForPeople = append(e.Part.ForPeople, templates.PersonLine{App: r.str(), Namespace: r.str(), Instance: r.str(),
			Resource: r.ref(), Path: r.str(), Cause: drift.Cause(r.str()), Why: r.str()})
	}
	pol := cfg.For(e.Project, e.Name, e.Namespace)
	for range r.count(30) {
		e.Part.PRs = append(e.Part.PRs, r.pr(pol))
	}
	e.Part.Skipped = r.strs()
	if n := r.count(2); n > 0 {
		e.Part.NotProposed = make(map[string]string, n)
		for range n {
			k := r.str()
			e.Part.NotProposed[k] = r.str()
		}
	}
	if r.bool() {
		aw := &proposals.AppWrites{App: r.str(), At: r.time(), Policy: pol.Fights}
		for range r.count(8) {
			aw.Writes = append(aw.Writes, fights.Write{Resource: r.ref(), Path: r.str(), At: r.time(), Value: r.str(), Manager: r.str()})
		}
		aw.Causes = r.kept()
		aw.SelfHealSyncs = int(r.int())
		aw.Revision, aw.LastSync, aw.Synced = r.str(), r.time(), r.bool()
		e.Writes = aw
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = errors.New("memo record: bytes after the record")
	}
	if r.err != nil {
		return nil, r.err
	}
	return e, nil
}

func (r *recReader) pr(pol config.Policy) proposals.ProposedPR {
	pr := proposals.ProposedPR{Instance: r.str(), App: r.str(), Namespace: r.str(), Key: r.str(), Fingerprint: r.str(), RepoURL: r.str(),
		Base: r.str(), Branch: r.str(), Title: r.str(), Body: r.str()}
	p := &pr.Plan
	p.Kind, p.Resource = drift.FixKind(r.str()), r.ref()
	for range r.count(20) {
		f := drift.Finding{Resource: r.ref(), Path: r.strs(), GitPath: r.strs(), Cause: drift.Cause(r.str()), Git: r.value(), Live: r.value(),
			InGit: r.bool(), InLive: r.bool(), SchemaScalar: r.bool(), Evidence: r.evidence()}
		for range r.count(4) {
			f.Owners = append(f.Owners, drift.Owner{Manager: r.str(), Operation: r.str(), Subresource: r.str(), Time: r.str()})
		}
		f.Remediation = drift.Remediation{Kind: drift.FixKind(r.str()), File: r.str(), Reason: r.str(), Grant: r.str()}
		for range r.count(5) {
			f.Hides = append(f.Hides, drift.Location{Resource: r.ref(), Path: r.strs()})
		}
		f.Unplaced = r.strs()
		p.Findings = append(p.Findings, f)
	}
	for range r.count(3) {
		p.Edits = append(p.Edits, remediations.Edit{File: r.str(), Before: r.bytes(), After: r.bytes()})
	}
	p.Rationale = remediations.Rationale{Cause: drift.Cause(r.str()), Evidence: r.evidence(), Why: r.str(), Risk: r.str(), Undo: r.str()}
	p.Verification, p.Instructions, p.Dropped = r.str(), r.str(), r.str()
	for range r.count(2) {
		p.Passed = append(p.Passed, remediations.Attempt{Kind: drift.FixKind(r.str()), Why: r.str()})
	}
	pr.Policy = proposals.PRPolicy(pol, p.Kind)
	pr.Planned = r.check()
	if r.bool() {
		c := r.check()
		pr.Check = &c
	}
	return pr
}

func (r *recReader) check() proposals.HeadCheck {
	return proposals.HeadCheck{SHA: r.str(), Success: r.bool(), Title: r.str(), Summary: r.str(), Text: r.str(), DetailsURL: r.str(), Digest: r.str()}
}

func (r *recReader) kept() []drift.Kept {
	var ks []drift.Kept
	for range r.count(7) {
		ks = append(ks, drift.Kept{Resource: r.ref(), Path: r.str(), Cause: drift.Cause(r.str()), Fix: drift.FixKind(r.str()),
			Writer: r.str(), Evidence: r.evidence(), Unplaced: r.strs()})
	}
	return ks
}

// recWriter appends a record; its first error stays.
type recWriter struct {
	b   []byte
	err error
}

func (w *recWriter) uint(x uint64) { w.b = binary.AppendUvarint(w.b, x) }
func (w *recWriter) int(x int64)   { w.b = binary.AppendVarint(w.b, x) }
func (w *recWriter) raw(p []byte)  { w.b = append(w.b, p...) }
func (w *recWriter) str(s string)  { w.uint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *recWriter) bytes(p []byte) {
	// nil and empty differ in an edit (a file created, an empty file).
	if p == nil {
		w.uint(0)
		return
	}
	w.uint(uint64(len(p)) + 1)
	w.b = append(w.b, p...)
}

func (w *recWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *recWriter) strs(ss []string) {
	w.uint(uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

// The fields of a piece of evidence a record holds beside its kind and
// text, one bit each in the byte before them.
const (
	evObject = 1 << iota
	evManager
	evWebhook
	evPath
	evProof
	evDetail
)

// evidence writes each piece of evidence as its fields: the kind as its
// place in drift.EvidenceKinds (0, then the name, for one not listed),
// a byte saying which other fields follow, those fields, and the text.
func (w *recWriter) evidence(ev []drift.Evidence) {
	w.uint(uint64(len(ev)))
	for i := range ev {
		e := &ev[i]
		if k := slices.Index(drift.EvidenceKinds, e.Kind); k >= 0 {
			w.uint(uint64(k + 1))
		} else {
			w.uint(0)
			w.str(string(e.Kind))
		}
		var has byte
		for bit, set := range [...]bool{e.Object != nil, e.Manager != "", e.Webhook != "", e.Path != "", e.Proof != "", e.Detail != ""} {
			if set {
				has |= 1 << bit
			}
		}
		w.b = append(w.b, has)
		if e.Object != nil {
			w.ref(*e.Object)
		}
		for _, s := range [...]string{e.Manager, e.Webhook, e.Path, string(e.Proof), e.Detail} {
			if s != "" {
				w.str(s)
			}
		}
		w.str(e.Text)
	}
}

func (w *recWriter) ref(r drift.Ref) {
	w.str(r.Group)
	w.str(r.Kind)
	w.str(r.Namespace)
	w.str(r.Name)
}

func (w *recWriter) time(t time.Time) {
	b, err := t.MarshalBinary()
	if err != nil && w.err == nil {
		w.err = err
	}
	w.bytes(b)
}

func (w *recWriter) value(v any) {
	b, err := appendValue(w.b, v, 0)
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.b = b
}

// recReader reads a record; after its first error it reads zero values.
type recReader struct {
	b   []byte
	err error
}

func (r *recReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *recReader) uint() uint64 {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errShortValue)
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *recReader) int() int64 {
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(errShortValue)
		return 0
	}
	r.b = r.b[n:]
	return x
}

// count reads a number of items each at least min bytes long: a count the
// bytes left cannot hold is an error, so nothing is made past what the
// record bounds.
func (r *recReader) count(min int) int {
	n := r.uint()
	if n > uint64(len(r.b)/min) {
		r.fail(errShortValue)
		return 0
	}
	return int(n)
}

func (r *recReader) take(n int) []byte {
	if n > len(r.b) {
		r.fail(errShortValue)
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

func (r *recReader) raw(p []byte) { copy(p, r.take(len(p))) }
func (r *recReader) str() string  { return string(r.take(r.count(1))) }

func (r *recReader) bytes() []byte {
	n := r.uint()
	if n == 0 || r.err != nil {
		return nil
	}
	if n-1 > uint64(len(r.b)) {
		r.fail(errShortValue)
		return nil
	}
	return slices.Clone(r.take(int(n - 1)))
}

func (r *recReader) bool() bool {
	p := r.take(1)
	if p == nil {
		return false
	}
	if p[0] > 1 {
		r.fail(errors.New("memo record: not a boolean"))
	}
	return p[0] == 1
}

func (r *recReader) strs() []string {
	n := r.count(1)
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.str()
	}
	return ss
}

// evidence reads what recWriter.evidence wrote.
func (r *recReader) evidence() []drift.Evidence {
	n := r.count(3) // a kind, the fields byte and a text, each at least a byte
	if n == 0 {
		return nil
	}
	ev := make([]drift.Evidence, n)
	for i := range ev {
		e := &ev[i]
		switch k := r.uint(); {
		case k == 0:
			e.Kind = drift.EvidenceKind(r.str())
		case k <= uint64(len(drift.EvidenceKinds)):
			e.Kind = drift.EvidenceKinds[k-1]
		default:
			r.fail(fmt.Errorf("memo record: evidence kind %d", k))
			return nil
		}
		var has byte
		if p := r.take(1); p != nil {
			has = p[0]
		}
		if has&^(evObject|evManager|evWebhook|evPath|evProof|evDetail) != 0 {
			r.fail(errors.New("memo record: unknown evidence fields"))
			return nil
		}
		if has&evObject != 0 {
			ref := r.ref()
			e.Object = &ref
		}
		if has&evManager != 0 {
			e.Manager = r.str()
		}
		if has&evWebhook != 0 {
			e.Webhook = r.str()
		}
		if has&evPath != 0 {
			e.Path = r.str()
		}
		if has&evProof != 0 {
			e.Proof = drift.Proof(r.str())
		}
		if has&evDetail != 0 {
			e.Detail = r.str()
		}
		e.Text = r.str()
		if r.err != nil {
			return nil
		}
	}
	return ev
}

func (r *recReader) ref() drift.Ref {
	return drift.Ref{Group: r.str(), Kind: r.str(), Namespace: r.str(), Name: r.str()}
}

func (r *recReader) time() time.Time {
	var t time.Time
	if b := r.bytes(); r.err == nil {
		if err := t.UnmarshalBinary(b); err != nil {
			r.fail(err)
		}
	}
	return t
}

func (r *recReader) value() any {
	if r.err != nil {
		return nil
	}
	v, rest, err := readValue(r.b, 0)
	if err != nil {
		r.fail(err)
		return nil
	}
	r.b = rest
	return v
}

// Value tags of a finding's value (Git's or the live one) in a record:
// each number keeps its type (int64 or float64), and null is kept.
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
