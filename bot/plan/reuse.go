package plan

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/remediations"
)

// What a cycle reuses of the memo (CycleOptions.Memo, bot/memo), and what
// it keeps there.

// reuser returns the collect.ScanOptions.Reuse of one instance's scan.
func reuser(m *memo.Memo, cfg *config.Config, in Instance, cluster func(*drift.Snapshot) []drift.Object, opts CycleOptions, now time.Time) func(context.Context, *collect.ScanResult) bool {
	return func(ctx context.Context, r *collect.ScanResult) bool {
		key := AppKey(in.Name, r.App.Namespace, r.App.Name)
		e := m.Candidate(key)
		if e == nil || e.Listed != r.App.Listed || e.Settings != r.Settings {
			return false
		}
		if opts.RunNow != nil && opts.RunNow(key) {
			return false // a person asked for a fresh diagnosis
		}
		if at, _ := datedAt(opts, key, now); !at.Equal(e.At) || watchKey(opts, key) != e.Watch {
			return false
		}
		if _, ok := cfg.Platform(in.Name); cfg.Policy.IgnoreRules.Enabled || ok && remediations.FeedsPlatform(e.Kept) {
			return false
		}
		if e.Writes != nil && e.Writes.SelfHealSyncs > 0 {
			return false // its count of recent syncs changes as time passes
		}
		if cluster != nil && memo.ClusterSum(cluster(probe(r, e.Refs))) != e.Cluster {
			return false
		}
		if !headsUnchanged(ctx, in, opts, e) {
			return false
		}
		seen, sum, same, err := in.Client.LiveVersions(ctx, r.App.Namespace, r.App.Name, m.Tree(e))
		if err != nil {
			return false // read and diagnosed as usual, which reports why
		}
		if !same && memo.VersionsSum(e.Refs, func(ref drift.Ref) (string, bool) { rv, ok := seen[ref]; return rv, ok }) != e.Live {
			return false
		}
		m.Reuse(key, e, sum)
		return true
	}
}

// headsUnchanged says each open pull request of the entry's fixes has the
// head its check was made on, and none was opened since.
func headsUnchanged(ctx context.Context, in Instance, opts CycleOptions, e *memo.Entry) bool {
	if opts.Open == nil || in.BranchFiles == nil {
		return true
	}
	for _, pr := range e.Part.PRs {
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

// entryFor builds the memo entry of a diagnosed application: r carries its
// snapshot; part is what planning it gave.
func entryFor(r *collect.ScanResult, cluster func(*drift.Snapshot) []drift.Object, at time.Time, watch string, p planned, part *CycleResult, writes *proposals.AppWrites) *memo.Entry {
	e := &memo.Entry{Project: r.App.Project, Namespace: r.App.Namespace, Name: r.App.Name, Listed: r.App.Listed, Settings: r.Settings, At: at, Watch: watch,
		Refs: make([]drift.Ref, len(r.Snapshot.Resources)),
		Kept: slices.Clip(p.findings), Keys: slices.Clip(p.keys), Diagnosed: p.diagnosed, Writes: writes}
	live := make(map[drift.Ref]drift.Object, len(r.Snapshot.Resources))
	for i := range r.Snapshot.Resources {
		res := &r.Snapshot.Resources[i]
		e.Refs[i] = res.Ref()
		if res.Live != nil {
			live[e.Refs[i]] = res.Live
		}
	}
	e.Live = memo.VersionsSum(e.Refs, func(ref drift.Ref) (string, bool) {
		o, ok := live[ref]
		return drift.Str(o, "metadata", "resourceVersion"), ok
	})
	if cluster != nil {
		e.Cluster = memo.ClusterSum(cluster(probe(r, e.Refs)))
	}
	e.Part = memo.Part{NewStuck: slices.Clip(part.Digest.NewStuck), ForPeople: slices.Clip(part.Digest.ForPeople),
		PRs: slices.Clip(part.PRs), Skipped: slices.Clip(part.Skipped), NotProposed: part.NotProposed}
	return e
}

// replay is what an entry gives a cycle that reuses it: its part, with the
// note of why the application is stuck as this cycle's list says, and the
// open pull requests' checks only where they are open now.
func replay(e *memo.Entry, why string, opts CycleOptions) CycleResult {
	var part CycleResult
	part.NotProposed = e.Part.NotProposed
	part.Digest.NewStuck = slices.Clone(e.Part.NewStuck)
	for i := range part.Digest.NewStuck {
		part.Digest.NewStuck[i].Note = why
	}
	part.PRs = slices.Clone(e.Part.PRs)
	for i := range part.PRs {
		if opts.Open == nil || !opts.Open(part.PRs[i].Key) {
			part.PRs[i].Check = nil
		}
	}
	part.Digest.ForPeople = e.Part.ForPeople // read only: absorbing copies it
	part.Skipped = slices.Clone(e.Part.Skipped)
	return part
}

// replayWrites is what observing the application's writes again at now
// gives: its live objects are the ones observed, so only the time moves
// (proposals.AppWrites.At; the writes themselves are the memo's, not copied).
func replayWrites(e *memo.Entry, now time.Time) (proposals.AppWrites, bool) {
	if e.Writes == nil {
		return proposals.AppWrites{}, false
	}
	aw := *e.Writes
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
