// Package collect reads what a diagnosis needs from Argo CD: it lists every
// application once, picks the stuck ones and snapshots each, handing the
// snapshot to the diagnosis it is given.
package collect

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/drift"
)

// ScanOptions tune one scan of an Argo CD instance.
type ScanOptions struct {
	// StuckAfter is how long an application must stay OutOfSync after a
	// successful sync; zero means at once (callers wanting the default pass
	// DefaultStuckAfter).
	StuckAfter time.Duration
	// RunNow, when set, says a person asked to diagnose an application now
	// (the Drift Dashboard's "run again now"): it is stuck as soon as it is
	// OutOfSync after a successful sync, as with a zero StuckAfter.
	RunNow func(argocd.AppSummary) bool
	// Workers bound the applications collected and diagnosed at once (default 8).
	Workers int
	// Renders asks for two fresh renders per stuck application, of the
	// revision Argo CD compared it at.
	Renders bool
	// Diagnose diagnoses each collected snapshot (pipeline.DiagnoseCompared
	// under the application's policy), returning the report and the
	// comparison it was made from; collecting decides no cause itself.
	// Required.
	Diagnose func(*drift.Snapshot) (*drift.Report, *drift.Comparison, error)
	// HardRefreshes bounds the hard refreshes of one scan (default 3). A hard
	// refresh re-renders an application, which is expensive for argocd-server;
	// driftfix asks for one only when a render is suspected: a Helm
	// application where a value Git declares differs, at the revision it
	// last synced, is re-rendered and rendered twice more before its
	// diagnosis is reported. Negative disables them.
	HardRefreshes int
	// ClusterContext returns the cluster objects a snapshot's diagnosis
	// consults (HPAs, webhooks, namespaces, CRDs, argocd-cm), from a cluster
	// read once per cycle; nil when Kubernetes is not reachable.
	ClusterContext func(*drift.Snapshot) []drift.Object
	// GitCommit, when set, says which commit a Git repository's revision
	// names now (a listing of its refs). A candidate whose one source is a
	// Git directory and whose target revision still names the commit Argo
	// CD compared is read as compared, without a refresh: Argo CD compares
	// again on every change of its live resources, so only a commit it has
	// not seen yet makes its comparison old. Others, and any the listing
	// fails for, get a normal refresh.
	GitCommit func(ctx context.Context, repoURL, revision string) (string, error)
	// Each, when set, receives every diagnosed result in the worker that
	// made it, while its snapshot is still held; Scan then drops the
	// snapshot, so a scan holds at most one snapshot per worker. Each may
	// drop the report too, once it has kept what it needs: Scan returns the
	// result as Each leaves it. It is called concurrently.
	Each func(*ScanResult)
	// Reuse, when set, is asked about each stuck candidate before it is
	// read: true says the caller still holds its last diagnosis and what
	// came of it, made from the same state (see memo.Memo), so the scan
	// neither refreshes, reads nor diagnoses it. Each still receives it,
	// marked Reused, without a snapshot or report. A candidate whose Git
	// source has a commit Argo CD has not compared yet (see GitCommit) is
	// never offered. It is called concurrently.
	Reuse func(ctx context.Context, r *ScanResult) bool
}

// ScanResult is the diagnosis of one stuck application, or why it failed.
type ScanResult struct {
	// Instance names the Argo CD instance; a cycle sets it.
	Instance string
	App      argocd.AppSummary
	Why      string
	Report   *drift.Report
	Err      error
	// Cleared says why a candidate turned out not to be stuck (a refresh
	// found it Synced, or Argo CD cannot compare it); such results carry no
	// report and Scan does not return them.
	Cleared string
	// Status is the sync status a refresh found, when it cleared the candidate.
	Status string
	// Snapshot is what the report was diagnosed from. Comparison is the
	// snapshot's comparison the diagnosis made, for Each only: it is set
	// while Each runs and dropped, with the snapshot, once Each returns.
	Snapshot   *drift.Snapshot
	Comparison *drift.Comparison
	// Fight says it was examined as a fight candidate: Synced, and self-heal
	// keeps syncing it (Cleared is set; it is not stuck).
	Fight bool
	// Reused says ScanOptions.Reuse took it: it was neither read nor
	// diagnosed this scan, and carries no snapshot or report.
	Reused bool
	// Settings is a digest of the instance's Argo CD settings as the scan
	// read them, which every diagnosis of the scan depends on.
	Settings [32]byte

	unknown bool // listed with sync status Unknown: only Argo CD's message is read
	// flipping is the Application read for a Synced application that
	// self-heal keeps syncing (a fight candidate), snapshotted as it is.
	flipping map[string]any
}

// Scan lists every application once, picks the stuck ones, and collects and
// diagnoses those concurrently: one settings call, one list call, and per
// stuck application one Application and one managed-resources call (two more
// for renders); the Application call is a normal refresh, which confirms the
// drift before it is diagnosed, unless Git still holds the commit Argo CD
// compared (see GitCommit). One application's failure is reported in its result and never
// stops the scan. An application OutOfSync right after a successful sync costs
// one more call, to read its history for a self-heal loop, and so does a
// Synced application with self-heal synced within the last hour (Flipping): its
// history is read, and when self-heal keeps syncing it its resources are
// read without a refresh (two calls in all, a fight's candidate), and so does an
// application whose sync status is Unknown, to read Argo CD's message. It
// also returns every application listed; those Argo CD cannot compare (sync
// status Unknown, or a ComparisonError condition on an Application the scan
// read) are marked CannotCompare there with Argo CD's message and are never
// diagnosed.
func Scan(ctx context.Context, c *argocd.Client, now time.Time, opts ScanOptions) ([]ScanResult, []argocd.AppSummary, error) {
	if opts.Diagnose == nil {
		return nil, nil, errors.New("scan: no diagnosis given (ScanOptions.Diagnose)")
	}
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.HardRefreshes == 0 {
		opts.HardRefreshes = 3
	}
	sc := &scan{ctx: ctx, c: c, now: now, opts: opts, hardLeft: opts.HardRefreshes}
	var err error
	if sc.settings, err = c.Settings(ctx); err != nil {
		return nil, nil, err
	}
	if b, err := json.Marshal(sc.settings); err == nil {
		sc.settingsSum = sha256.Sum256(b)
	}
	apps, err := c.ListApplications(ctx)
	if err != nil {
		return nil, nil, err
	}
	// The list is the client's (ListApplications): what the scan learns of
	// an application is written on a copy, made only then.
	l := &list{apps: apps}
	results := sc.candidates(l)
	sc.diagnoseAll(results)
	return keepFound(results, l), l.apps, ctx.Err()
}

// scan is one Scan call.
type scan struct {
	ctx      context.Context
	c        *argocd.Client
	now      time.Time
	opts     ScanOptions
	settings argocd.Settings
	// settingsSum is a digest of settings (ScanResult.Settings).
	settingsSum [32]byte

	mu       sync.Mutex
	hardLeft int // hard refreshes left
	commits  map[[2]string]*commitOnce
}

// commitOnce is one revision's commit, listed once per scan.
type commitOnce struct {
	once   sync.Once
	commit string
	err    error
}

// candidates are the applications stuck by the list alone, and those
// OutOfSync right after a successful sync whose history shows auto-sync
// re-syncing the same revision (a self-heal loop), and the Synced ones whose
// self-heal keeps syncing them (fight candidates, see Flipping), sorted by name.
func (sc *scan) candidates(l *list) []ScanResult {
	apps := l.apps
	var results []ScanResult
	for i := range apps {
		a := apps[i]
		if a.SyncStatus == "Unknown" {
			// Argo CD cannot compare it; a worker reads why.
			results = append(results, ScanResult{App: a, Why: "sync status Unknown", unknown: true})
			continue
		}
		after := sc.opts.StuckAfter
		if sc.opts.RunNow != nil && sc.opts.RunNow(a) {
			after = 0
		}
		if ok, why := Stuck(a, sc.now, after); ok {
			results = append(results, ScanResult{App: a, Why: why})
			continue
		}
		flipping := Flipping(a, sc.now)
		if (a.SyncStatus != "OutOfSync" && !flipping) || a.OperationPhase != "Succeeded" {
			continue
		}
		app, err := sc.c.GetApplication(sc.ctx, a.Namespace, a.Name)
		if err != nil {
			results = append(results, ScanResult{App: a, Why: "could not read its history", Err: err})
			continue
		}
		if no, msg := CannotCompare(app); no {
			w := l.write(i)
			w.CannotCompare, w.ComparisonError = true, msg
			continue
		}
		if r, ok := sc.fightCandidate(a, app); ok {
			results = append(results, r)
			continue
		}
		if SelfHealLoop(app, sc.now, loopWindow(a, sc.opts.StuckAfter)) || selfHealLoop(a, app, sc.now) {
			results = append(results, ScanResult{App: a, Why: "auto-sync keeps re-syncing the same revision (self-heal loop)"})
		}
	}
	sort.Slice(results, func(i, j int) bool {
		if results[i].App.Namespace != results[j].App.Namespace {
			return results[i].App.Namespace < results[j].App.Namespace
		}
		return results[i].App.Name < results[j].App.Name
	})
	return results
}

// diagnoseAll diagnoses the candidates in the scan's workers.
func (sc *scan) diagnoseAll(results []ScanResult) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < sc.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				sc.diagnose(&results[i])
			}
		}()
	}
	for i := range results {
		select {
		case jobs <- i:
		case <-sc.ctx.Done():
		}
		if sc.ctx.Err() != nil {
			break
		}
	}
	close(jobs)
	wg.Wait()
}

// diagnose confirms one candidate's drift with a normal refresh, then
// snapshots and diagnoses it; a suspected render gets a hard refresh and two
// more renders, within the scan's budget.
func (sc *scan) diagnose(r *ScanResult) {
	if r.Err != nil {
		return
	}
	if r.flipping != nil {
		sc.observeFlipping(r)
		return
	}
	if r.unknown {
		// A failed read leaves it listed without a message.
		if app, err := sc.c.GetApplication(sc.ctx, r.App.Namespace, r.App.Name); err == nil {
			_, r.App.ComparisonError = CannotCompare(app)
		}
		r.App.CannotCompare, r.Cleared = true, "Argo CD cannot compare it"
		return
	}
	r.Settings = sc.settingsSum
	if sc.opts.Reuse != nil && sc.unchangedInGit(r.App) && sc.opts.Reuse(sc.ctx, r) {
		r.Reused = true
		if sc.opts.Each != nil {
			sc.opts.Each(r)
		}
		return
	}
	app, err := sc.read(r.App)
	if err != nil {
		r.Err = err
		return
	}
	st := drift.Str(app, "status", "sync", "status")
	if no, msg := CannotCompare(app); no {
		r.Cleared, r.Status = "Argo CD cannot compare it", st
		r.App.CannotCompare, r.App.ComparisonError = true, msg
		return
	}
	if st != "OutOfSync" {
		r.Cleared, r.Status = "a refresh found it "+st, st
		return
	}
	s, rep, cmp, err := sc.collect(r.App, app, sc.opts.Renders)
	if err == nil && suspectRender(s, rep) && !sc.opts.Renders && sc.takeHard() {
		if app, err = sc.c.Refresh(sc.ctx, r.App.Namespace, r.App.Name, true); err == nil {
			s, rep, cmp, err = sc.collect(r.App, app, true)
		}
	}
	r.Report, r.Err, r.Snapshot = rep, err, s
	if sc.opts.Each != nil {
		r.Comparison = cmp
		sc.opts.Each(r)
		r.Snapshot, r.Comparison = nil, nil
	}
}

// read returns a candidate's Application as Argo CD compared it: as it is
// when Git still holds the commit Argo CD compared (see GitCommit), else
// after a normal refresh.
func (sc *scan) read(a argocd.AppSummary) (map[string]any, error) {
	if sc.current(a) {
		return sc.c.GetApplication(sc.ctx, a.Namespace, a.Name)
	}
	return sc.c.Refresh(sc.ctx, a.Namespace, a.Name, false)
}

// unchangedInGit says nothing in Git is known to be newer than what Argo
// CD compared the application with: it has no Git source of its own to
// check, no GitCommit was given, or its revision names that commit still.
func (sc *scan) unchangedInGit(a argocd.AppSummary) bool {
	if sc.opts.GitCommit == nil || !a.GitSource {
		return true
	}
	return sc.current(a)
}

// current reports whether the application's Git source's target revision
// names the commit Argo CD compared, listing each repository's revision
// once per scan.
func (sc *scan) current(a argocd.AppSummary) bool {
	if sc.opts.GitCommit == nil || !a.GitSource || a.Revision == "" || a.RepoURL == "" {
		return false
	}
	key := [2]string{a.RepoURL, a.GitRevision}
	sc.mu.Lock()
	if sc.commits == nil {
		sc.commits = map[[2]string]*commitOnce{}
	}
	c, ok := sc.commits[key]
	if !ok {
		c = &commitOnce{}
		sc.commits[key] = c
	}
	sc.mu.Unlock()
	c.once.Do(func() { c.commit, c.err = sc.opts.GitCommit(sc.ctx, a.RepoURL, a.GitRevision) })
	return c.err == nil && c.commit == a.Revision
}

// collect snapshots an application from its refreshed Application and
// diagnoses it, returning the comparison the diagnosis made too.
func (sc *scan) collect(a argocd.AppSummary, app map[string]any, renders bool) (*drift.Snapshot, *drift.Report, *drift.Comparison, error) {
	s, err := sc.c.Snapshot(sc.ctx, a.Namespace, a.Name, argocd.SnapshotOptions{Renders: renders, Settings: &sc.settings, Application: app})
	if err != nil {
		return nil, nil, nil, err
	}
	if sc.opts.ClusterContext != nil {
		AddClusterContext(s, sc.opts.ClusterContext(s))
	}
	rep, cmp, err := sc.opts.Diagnose(s)
	return s, rep, cmp, err
}

// takeHard takes one hard refresh from the scan's budget.
func (sc *scan) takeHard() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.hardLeft <= 0 {
		return false
	}
	sc.hardLeft--
	return true
}

// keepFound drops the candidates a refresh cleared, keeping in the list the
// sync status the refresh found (the list was read before it) and whether
// Argo CD could compare it.
func keepFound(results []ScanResult, l *list) []ScanResult {
	apps := l.apps
	kept := results[:0]
	// The list is indexed only when a candidate was cleared: most scans
	// clear none, and a fleet's index is large.
	var index map[[2]string]int
	for _, r := range results {
		if r.Cleared == "" && !r.unknown {
			kept = append(kept, r)
			continue
		}
		if index == nil {
			index = make(map[[2]string]int, len(apps))
			for i, a := range apps {
				index[[2]string{a.Namespace, a.Name}] = i
			}
		}
		i, ok := index[[2]string{r.App.Namespace, r.App.Name}]
		if !ok {
			continue
		}
		w := l.write(i)
		if r.Status != "" {
			w.SyncStatus = r.Status
		}
		w.CannotCompare, w.ComparisonError = r.App.CannotCompare, r.App.ComparisonError
	}
	return kept
}

// list is the application list a scan reads, copied on its first write.
type list struct {
	apps   []argocd.AppSummary
	copied bool
}

// write returns the i-th application, to change, in the scan's own copy.
func (l *list) write(i int) *argocd.AppSummary {
	if !l.copied {
		l.apps, l.copied = slices.Clone(l.apps), true
	}
	return &l.apps[i]
}

// AddClusterContext adds cluster objects to a snapshot. An object read from
// the cluster replaces one of the same group, kind, namespace and name the
// snapshot already holds: an argocd-cm read from the cluster replaces the one
// derived from argocd-server's settings, and an Application listed again
// (another application, or another Argo CD instance's, whose status.resources
// a diagnosis consults) is not counted twice.
func AddClusterContext(s *drift.Snapshot, objs []drift.Object) {
	if len(objs) == 0 {
		return
	}
	isCM := func(o drift.Object) bool {
		return drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm"
	}
	read := make(map[drift.Ref]bool, len(objs))
	hasCM := false
	for _, o := range objs {
		read[drift.RefOf(o)] = true
		hasCM = hasCM || isCM(o)
	}
	kept := s.Cluster[:0]
	for _, o := range s.Cluster {
		// the derived argocd-cm may name another namespace than the one read
		if !read[drift.RefOf(o)] && !(hasCM && isCM(o)) {
			kept = append(kept, o)
		}
	}
	s.Cluster = append(kept, objs...)
}

// suspectRender reports whether a drifting application renders a Helm chart,
// whose templates may differ between renders, and a value Git declares
// differs in an object both sides have: a resource missing from the
// cluster or from Git says nothing about its render. Nor does a drift Argo
// CD found at a revision other than the one it last synced: Git moved, and
// the new commit's values explain the difference.
func suspectRender(s *drift.Snapshot, rep *drift.Report) bool {
	if _, helm := s.HelmSource(); !helm || movedSinceSync(s.Application) {
		return false
	}
	for _, f := range rep.Findings {
		if len(f.Path) > 0 && f.InGit {
			return true
		}
	}
	return false
}

// movedSinceSync reports whether Argo CD compared the application at
// another revision than its last sync applied (both known).
func movedSinceSync(app drift.Object) bool {
	compared, ok := argocd.ComparedRevision(app)
	if !ok {
		return false
	}
	res := drift.Map(app, "status", "operationState", "syncResult")
	if len(compared.Revisions) > 0 {
		synced := drift.List(res, "revisions")
		if len(synced) != len(compared.Revisions) {
			return false
		}
		moved := false
		for i, r := range synced {
			s, _ := r.(string)
			if s == "" {
				return false
			}
			moved = moved || s != compared.Revisions[i]
		}
		return moved
	}
	synced := drift.Str(res, "revision")
	return synced != "" && synced != compared.Revision
}
