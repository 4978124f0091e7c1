// Package fights tells when two writers fight over a field: Argo CD's
// self-heal writes Git's value back, a controller or webhook writes its own,
// and the application flips between Synced and OutOfSync without ever
// looking stuck. Observe turns one cycle's snapshot into what it saw at each
// path (a fingerprint of the value and the field manager that wrote it);
// the caller keeps those across cycles; Detect reads them. It does no I/O.
package fights

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"
	"time"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
)

// DefaultMinFlips is how many changes of writer and value a path must see
// to be a fight: A, B, A, B.
const DefaultMinFlips = 3

// Absent is the fingerprint of a path the live object lacks.
const Absent = "absent"

// Write is what one cycle saw at one path of a resource: a fingerprint of
// the live value (never the value) and the manager that last wrote it ("" when
// managedFields name none, as for a webhook's addition).
type Write struct {
	Resource drift.Ref
	Path     string
	At       time.Time
	Value    string
	Manager  string
}

// Key is a resource and a path.
type Key struct {
	Resource drift.Ref
	Path     string
}

// Observe returns what the snapshot shows, at time at, at every path where Git
// and live differ now and at every watched path (those seen differing
// before, now perhaps written back by Argo CD) of the resources it holds.
func Observe(s *drift.Snapshot, at time.Time, watch []Key) ([]Write, error) {
	cmp, _, err := diff.Compare(s)
	if err != nil {
		return nil, err
	}
	return ObserveCompared(s, cmp, at, watch), nil
}

// ObserveCompared is Observe from the snapshot's comparison already made
// (diff.Compare's, or the one a diagnosis returned: classifying reads a
// comparison and never changes its differences).
func ObserveCompared(s *drift.Snapshot, cmp *drift.Comparison, at time.Time, watch []Key) []Write {
	byRef := map[drift.Ref]int{}
	for i := range s.Resources {
		byRef[s.Resources[i].Ref()] = i
	}
	seen := map[Key]bool{}
	var keys []Key
	// compared are the owners the comparison found at a key's path of live
	// (diff.Owners of it), by the key's position in keys.
	compared := map[int]*drift.Difference{}
	add := func(k Key, d *drift.Difference) {
		if !seen[k] {
			seen[k] = true
			if d != nil {
				compared[len(keys)] = d
			}
			keys = append(keys, k)
		}
	}
	for i := range cmp.Diffs {
		d := &cmp.Diffs[i]
		if d.Unexplained || len(d.Path) == 0 || s.Resources[d.Index].Target == nil || s.Resources[d.Index].Live == nil {
			continue
		}
		add(Key{d.Resource, d.Path.String()}, d)
	}
	for _, k := range watch {
		if _, ok := byRef[k.Resource]; ok {
			add(k, nil)
		}
	}
	var out []Write
	if len(keys) > 0 {
		out = make([]Write, 0, len(keys))
	}
	owners := map[int]func(drift.Pointer) []drift.Owner{} // by resource, managedFields read once
	for ki, k := range keys {
		ri := byRef[k.Resource]
		live := s.Resources[ri].Live
		if live == nil {
			continue
		}
		p, err := drift.ParsePointer(k.Path)
		if err != nil {
			continue
		}
		w := Write{Resource: k.Resource, Path: k.Path, At: at, Value: Absent}
		if v, ok := p.Get(live); ok {
			w.Value = fingerprint(v)
		}
		if d := compared[ki]; d != nil && d.Index == ri && slices.Equal(d.Path, p) {
			// The comparison read the owners of this path of this live object.
			w.Manager = lastWriter(d.Owners)
		} else {
			if owners[ri] == nil {
				owners[ri] = diff.OwnersIn(live)
			}
			w.Manager = lastWriter(owners[ri](p))
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// fingerprint identifies a value without keeping it.
func fingerprint(v any) string {
	raw, _ := json.Marshal(drift.NormalizeNumbers(v))
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// lastWriter is the owner that wrote most recently (managedFields times are
// RFC 3339, so they sort as text).
func lastWriter(os []drift.Owner) string {
	best := ""
	bestTime := ""
	for _, o := range os {
		if best == "" || o.Time > bestTime {
			best, bestTime = o.Manager, o.Time
		}
	}
	return best
}

// Fight is two writers taking turns at the same paths of a resource.
type Fight struct {
	Resource drift.Ref
	Paths    []string
	// Writers are the two managers, sorted; Last is when each was last seen
	// holding the paths.
	Writers [2]string
	Last    [2]time.Time
	// Flips counts the changes of writer and value at the path that changed
	// most; First and Latest bound the cycles that saw them.
	Flips         int
	First, Latest time.Time
}

// Detect finds the fights in what the cycles saw: a path whose value
// changes between exactly two writers, back and forth, at least minFlips
// times (DefaultMinFlips when 0). A writer that changes the value once and
// keeps it (a scale event), or one writer changing it again and again (an
// HPA scaling), is no fight. Paths of one resource fought over by the same
// two writers are one fight.
func Detect(ws []Write, minFlips int) []Fight {
	if minFlips <= 0 {
		minFlips = DefaultMinFlips
	}
	byKey := map[Key][]Write{}
	for _, w := range ws {
		k := Key{w.Resource, w.Path}
		byKey[k] = append(byKey[k], w)
	}
	type fightKey struct {
		ref     drift.Ref
		writers [2]string
	}
	fights := map[fightKey]*Fight{}
	for k, seq := range byKey {
		sort.SliceStable(seq, func(i, j int) bool { return seq[i].At.Before(seq[j].At) })
		flips := 0
		writers := map[string]time.Time{}
		var first, latest time.Time
		for i, w := range seq {
			writers[w.Manager] = w.At
			if i == 0 {
				continue
			}
			prev := seq[i-1]
			if w.Manager != prev.Manager && w.Value != prev.Value {
				if flips == 0 {
					first = prev.At
				}
				flips++
				latest = w.At
			}
		}
		if flips < minFlips || len(writers) != 2 {
			continue
		}
		var pair [2]string
		i := 0
		for m := range writers {
			pair[i] = m
			i++
		}
		sort.Strings(pair[:])
		fk := fightKey{k.Resource, pair}
		f, ok := fights[fk]
		if !ok {
			f = &Fight{Resource: k.Resource, Writers: pair, First: first, Latest: latest}
			fights[fk] = f
		}
		f.Paths = append(f.Paths, k.Path)
		if flips > f.Flips {
			f.Flips = flips
		}
		for j, m := range pair {
			if writers[m].After(f.Last[j]) {
				f.Last[j] = writers[m]
			}
		}
		if first.Before(f.First) {
			f.First = first
		}
		if latest.After(f.Latest) {
			f.Latest = latest
		}
	}
	out := make([]Fight, 0, len(fights))
	for _, f := range fights {
		sort.Strings(f.Paths)
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Resource != out[j].Resource {
			return out[i].Resource.Less(out[j].Resource)
		}
		return out[i].Writers[0]+out[i].Writers[1] < out[j].Writers[0]+out[j].Writers[1]
	})
	return out
}

// Watched returns the keys seen in earlier cycles, to watch in the next:
// a path Argo CD has just written back differs no more, and must still be
// observed.
func Watched(ws []Write) []Key {
	seen := map[Key]bool{}
	var out []Key
	for _, w := range ws {
		k := Key{w.Resource, w.Path}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
