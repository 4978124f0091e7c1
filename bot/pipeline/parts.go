package pipeline

import (
	"slices"

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
	return diagnoseParts(path, lim, sens, partSize)
}

// fileIndex is what one pass over a snapshot file's resources gathers.
type fileIndex struct {
	shared   []drift.IgnoreRule
	settings drift.Settings
	failed   bool
	refs     map[drift.Ref]int
	dup      bool
	together []int // resources a shared rule applies to
	apart    []int // the others
	part     drift.Part
	context  *classifiers.Shared
}

// init reads what every resource is judged against: the shared rules and
// the settings.
func (x *fileIndex) init(head *drift.Snapshot) {
	x.refs = map[drift.Ref]int{}
	x.context = classifiers.NewShared(head.Application, head.Cluster)
	var err error
	if x.shared, x.settings, err = diff.SharedRules(head); err != nil {
		x.failed = true
	}
}

func (x *fileIndex) visit(head *drift.Snapshot, i int, r *drift.Resource) {
	if x.refs == nil {
		x.init(head)
	}
	ref := r.Ref()
	if _, dup := x.refs[ref]; dup {
		x.dup = true
	}
	x.refs[ref] = i
	if slices.ContainsFunc(x.shared, func(rule drift.IgnoreRule) bool { return diff.RuleApplies(&rule, ref) }) {
		x.together = append(x.together, i)
	} else {
		x.apart = append(x.apart, i)
	}
	a, l := diff.TargetTracking(x.settings, head.Application, r.Target)
	x.part.Annotated, x.part.Labelled = x.part.Annotated || a, x.part.Labelled || l
	x.context.Add(r)
}

// placed is a finding with where Diagnose would have made it: rules
// first, in Comparison order, then differences, in resource order.
type placed struct {
	f     drift.Finding
	order [2]int // 0 for a shared rule, 1 for a resource's own rule, 2 for a difference; rule or resource index
}

func diagnoseParts(path string, lim drift.Limits, sens drift.Sensitivity, size int) (*drift.Report, bool, error) {
	x := &fileIndex{}
	parts, ok := drift.OpenSnapshotParts(path, lim, func(head *drift.Snapshot, i int, r *drift.Resource) { x.visit(head, i, r) })
	if !ok {
		return nil, false, nil
	}
	defer parts.Close()
	head := parts.Head
	if x.refs == nil { // no resources
		x.init(head)
	}
	if x.failed || x.dup {
		return nil, false, nil
	}
	var out []placed
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
				return nil, true, err
			}
			s.Resources = append(s.Resources, rs[0])
		}
		cmp, settings, err := compare(s)
		if err != nil {
			return nil, true, err
		}
		in := classifiers.NewInputShared(s, settings, cmp, x.context)
		in.Sensitivity = sens
		repo := remediations.RepoFromSnapshot(s)
		classifiers.RunEach(in, classifiers.Registry, func(f drift.Finding, ri, di int) {
			var order [2]int
			switch {
			case ri >= 0 && ri < len(x.shared):
				if gi > 0 {
					return // judged with the resources it applies to
				}
				order = [2]int{0, ri}
			case ri >= 0:
				order = [2]int{1, x.refs[cmp.Rules[ri].Holder]}
			default:
				order = [2]int{2, idx[cmp.Diffs[di].Index]}
			}
			remediations.Suggest(s, repo, sens, &f)
			out = append(out, placed{f, order})
		})
	}
	// Stable: findings of one rule or resource keep the order they were made in.
	slices.SortStableFunc(out, func(a, b placed) int { return slices.Compare(a.order[:], b.order[:]) })
	var findings []drift.Finding // nil when none, as Diagnose
	for i := range out {
		findings = append(findings, out[i].f)
	}
	drift.SortFindings(findings)
	return &drift.Report{
		Application: head.AppName(),
		SyncStatus:  drift.Str(head.Application, "status", "sync", "status"),
		Findings:    findings,
	}, true, nil
}
