// Package plan is the planning stage run over every Argo CD instance, one
// cycle at a time: it collects the stuck applications (bot/collect),
// diagnoses them (bot/pipeline), has their fixes planned under the policy
// (remediations), with the platform and ignore-rule pull requests, and
// says what should be published (bot/proposals, the digest). It reads
// Argo CD and Git through the instances it is given, reuses last cycle's
// diagnoses from the memo (reuse.go), and publishes nothing itself.
package plan

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/fights"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// Instance is one Argo CD instance a cycle scans, with its clients.
type Instance struct {
	Name    string
	URL     string // Argo CD UI base URL, for links
	Client  *argocd.Client
	Shard   string // application name pattern, empty for all
	Cluster func(*drift.Snapshot) []drift.Object
	// ReadCluster, when set, reads the cluster context once per cycle and
	// replaces Cluster for that cycle.
	ReadCluster func(context.Context) (func(*drift.Snapshot) []drift.Object, error)
	RepoFiles   func(ctx context.Context, s *drift.Snapshot) (map[string]string, error)
	// BranchFiles reads a branch of a repository: its files and its head
	// commit. Nil: fix pull requests' heads are not checked.
	BranchFiles func(ctx context.Context, repoURL, branch string) (map[string]string, string, error)
	// GitCommit says which commit a repository's revision names now; a
	// stuck candidate whose Git revision still names the commit Argo CD
	// compared is read without a refresh (collect.ScanOptions.GitCommit).
	// Nil: every candidate is refreshed.
	GitCommit func(ctx context.Context, repoURL, revision string) (string, error)
}

// AppState is one listed application and whether the cycle found it stuck.
type AppState struct {
	Instance string
	App      argocd.AppSummary
	Stuck    bool
	// Failed says its diagnosis or planning failed this cycle, so nothing
	// about its pull requests can be concluded.
	Failed bool
	// Keys are the fixes proposed for it this cycle.
	Keys []string
	// FirstSeen is when it was first seen stuck, as CycleOptions.FirstSeen
	// answered while planning it (zero when not asked).
	FirstSeen time.Time
}

// CycleResult is what one cycle found and would do.
type CycleResult struct {
	Scanned int
	Apps    []AppState // every application of every instance that answered
	Stuck   []Stuck
	PRs     []proposals.ProposedPR
	Skipped []string // plans not proposed, and why
	// NotProposed are the fixes planned this cycle but not proposed (they
	// could not be made or verified, or they are to do by hand), by fix key,
	// each with its Skipped line.
	NotProposed map[string]string
	Digest      templates.DigestView
	Errors      []error // one per application or instance that failed; the cycle goes on
	// FailedInstances lists instances that could not be scanned.
	FailedInstances []string
	// URLs are the instances' Argo CD UI addresses, by name.
	URLs map[string]string
	// Shards are the instances' application name patterns, by name.
	Shards map[string]string
	// Writes are what each examined application showed, for fights (fights.go).
	Writes []proposals.AppWrites
	// Reused counts the stuck applications whose last diagnosis was reused
	// (CycleOptions.Memo): neither read nor diagnosed again.
	Reused int
	// Platform are the platform pull requests (platform.go): one argocd-cm
	// change per finding many applications share.
	Platform []proposals.PlatformPR
	// PlatformShared are the keys of every shared finding of an instance
	// with a platform repository this cycle, proposed or not: a platform PR
	// whose key is not among them is no longer needed.
	PlatformShared []string
	// Ignores are the ignore-rule inventories of the instances (ignores.go),
	// when the policy sets ignoreRules; IgnorePRs the pull requests that
	// remove stale rules and narrow broad ones, one per file.
	Ignores   []IgnoreInventory
	IgnorePRs []proposals.IgnorePR

	// platform are kept for planning and verifying platform fixes, by
	// AppKey: the snapshots and whole reports of the applications with
	// findings a platform fix may end.
	platform map[string]remediations.PlatformApp
	// clusters are the cluster reads of the instances this cycle, by
	// name, for predicting pull requests (bot's Predictor, through Cluster).
	clusters map[string]func(*drift.Snapshot) []drift.Object
	// people are the applications' lines left for people, as absorbed:
	// put in Digest.ForPeople once, at the cycle's end (gatherPeople).
	people [][]templates.PersonLine
}

// Stuck is a stuck application as a cycle keeps it: its findings in their
// kept form (drift.Kept), the diagnosis's values and owners let go once its
// fixes are planned.
type Stuck struct {
	Instance string
	App      argocd.AppSummary
	Why      string // why it was picked as stuck
	Err      error  // its collection or diagnosis failed
	// Diagnosed says a report was made; Findings are its findings, kept.
	Diagnosed bool
	Findings  []drift.Kept
}

// Owns reports whether this cycle scanned the application (by AppKey): its
// instance answered and the name is in the instance's shard. Pull requests
// of applications it does not own belong to another bot.
func (res *CycleResult) Owns(appKey string) bool {
	id := ParseAppKey(appKey)
	if _, ok := res.URLs[id.Instance]; !ok || slices.Contains(res.FailedInstances, id.Instance) {
		return false
	}
	return inShard(res.Shards[id.Instance], id.Name)
}

// CycleOptions tune a cycle.
type CycleOptions struct {
	// FirstSeen returns when an application (by AppKey) was first seen stuck;
	// fixes are dated by it so that the same fix reads the same every day.
	// Nil dates fixes now.
	FirstSeen func(key string) time.Time
	// Open says whether a fix (by key) has an open pull request, whose head
	// is then read and checked. Nil checks no head.
	Open func(key string) bool
	// Watch returns the paths of an application (by AppKey) seen differing
	// in earlier cycles, observed again for fights. Nil watches none.
	Watch func(appKey string) []fights.Key
	// RuleIdle records whether an ignore rule of an instance (by its
	// identity) hid nothing this cycle, and returns since when it has hidden
	// nothing (zero when it hides something). Nil: rules are never stale
	// for long enough to be removed.
	RuleIdle func(instance, rule string, idle bool) time.Time
	// RunNow says a person asked (on the Drift Dashboard) to diagnose an
	// application (by AppKey) now: it does not wait for stuckAfter after
	// its last sync. Nil: none asked.
	RunNow func(appKey string) bool
	// Memo, when set, keeps each stuck application's diagnosis from one
	// cycle to the next and reuses it while nothing it depended on has
	// changed (see memo.Memo). Nil: every stuck application is diagnosed.
	Memo *memo.Memo
	// HardRefreshes bounds the hard refreshes of each instance's scan
	// (collect.ScanOptions.HardRefreshes; 0: its default).
	HardRefreshes int
}

// AppKey names an application across instances: instance/namespace/name.
func AppKey(instance, namespace, name string) string { return instance + "/" + namespace + "/" + name }

// AppID is an application across instances, as AppKey names it.
type AppID struct{ Instance, Namespace, Name string }

// ParseAppKey reads an AppKey back. Instance and namespace names hold no
// slash, so the name is everything after the second one.
func ParseAppKey(key string) AppID {
	inst, rest, _ := strings.Cut(key, "/")
	ns, name, _ := strings.Cut(rest, "/")
	return AppID{Instance: inst, Namespace: ns, Name: name}
}

// Cycle scans every instance, plans fixes for the stuck applications under
// the policy, and returns the pull requests and the digest it would publish.
// It publishes nothing itself.
func Cycle(ctx context.Context, cfg *config.Config, instances []Instance, now time.Time, opts CycleOptions) CycleResult {
	res := CycleResult{URLs: map[string]string{}, Shards: map[string]string{}}
	if opts.Memo != nil {
		opts.Memo.Begin(cfg)
		defer opts.Memo.End()
	}
	// Instances are scanned concurrently, each within its own budget (its
	// scan's workers); their results are put together in the given order.
	parts := make([]CycleResult, len(instances))
	var wg sync.WaitGroup
	for i, in := range instances {
		res.URLs[in.Name], res.Shards[in.Name] = in.URL, in.Shard
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := parts[i].scanInstance(ctx, cfg, in, now, opts); err != nil {
				parts[i].Errors = append(parts[i].Errors, fmt.Errorf("instance %s: %w", in.Name, err))
				parts[i].FailedInstances = append(parts[i].FailedInstances, in.Name)
			}
		}()
	}
	wg.Wait()
	for i := range parts {
		res.join(&parts[i])
	}
	res.gatherPeople()
	res.sortForPublishing()
	res.sortWrites()
	res.Digest.Fleet = Fleet(res.Stuck, FleetMin)
	res.planPlatform(ctx, cfg, instances)
	return res
}

// planned is what planning one application gave.
type planned struct {
	keys      []string
	ok        bool
	first     time.Time
	diagnosed bool
	findings  []drift.Kept
}

// scanInstance scans one instance and plans each stuck application of its
// shard as soon as it is diagnosed, in the scan's worker, so its snapshot is
// let go right after.
func (res *CycleResult) scanInstance(ctx context.Context, cfg *config.Config, in Instance, now time.Time, opts CycleOptions) error {
	cluster := in.Cluster
	if in.ReadCluster != nil {
		c, err := in.ReadCluster(ctx)
		if err != nil {
			return fmt.Errorf("read the cluster: %w", err)
		}
		cluster = c
	}
	res.clusters = map[string]func(*drift.Snapshot) []drift.Object{in.Name: cluster}
	var mu sync.Mutex
	plans := map[string]planned{}
	inventory := cfg.Policy.IgnoreRules.Enabled
	inv := map[string]inventorySnap{}
	each := func(r *collect.ScanResult) {
		if r.Err != nil || !inShard(in.Shard, r.App.Name) {
			return
		}
		key := AppKey(in.Name, r.App.Namespace, r.App.Name)
		if r.Reused {
			e := opts.Memo.Take(key)
			part := replay(e, r.Why, opts)
			// Reuse found the date its fixes are dated by unchanged: when it
			// is the first-seen time, it is that, without asking again.
			var first time.Time
			if opts.FirstSeen != nil {
				first = e.At
			}
			aw, ok := replayWrites(e, now)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				res.Writes = append(res.Writes, aw)
			}
			res.absorb(&part)
			res.Reused++
			plans[r.App.Namespace+"/"+r.App.Name] = planned{e.Keys, true, first, e.Diagnosed, e.Kept}
			return
		}
		// kept are the findings as the cycle keeps them; their paths are
		// the writes' where both name one.
		var kept []drift.Kept
		aw, ok, err := observeWrites(cfg, in, r, now, opts)
		if ok || err != nil {
			mu.Lock()
			if err != nil {
				res.Errors = append(res.Errors, err)
			} else {
				res.Writes = append(res.Writes, aw)
			}
			mu.Unlock()
		}
		if ok && err == nil {
			kept = aw.Causes
		} else if r.Report != nil {
			kept = keepFindings(r.Report.Findings, nil)
		}
		if r.Fight {
			r.Report = nil
			return // Synced: only observed
		}
		at, first := datedAt(opts, key, now)
		var part CycleResult
		keys, ok := planning{cfg: cfg, in: in, opts: opts, kept: kept}.planApp(ctx, &part, *r, at)
		p := planned{keys, ok, first, r.Report != nil, kept}
		if opts.Memo != nil && ok && err == nil && len(part.Errors) == 0 && r.Snapshot != nil {
			var writes *proposals.AppWrites
			if aw.App != "" {
				writes = &aw
			}
			opts.Memo.Store(key, entryFor(r, cluster, at, watchKey(opts, key), p, &part, writes))
		}
		mu.Lock()
		defer mu.Unlock()
		res.absorb(&part)
		res.keepForPlatform(cfg, in.Name, r)
		plans[r.App.Namespace+"/"+r.App.Name] = p
		if inventory && r.Snapshot != nil && r.Report != nil {
			inv[r.App.Namespace+"/"+r.App.Name] = inventorySnap{s: r.Snapshot, report: r.Report}
		}
		// The cycle keeps the findings' kept form: the scan lets the
		// report go with the snapshot.
		r.Report = nil
	}
	var runNow func(argocd.AppSummary) bool
	if opts.RunNow != nil {
		runNow = func(a argocd.AppSummary) bool { return opts.RunNow(AppKey(in.Name, a.Namespace, a.Name)) }
	}
	so := collect.ScanOptions{StuckAfter: cfg.Policy.StuckAfter, RunNow: runNow, ClusterContext: cluster, GitCommit: in.GitCommit, Each: each, Diagnose: diagnoser(cfg), HardRefreshes: opts.HardRefreshes}
	if opts.Memo != nil {
		so.Reuse = reuser(opts.Memo, cfg, in, cluster, opts, now)
	}
	stuck, listed, err := collect.Scan(ctx, in.Client, now, so)
	if err != nil {
		return err
	}
	res.record(in, stuck, listed, plans)
	if inventory {
		failed := 0
		for _, r := range stuck {
			if inShard(in.Shard, r.App.Name) && r.Err != nil {
				failed++ // what its rules hide is not known this cycle
			}
		}
		res.inventory(ctx, cfg, in, cluster, listed, inv, failed, now, opts)
	}
	return nil
}

// record adds an instance's listed applications of its shard and its stuck
// ones, with what planning them gave.
func (res *CycleResult) record(in Instance, stuck []collect.ScanResult, listed []argocd.AppSummary, plans map[string]planned) {
	// Every listed application is kept for the whole cycle: its list is
	// sized once (no copies left behind by growing it). The stuck ones are
	// found in it by an index of the stuck ones only, by name: a tenth of
	// the list or less.
	index := make(map[appName]int, len(stuck))
	for _, r := range stuck {
		index[appName{r.App.Namespace, r.App.Name}] = -1
	}
	n := 0
	for _, a := range listed {
		if inShard(in.Shard, a.Name) {
			n++
		}
	}
	res.Apps = slices.Grow(res.Apps, n)
	res.Stuck = slices.Grow(res.Stuck, len(stuck))
	for _, a := range listed {
		if !inShard(in.Shard, a.Name) {
			continue
		}
		res.Scanned++
		if _, ok := index[appName{a.Namespace, a.Name}]; ok {
			index[appName{a.Namespace, a.Name}] = len(res.Apps)
		}
		res.Apps = append(res.Apps, AppState{Instance: in.Name, App: a})
	}
	res.Digest.Instance, res.Digest.ArgoCDURL = in.Name, in.URL
	for _, r := range stuck {
		i := index[appName{r.App.Namespace, r.App.Name}]
		if i < 0 {
			continue
		}
		res.Apps[i].Stuck = true
		if r.Err != nil {
			res.Stuck = append(res.Stuck, Stuck{Instance: in.Name, App: r.App, Why: r.Why, Err: r.Err})
			res.Apps[i].Failed = true
			res.Errors = append(res.Errors, fmt.Errorf("application %s/%s: %w", r.App.Namespace, r.App.Name, r.Err))
			continue
		}
		p := plans[r.App.Namespace+"/"+r.App.Name]
		res.Stuck = append(res.Stuck, Stuck{Instance: in.Name, App: r.App, Why: r.Why, Diagnosed: p.diagnosed, Findings: p.findings})
		res.Apps[i].Keys, res.Apps[i].Failed, res.Apps[i].FirstSeen = p.keys, !p.ok, p.first
	}
}

// appName is an application of one instance: its namespace and name.
type appName struct{ namespace, name string }

// sortForPublishing orders what workers found in any order, so that what is
// published does not depend on it (the lines left for people are put in
// order by gatherPeople).
func (res *CycleResult) sortForPublishing() {
	templates.SortAppLines(res.Digest.NewStuck)
	sort.Strings(res.Skipped)
	sort.SliceStable(res.Errors, func(i, j int) bool { return res.Errors[i].Error() < res.Errors[j].Error() })
	sort.SliceStable(res.PRs, func(i, j int) bool { return res.PRs[i].Branch < res.PRs[j].Branch })
	sort.SliceStable(res.IgnorePRs, func(i, j int) bool { return res.IgnorePRs[i].Branch < res.IgnorePRs[j].Branch })
	sort.SliceStable(res.Ignores, func(i, j int) bool { return res.Ignores[i].Instance < res.Ignores[j].Instance })
}

// FleetMin is how many applications one source must drift before the
// digest names it once, with one platform fix, instead of app by app.
const FleetMin = remediations.FleetMin

// Fleet groups findings that share one source across applications
// (remediations.Fleet).
func Fleet(stuck []Stuck, min int) []templates.FleetLine {
	return remediations.Fleet(func(yield func(remediations.FleetApp) bool) {
		for _, r := range stuck {
			if !yield(remediations.FleetApp{Instance: r.Instance, App: r.App.Namespace + "/" + r.App.Name, Findings: r.Findings}) {
				return
			}
		}
	}, min)
}

func inShard(shard, name string) bool {
	if shard == "" {
		return true
	}
	ok, _ := path.Match(shard, name)
	return ok
}

// join takes in the result of one instance's scan.
func (res *CycleResult) join(part *CycleResult) {
	res.absorb(part)
	res.Scanned += part.Scanned
	res.Reused += part.Reused
	res.Apps = joined(res.Apps, part.Apps)
	res.Stuck = joined(res.Stuck, part.Stuck)
	res.FailedInstances = append(res.FailedInstances, part.FailedInstances...)
	res.Writes = joined(res.Writes, part.Writes)
	res.Platform = append(res.Platform, part.Platform...)
	res.PlatformShared = append(res.PlatformShared, part.PlatformShared...)
	res.Ignores = append(res.Ignores, part.Ignores...)
	res.IgnorePRs = append(res.IgnorePRs, part.IgnorePRs...)
	for k, c := range part.clusters {
		if res.clusters == nil {
			res.clusters = map[string]func(*drift.Snapshot) []drift.Object{}
		}
		res.clusters[k] = c
	}
	for k, a := range part.platform {
		if res.platform == nil {
			res.platform = map[string]remediations.PlatformApp{}
		}
		res.platform[k] = a
	}
	if part.Digest.Instance != "" {
		res.Digest.Instance, res.Digest.ArgoCDURL = part.Digest.Instance, part.Digest.ArgoCDURL
	}
}

// joined appends an instance's part to what the cycle has; the first part
// is taken as it is, not copied: a fleet's applications, stuck ones and
// writes are large, and the part is not used after it is joined.
func joined[T any](to, part []T) []T {
	if len(to) == 0 {
		return part
	}
	return append(to, part...)
}

// gatherPeople puts the lines left for people that were absorbed in
// Digest.ForPeople, in order (templates.GatherPeople).
func (res *CycleResult) gatherPeople() {
	if all := templates.GatherPeople(append([][]templates.PersonLine{res.Digest.ForPeople}, res.people...)); all != nil {
		res.Digest.ForPeople = all
	}
	res.people = nil
}

// absorb takes in what planning one application added.
func (res *CycleResult) absorb(part *CycleResult) {
	res.Digest.NewStuck = joined(res.Digest.NewStuck, part.Digest.NewStuck)
	if len(part.Digest.ForPeople) > 0 {
		res.people = append(res.people, part.Digest.ForPeople)
	}
	res.people = append(res.people, part.people...)
	res.PRs = append(res.PRs, part.PRs...)
	res.Skipped = append(res.Skipped, part.Skipped...)
	for k, why := range part.NotProposed {
		if res.NotProposed == nil {
			res.NotProposed = map[string]string{}
		}
		res.NotProposed[k] = why
	}
	res.Errors = append(res.Errors, part.Errors...)
}

// planning is what planning an application's fixes needs besides the application.
type planning struct {
	cfg  *config.Config
	in   Instance
	opts CycleOptions
	// kept are the report's findings as the cycle keeps them, in order.
	kept []drift.Kept
}

// planApp plans an application's fixes into part; it returns the keys of
// the fixes proposed and whether planning finished.
func (pl planning) planApp(ctx context.Context, part *CycleResult, r collect.ScanResult, now time.Time) ([]string, bool) {
	cfg, in := pl.cfg, pl.in
	pol := cfg.For(r.App.Project, r.App.Name, r.App.Namespace)
	var causes []drift.Cause
	seen := map[drift.Cause]bool{}
	for i, f := range r.Report.Findings {
		if !seen[f.Cause] {
			seen[f.Cause] = true
			causes = append(causes, f.Cause)
		}
		if f.Remediation.Kind == drift.FixNone {
			var path string
			if len(pl.kept) == len(r.Report.Findings) {
				path = pl.kept[i].Path
			} else {
				path = f.Path.String()
			}
			part.Digest.ForPeople = append(part.Digest.ForPeople, templates.PersonLine{App: r.App.Name, Namespace: r.App.Namespace, Instance: in.Name,
				Resource: f.Resource, Path: path, Cause: f.Cause, Why: f.Remediation.Reason})
		}
	}
	part.Digest.NewStuck = append(part.Digest.NewStuck, templates.AppLine{App: r.App.Name, Namespace: r.App.Namespace, Instance: in.Name, Causes: causes, Note: r.Why})
	if in.RepoFiles == nil {
		return nil, true
	}
	s := r.Snapshot
	var err error
	if s.Repo.Files, err = in.RepoFiles(ctx, s); err != nil {
		part.Errors = append(part.Errors, fmt.Errorf("application %s/%s: %w", r.App.Namespace, r.App.Name, err))
		return nil, false
	}
	fo := pipeline.FixOptions{Sensitivity: pol.Sensitivity(), Now: now, Render: proposals.RenderLimits(cfg.Limits), Decide: pol.Decide}
	_, plans, err := pipeline.FixWith(s, remediations.RepoFromSnapshot(s), fo)
	if err != nil {
		part.Errors = append(part.Errors, fmt.Errorf("application %s/%s: %w", r.App.Namespace, r.App.Name, err))
		return nil, false
	}
	var keys []string
	for _, p := range plans {
		pr, ok, err := pl.propose(r, pol, p)
		if err != nil {
			part.Errors = append(part.Errors, err)
			return keys, false
		}
		if !ok {
			part.Skipped = append(part.Skipped, pr.Body)
			part.Digest.ForPeople = append(part.Digest.ForPeople, remediations.ByHand(p, in.Name, r.App.Namespace, r.App.Name)...)
			if pr.Key != "" {
				if part.NotProposed == nil {
					part.NotProposed = map[string]string{}
				}
				part.NotProposed[pr.Key] = pr.Body
			}
			continue
		}
		pl.checkHead(ctx, part, &pr, r, fo)
		keys = append(keys, pr.Key)
		part.PRs = append(part.PRs, pr)
	}
	part.Digest.ForPeople = leftForPeople(part.Digest.ForPeople, part.PRs)
	templates.SortPeople(part.Digest.ForPeople) // as gatherPeople expects
	return keys, true
}

// leftForPeople drops the lines left for people that a proposed fix carries
// after all (a change made by hand that the policy adopts into Git).
func leftForPeople(lines []templates.PersonLine, prs []proposals.ProposedPR) []templates.PersonLine {
	covered := map[string]bool{}
	for _, pr := range prs {
		for _, f := range pr.Plan.Findings {
			covered[f.Resource.String()+"\x00"+f.Path.String()] = true
		}
	}
	if len(covered) == 0 {
		return lines
	}
	out := lines[:0]
	for _, l := range lines {
		if !covered[l.Resource.String()+"\x00"+l.Path] {
			out = append(out, l)
		}
	}
	return out
}

// propose turns a plan into the pull request that carries it; a plan that
// is not proposed comes back with its key and why in Body.
func (pl planning) propose(r collect.ScanResult, pol config.Policy, p remediations.Plan) (proposals.ProposedPR, bool, error) {
	app := r.App.Namespace + "/" + r.App.Name
	appKey := AppKey(pl.in.Name, r.App.Namespace, r.App.Name)
	key := remediations.FixKey(appKey, p)
	// what was passed over first (a kind the policy does not allow, one
	// that did not verify) is said before why this plan is not proposed
	var passed string
	for _, a := range p.Passed {
		passed += a.String() + "; "
	}
	switch {
	case p.Dropped != "":
		return proposals.ProposedPR{Key: key, Body: fmt.Sprintf("%s %s %s: %s%s", app, p.Kind, p.Resource, passed, p.Dropped)}, false, nil
	case len(p.Edits) == 0:
		return proposals.ProposedPR{Key: key, Body: fmt.Sprintf("%s %s %s: %sto do by hand (not verified: driftfix edits no file for it): %s", app, p.Kind, p.Resource, passed, p.Instructions)}, false, nil
	case !p.Verified():
		return proposals.ProposedPR{Key: key, Body: fmt.Sprintf("%s %s %s: %sthe plan was not verified", app, p.Kind, p.Resource, passed)}, false, nil
	}
	var src drift.Source
	if srcs := drift.Sources(r.Snapshot.Application); len(srcs) > 0 {
		src = srcs[0]
	}
	v := remediations.PRView(r.App.Name, r.App.Namespace, pl.in.URL, p)
	body, err := templates.PRBody(v)
	if err != nil {
		return proposals.ProposedPR{}, false, err
	}
	pol = proposals.PRPolicy(pol, p.Kind)
	pr := proposals.ProposedPR{Instance: pl.in.Name, App: r.App.Name, Namespace: r.App.Namespace, Key: key, Fingerprint: v.Fingerprint,
		RepoURL: src.RepoURL, Base: src.TargetRevision, Policy: pol,
		Branch: templates.Branch(pol.BranchPrefix, r.App.Name, p.Rationale.Cause, key), Title: templates.PRTitle(v), Body: body + templates.KeyMarker(key, appKey), Plan: p}
	pr.Planned, err = pl.headCheck(r, pipeline.CheckPlanned(p), "")
	return pr, true, err
}

// diagnoser diagnoses a collected snapshot with the sensitive paths of its
// application's policy.
func diagnoser(cfg *config.Config) func(*drift.Snapshot) (*drift.Report, *drift.Comparison, error) {
	return func(s *drift.Snapshot) (*drift.Report, *drift.Comparison, error) {
		app := s.Application
		pol := cfg.For(drift.Str(app, "spec", "project"), drift.Str(app, "metadata", "name"), drift.Str(app, "metadata", "namespace"))
		return pipeline.DiagnoseCompared(s, pol.Sensitivity())
	}
}

// Cluster is the cluster read of an instance this cycle (nil when none),
// for predicting pull requests with it.
func (res *CycleResult) Cluster(instance string) func(*drift.Snapshot) []drift.Object {
	return res.clusters[instance]
}
