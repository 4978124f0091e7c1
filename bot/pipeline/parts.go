package pipeline

import (
	"cmp"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations"
)

// partSize is how many resources a part holds when a snapshot file is
// diagnosed part by part.
const partSize = 64

// DiagnoseFile diagnoses a snapshot file as Diagnose diagnoses it whole,
// reading and diagnosing its resources a part at a time, so that a large
// snapshot is never held whole: the application, its cluster context and
// renders are held, and of every resource only what the diagnosis of the
// others reads (drift.Part). Resources that an ignore rule of the
// Application or argocd-cm applies to are diagnosed together, in one part,
// because judging a rule reads everything it covers.
//
// ok is false when the file must be read whole (drift.OpenSnapshotParts
// declines it, or two of its resources are the same object); the caller
// then loads and diagnoses it as before, which names any problem.
func DiagnoseFile(path string, lim drift.Limits, sens drift.Sensitivity) (rep *drift.Report, ok bool, err error) {
	return reportParts(path, lim, sens, partSize)
}

func reportParts(path string, lim drift.Limits, sens drift.Sensitivity, size int) (*drift.Report, bool, error) {
	app, status, findings, ok, err := reportOf(path, lim, sens, size, func(f *drift.Finding) (drift.Finding, error) { return *f, nil })
	if !ok || err != nil {
		return nil, ok, err
	}
	return &drift.Report{Application: app, SyncStatus: status, Findings: findings}, true, nil
}

// DiagnoseFileEncoded is DiagnoseFile with each part's findings encoded
// by encode (drift.EncodeFinding for the JSON report) before the next part
// is read: the report of a large snapshot is held without the values its
// findings show, nor the objects those were read from. The findings are in
// DiagnoseFile's order.
func DiagnoseFileEncoded(path string, lim drift.Limits, sens drift.Sensitivity, encode func(*drift.Finding) ([]byte, error)) (rep *drift.EncodedReport, ok bool, err error) {
	return encodedParts(path, lim, sens, partSize, encode)
}

func encodedParts(path string, lim drift.Limits, sens drift.Sensitivity, size int, encode func(*drift.Finding) ([]byte, error)) (*drift.EncodedReport, bool, error) {
	app, status, findings, ok, err := reportOf(path, lim, sens, size, encode)
	if !ok || err != nil {
		return nil, ok, err
	}
	return &drift.EncodedReport{Application: app, SyncStatus: status, Findings: findings}, true, nil
}

// reportOf is what a report of the file holds: its application, its sync
// status and what keep makes of each finding, in order (nil when none, as
// Diagnose).
func reportOf[T any](path string, lim drift.Limits, sens drift.Sensitivity, size int, keep func(*drift.Finding) (T, error)) (app, status string, items []T, ok bool, err error) {
	head, fs, ok, err := diagnoseParts(path, lim, sens, size, keep)
	if !ok || err != nil {
		return "", "", nil, ok, err
	}
	for i := range fs {
		items = append(items, fs[i].item)
	}
	return head.AppName(), drift.Str(head.Application, "status", "sync", "status"), items, true, nil
}

// fileIndex is what one pass over a snapshot file's resources gathers.
type fileIndex struct {
	shared   []drift.IgnoreRule
	settings drift.Settings
	failed   bool
	// refs are the file's resources, in order; byHash finds one by a
	// digest of it (a large file's index holds no second copy of each).
	refs     []drift.Ref
	byHash   map[uint64]int32
	seed     maphash.Seed
	dup      bool
	together []int // resources a shared rule applies to
	apart    []int // the others
	part     drift.Part
	context  *classifiers.Shared
	others   []drift.Ref // resources of findings that are none of the file's
}

// init reads what every resource is judged against: the shared rules and
// the settings.
func (x *fileIndex) init(head *drift.Snapshot) {
	x.byHash, x.seed = map[uint64]int32{}, maphash.MakeSeed()
	x.context = classifiers.NewShared(head.Application, head.Cluster)
	var err error
	if x.shared, x.settings, err = diff.SharedRules(head); err != nil {
		x.failed = true
	}
}

func (x *fileIndex) visit(head *drift.Snapshot, i int, r *drift.Resource) {
	if x.byHash == nil {
		x.init(head)
	}
	ref := r.Ref()
	h := maphash.Comparable(x.seed, ref)
	if _, taken := x.byHash[h]; taken || i != len(x.refs) {
		x.dup = true // the same object twice (or two of one digest): read whole
	}
	x.byHash[h] = int32(len(x.refs))
	x.refs = append(x.refs, ref)
	if slices.ContainsFunc(x.shared, func(rule drift.IgnoreRule) bool { return diff.RuleApplies(&rule, ref) }) {
		x.together = append(x.together, i)
	} else {
		x.apart = append(x.apart, i)
	}
	a, l := diff.TargetTracking(x.settings, head.Application, r.Target)
	x.part.Annotated, x.part.Labelled = x.part.Annotated || a, x.part.Labelled || l
	x.context.Add(r)
}

// index returns which of the file's resources ref is.
func (x *fileIndex) index(ref drift.Ref) (int32, bool) {
	i, ok := x.byHash[maphash.Comparable(x.seed, ref)]
	if !ok || x.refs[i] != ref {
		return 0, false
	}
	return i, true
}

// placed is what is kept of a finding, with where Diagnose would have
// made it (rules first, in Comparison order, then differences, in resource
// order) and where drift.SortFindings puts it: its resource (the index of
// one of the file's, or -1-k for the k-th other) and its path.
type placed[T any] struct {
	item     T
	path     string
	resource int32
	order    [2]int32 // 0 for a shared rule, 1 for a resource's own rule, 2 for a difference; rule or resource index
}

// diagnoseParts diagnoses the file a part at a time (parts of size
// resources), keeping what keep makes of each finding, in the order
// Diagnose reports them; head is the file's application and context.
func diagnoseParts[T any](path string, lim drift.Limits, sens drift.Sensitivity, size int, keep func(*drift.Finding) (T, error)) (head *drift.Snapshot, kept []placed[T], ok bool, err error) {
	x := &fileIndex{}
	parts, ok := drift.OpenSnapshotParts(path, lim, func(head *drift.Snapshot, i int, r *drift.Resource) { x.visit(head, i, r) })
	if !ok {
		return nil, nil, false, nil
	}
	defer parts.Close()
	head = parts.Head
	if x.byHash == nil { // no resources
		x.init(head)
	}
	if x.failed || x.dup {
		return nil, nil, false, nil
	}
	var out []placed[T]
	// The resources shared rules apply to, with every rule judged (even when
	// it applies to none), then the others a part at a time, where shared
	// rules hide nothing and their findings are left to the first part.
	groups := [][]int{x.together}
	for lo := 0; lo < len(x.apart); lo += size {
		groups = append(groups, x.apart[lo:min(lo+size, len(x.apart))])
	}
	for gi, idx := range groups {
		if gi > 0 && len(idx) == 0 {
			continue
		}
		s := &drift.Snapshot{Application: head.Application, Renders: head.Renders, Cluster: head.Cluster, Repo: head.Repo, Part: &x.part}
		for _, i := range idx {
			rs, err := parts.Resources(i, i+1)
			if err != nil {
				return nil, nil, true, err
			}
			s.Resources = append(s.Resources, rs[0])
		}
		cmp, settings, err := compare(s)
		if err != nil {
			return nil, nil, true, err
		}
		in := classifiers.NewInputShared(s, settings, cmp, x.context)
		in.Sensitivity = sens
		repo := remediations.RepoFromSnapshot(s)
		classifiers.RunEach(in, classifiers.Registry, func(f drift.Finding, ri, di int) {
			var order [2]int32
			switch {
			case ri >= 0 && ri < len(x.shared):
				if gi > 0 {
					return // judged with the resources it applies to
				}
				order = [2]int32{0, int32(ri)}
			case ri >= 0:
				holder, _ := x.index(cmp.Rules[ri].Holder)
				order = [2]int32{1, holder}
			default:
				order = [2]int32{2, int32(idx[cmp.Diffs[di].Index])}
			}
			remediations.Suggest(s, repo, sens, &f)
			if err != nil {
				return
			}
			var item T
			if item, err = keep(&f); err == nil {
				out = append(out, placed[T]{item, f.Path.String(), x.resource(f.Resource), order})
			}
		})
		if err != nil {
			return nil, nil, true, err
		}
	}
	// In drift.SortFindings' order (resource, path), stable: findings of one
	// rule or resource keep the order Diagnose made them in.
	rank := x.ranks()
	slices.SortStableFunc(out, func(a, b placed[T]) int {
		if c := cmp.Compare(rank(a.resource), rank(b.resource)); c != 0 {
			return c
		}
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return slices.Compare(a.order[:], b.order[:])
	})
	return head, out, true, nil
}

// resource is how placed names a finding's resource: the index of the
// file's resource it is, else -1-k for the k-th other one.
func (x *fileIndex) resource(ref drift.Ref) int32 {
	if i, ok := x.index(ref); ok {
		return i
	}
	if k := slices.Index(x.others, ref); k >= 0 {
		return int32(-1 - k)
	}
	x.others = append(x.others, ref)
	return int32(-len(x.others))
}

// ranks returns where each resource placed names comes in drift.Ref's
// order.
func (x *fileIndex) ranks() func(int32) int32 {
	n := int32(len(x.refs))
	refOf := func(k int32) drift.Ref { // the file's, then the others
		if k < n {
			return x.refs[k]
		}
		return x.others[k-n]
	}
	order := make([]int32, int(n)+len(x.others))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch ra, rb := refOf(a), refOf(b); {
		case ra == rb:
			return 0
		case ra.Less(rb):
			return -1
		}
		return 1
	})
	rank := make([]int32, len(order))
	for r, k := range order {
		rank[k] = int32(r)
	}
	return func(i int32) int32 {
		if i < 0 {
			return rank[n-1-i] // the (-1-i)-th other
		}
		return rank[i]
	}
}
