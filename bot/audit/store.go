package audit

import (
	"encoding/json"
	"net/url"
	"sort"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/driftfix/driftfix/bot/drift"
)

// The store's defaults: what `driftfix run` keeps when the policy does not
// say (audit.retention, audit.maxRecords, audit.maxBytes).
const (
	// DefaultRetention is how long a write is kept: longer than the
	// default 15-minute cycle and stuckAfter together, so the write that
	// made an application drift is still there when it is diagnosed.
	DefaultRetention = 2 * time.Hour
	// DefaultMaxRecords bounds the writes kept: two hours at 14 writes a
	// second.
	DefaultMaxRecords = 100_000
	// DefaultMaxBytes bounds what the kept writes cost, roughly.
	DefaultMaxBytes = 64 << 20
	// DefaultPerObject bounds the writes kept per object: an object
	// written more often (a Lease, a controller's status) keeps its newest.
	DefaultPerObject = 64
)

// Options bound a store. Zero fields take the defaults.
type Options struct {
	Retention  time.Duration
	MaxRecords int
	MaxBytes   int64
	PerObject  int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.PerObject <= 0 {
		o.PerObject = DefaultPerObject
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// entry is a kept record; gone says the object's own bound dropped it
// before its turn in the arrival queue came.
type entry struct {
	Record
	size int64
	gone bool
}

// Store keeps the writes of the audit events it is given, per object,
// within its retention and its bounds on records and bytes: the oldest
// arrival goes first. It is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	opt     Options
	objects map[Key][]*entry
	queue   []*entry // arrival order from head
	head    int
	bytes   int64
	stats   Stats
}

// Stats count what a store did.
type Stats struct {
	// Kept and Skipped count events; Skipped by reason.
	Kept    uint64
	Skipped map[string]uint64
	// Evicted counts kept writes dropped for a bound or the retention.
	Evicted uint64
	// Records and Bytes are held now (Bytes as the store counts them).
	Records int
	Bytes   int64
}

// NewStore makes an empty store.
func NewStore(o Options) *Store {
	return &Store{opt: o.withDefaults(), objects: map[Key][]*entry{}, stats: Stats{Skipped: map[string]uint64{}}}
}

// SetOptions changes the store's bounds (a changed policy); what they no
// longer allow is dropped at once.
func (s *Store) SetOptions(o Options) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opt.Now
	s.opt = o.withDefaults()
	if o.Now == nil {
		s.opt.Now = now
	}
	s.trim(s.opt.Now())
}

// Add keeps the writes among events and returns how many it kept.
func (s *Store) Add(events []auditv1.Event) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opt.Now()
	kept := 0
	for i := range events {
		r, skip := RecordOf(&events[i])
		if skip == "" && r.Completed.Before(now.Add(-s.opt.Retention)) {
			skip = SkipTooOld
		}
		if skip != "" {
			s.stats.Skipped[skip]++
			continue
		}
		s.keep(r)
		kept++
	}
	s.trim(now)
	return kept
}

func (s *Store) keep(r Record) {
	e := &entry{Record: r, size: r.size()}
	list := append(s.objects[r.Key], e)
	if len(list) > s.opt.PerObject {
		old := list[0]
		old.gone = true
		s.stats.Evicted++
		list = append(list[:0:0], list[1:]...)
	}
	s.objects[r.Key] = list
	s.queue = append(s.queue, e)
	s.bytes += e.size
	s.stats.Kept++
}

// trim drops from the oldest arrival while a bound is passed or the
// arrival is older than the retention. The bounds count writes an object's
// own bound dropped until their turn comes, so memory stays within them.
func (s *Store) trim(now time.Time) {
	cutoff := now.Add(-s.opt.Retention)
	for s.head < len(s.queue) {
		e := s.queue[s.head]
		if len(s.queue)-s.head <= s.opt.MaxRecords && s.bytes <= s.opt.MaxBytes && !e.Completed.Before(cutoff) {
			break
		}
		s.queue[s.head] = nil
		s.head++
		s.bytes -= e.size
		if e.gone {
			continue
		}
		s.stats.Evicted++
		list := s.objects[e.Key]
		for i, x := range list {
			if x == e {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(s.objects, e.Key)
		} else {
			s.objects[e.Key] = list
		}
	}
	if s.head > 1024 && s.head*2 > len(s.queue) {
		s.queue = append(make([]*entry, 0, len(s.queue)-s.head+1024), s.queue[s.head:]...)
		s.head = 0
	}
}

// Stats returns the store's counts.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Skipped = make(map[string]uint64, len(s.stats.Skipped))
	for k, v := range s.stats.Skipped {
		st.Skipped[k] = v
	}
	st.Records, st.Bytes = len(s.queue)-s.head, s.bytes
	return st
}

// Writes returns the kept writes of one object within the retention,
// oldest first.
func (s *Store) Writes(k Key) []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opt.Now()
	s.trim(now)
	cutoff := now.Add(-s.opt.Retention)
	var out []Record
	for _, e := range s.objects[k] {
		if !e.Completed.Before(cutoff) {
			out = append(out, e.Record)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Completed.Before(out[j].Completed) })
	return out
}

// ContextName is the name of the EventList Context returns, which a
// snapshot's cluster context needs (metadata.name).
const ContextName = "driftfix-audit"

// Context returns the kept writes of a snapshot's resources as one object
// of its cluster context: an audit.k8s.io/v1 EventList at Metadata level,
// its request URIs reduced to their path and field manager, with
// metadata.name ContextName. It is nil when no write of them is kept. A
// resource's kind is named by its resource as a CustomResourceDefinition
// of the snapshot says, else as Kubernetes guesses it (Deployment:
// deployments, Ingress: ingresses).
func (s *Store) Context(snap *drift.Snapshot) drift.Object {
	plural := map[[2]string]string{}
	for _, o := range snap.Cluster {
		if drift.Str(o, "kind") == "CustomResourceDefinition" {
			plural[[2]string{drift.Str(o, "spec", "group"), drift.Str(o, "spec", "names", "kind")}] = drift.Str(o, "spec", "names", "plural")
		}
	}
	keys := make([]Key, 0, len(snap.Resources))
	for i := range snap.Resources {
		ref := snap.Resources[i].Ref()
		keys = append(keys, KeyOf(ref, plural[[2]string{ref.Group, ref.Kind}]))
	}
	return s.contextOf(keys)
}

// contextOf is Context for the objects keys name.
func (s *Store) contextOf(keys []Key) drift.Object {
	var events []auditv1.Event
	seen := map[Key]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		for _, r := range s.Writes(k) {
			events = append(events, r.Event())
		}
	}
	if len(events) == 0 {
		return nil
	}
	list := auditv1.EventList{TypeMeta: metav1.TypeMeta{APIVersion: APIVersion, Kind: KindEventList}, Items: events}
	raw, err := json.Marshal(list)
	if err != nil {
		return nil // the API's own types always encode
	}
	var o map[string]any
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil
	}
	o["metadata"] = map[string]any{"name": ContextName}
	return o
}

// KeyOf names a snapshot's object as the API server's requests do: by
// resource (plural, "" for the guess from its kind).
func KeyOf(ref drift.Ref, plural string) Key {
	if plural == "" {
		gvr, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Group: ref.Group, Version: "v1", Kind: ref.Kind})
		plural = gvr.Resource
	}
	return Key{Group: ref.Group, Resource: plural, Namespace: ref.Namespace, Name: ref.Name}
}

// Event is the record as an audit event at Metadata level: what the store
// kept and nothing else.
func (r *Record) Event() auditv1.Event {
	uri := r.Path
	if r.FieldManager != "" {
		uri += "?fieldManager=" + url.QueryEscape(r.FieldManager)
	}
	ev := auditv1.Event{
		TypeMeta: metav1.TypeMeta{APIVersion: APIVersion, Kind: KindEvent},
		Level:    auditv1.LevelMetadata, AuditID: types.UID(r.AuditID), Stage: auditv1.StageResponseComplete,
		RequestURI: uri, Verb: r.Verb,
		User:                     authnv1.UserInfo{Username: r.User.User, Groups: r.User.Groups},
		UserAgent:                r.UserAgent,
		ObjectRef:                &auditv1.ObjectReference{Resource: r.Key.Resource, Namespace: r.Key.Namespace, Name: r.Key.Name, APIGroup: r.Key.Group, Subresource: r.Subresource},
		RequestReceivedTimestamp: metav1.NewMicroTime(r.Received), StageTimestamp: metav1.NewMicroTime(r.Completed),
	}
	if r.Impersonated != nil {
		ev.ImpersonatedUser = &authnv1.UserInfo{Username: r.Impersonated.User, Groups: r.Impersonated.Groups}
	}
	if r.Code != 0 {
		ev.ResponseStatus = &metav1.Status{Code: r.Code}
	}
	return ev
}
