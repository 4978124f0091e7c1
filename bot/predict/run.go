package predict

import (
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// Revision is a repository at one revision: its manifest, chart and
// kustomization files (path -> content), as bot/gitrepo reads them.
type Revision struct {
	Name  string // how the revision is named in messages ("main", "the work tree")
	Files map[string]string
	// Unread are the files a read budget left out (gitrepo's Tree.Skipped,
	// through Unread): a render that needs one names it and its budget.
	Unread render.Unread
	// Commit is the revision as Argo CD's repo-server can fetch it (a
	// commit SHA or a branch of the repository's remote); "" when it
	// cannot (a work tree), so Options.Remote is not asked for it.
	Commit string
}

// Options tune Run.
type Options struct {
	// All reports every prediction of head, not only those base lacks, for
	// every application found, touched by the change or not.
	All bool
	// App restricts the run to the Applications of one manifest file, or to
	// one source directory (an Application is made for it); empty: every
	// Application manifest in the repository.
	App string
	// Cluster is the cluster context (see Input.Cluster).
	Cluster []drift.Object
	// Render bounds each render; zero fields take render's defaults.
	Render render.Limits
	// Repositories are the URLs the checkout is known by (its remotes):
	// a source whose repoURL is none of them is another repository's and is
	// not rendered. Empty: every source whose path has files here is taken
	// as this repository's.
	Repositories []string
	// MaxApplications bounds the applications rendered in one run (each is
	// rendered up to four times); 0 takes DefaultMaxApplications.
	MaxApplications int
	// Applications are Applications known from elsewhere (Argo CD's own,
	// as the bot lists them) whose sources may be in this repository; an
	// Application manifest of the same name in the repository wins.
	Applications []drift.Object
	// ClusterFor, when set, gives the cluster context of one application's
	// predicted snapshot (its resources are the render, without live
	// states), as the bot's cluster read gives it per application; it is
	// used instead of Cluster.
	ClusterFor func(*drift.Snapshot) []drift.Object
	// Suggest plans each prediction's fix with the engine and keeps it as a
	// Suggestion where it is one line's edit (a review's suggestion).
	Suggest bool
	// Remote, when set, renders an application as Argo CD renders it at a
	// revision of this repository (argocd-server's manifests endpoint, as
	// the bot or the CLI with --argocd-server reach it). It is asked only
	// for an application Argo CD knows (one of Applications) whose sources
	// the local renderer cannot render: a chart from a Helm or OCI
	// repository, another repository's source, a Config Management Plugin.
	Remote func(app drift.Object, rev Revision) ([]drift.Object, error)
	// Charts, when set, fetches charts from Helm chart repositories and
	// OCI registries, as Argo CD's repo-server and `helm dependency build`
	// do: an Application's chart source and the remote dependencies of a
	// chart that charts/ lacks. The fetching is the caller's (the CLI's
	// own process); renders run on the fetched archives, without network.
	// Nil: such applications are listed as not predicted (NotFetched says
	// why).
	Charts FetchCharts
	// ChartsFromBase fetches only from the chart repositories and
	// registries the base revision names (see chartRepositoriesOf): a pull
	// request's head, which may come from a fork, names any URL it likes
	// and must not choose what is fetched.
	ChartsFromBase bool
	// NotFetched says why charts are not fetched when Charts is nil, as a
	// not-predicted application's reason says it ("--offline").
	NotFetched string
}

// DefaultTimeout is how long the renders of one run of driftfix predict
// may take together by default (its --timeout).
const DefaultTimeout = 10 * time.Minute

// DefaultMaxApplications is Options.MaxApplications' default.
const DefaultMaxApplications = 200

// Result is what Run found.
type Result struct {
	// Applications are the applications predicted, by name, in order.
	Applications []string
	// Predictions are sorted; only what the change introduces unless All.
	Predictions []Prediction
	// Notes say what was not predicted and why (a source outside the
	// repository, a chart from a Helm repository, a base that does not render).
	Notes []string
	// Manifests are the files that define the applications found at head,
	// by name (a SARIF result's location where a prediction has none).
	Manifests map[string]string
	// NotPredicted are the applications the change touches (or, with All,
	// every one found) that were not predicted, each with why and what
	// would let it be; sorted by application.
	NotPredicted []NotPredicted
}

// NotPredicted is one application that was found but not predicted.
type NotPredicted struct {
	// Application is the application's name; for an ApplicationSet that
	// did not resolve, the ApplicationSet's.
	Application string `json:"application"`
	// Kind is "Application" or "ApplicationSet".
	Kind string `json:"kind"`
	// File is the manifest that defines it (or the parent's); "" when it
	// is known from Argo CD only.
	File string `json:"file,omitempty"`
	// Reason says why it was not predicted, in the user's terms.
	Reason string `json:"reason"`
	// Needs says what would let it be predicted (a flag, Argo CD at hand,
	// a cluster context file); "" when nothing would.
	Needs string `json:"needs,omitempty"`
}

// ErrNoApplication is returned when the repository has no Application
// manifest (and no --app names one).
var ErrNoApplication = errors.New("no Argo CD Application manifest (kind Application, apiVersion argoproj.io/...) found")

// ErrTooManyApplications is returned when the change touches more
// applications than Options.MaxApplications.
var ErrTooManyApplications = errors.New("the change touches too many applications")

// Run predicts, for each Application in head whose sources the change from
// base touches (every one with All), the fields that will differ after sync.
// Applications are found as Argo CD would have them (see discover): their
// manifests, overlays, app-of-apps parents and ApplicationSets. It renders
// each application from base and head (head twice, where a chart could
// render random or time-based values) with remediations/render, which runs
// each render in a bounded child process without network. An application
// that cannot be predicted is listed in Result.NotPredicted with why; it
// never stops the others.
//
// When ctx is done (a budget spent, the user's interrupt) the render running
// is killed and no other starts: Run returns what it predicted so far, the
// applications it did not reach listed in Result.NotPredicted, and an error
// wrapping ctx's cause (a *BudgetError where a budget ran out), so that a
// caller can say why the prediction is partial.
func Run(ctx context.Context, base, head Revision, opt Options) (*Result, error) {
	if opt.Render.Stop == nil {
		opt.Render.Stop = ctx.Done()
	}
	rr := newRenderer()
	// The base first: what it names bounds what the head may fetch.
	bd, _ := findApplications(base, opt, rr)
	if opt.Charts != nil && opt.ChartsFromBase {
		var baseApps []application
		if bd != nil {
			baseApps = bd.apps
		}
		opt.Charts = fromBase(opt.Charts, base.Name, chartRepositoriesOf(baseApps, base.Files))
	}
	hd, err := findApplications(head, opt, rr)
	if err != nil {
		return nil, err
	}
	apps := withKnown(hd.apps, opt.Applications)
	var baseApps []application
	if bd != nil {
		baseApps = withKnown(bd.apps, opt.Applications)
	}
	if len(apps) == 0 && len(hd.not) == 0 {
		return nil, ErrNoApplication
	}
	r := &predictRun{base: base, head: head, opt: opt, rr: rr, changed: changedFiles(base.Files, head.Files)}
	res := r.newResult(hd)
	// Which applications to predict is decided in order; the renders and
	// predictions then run side by side (renders are processes of their
	// own), and their results are put back in that order.
	jobs, err := r.selectJobs(res, apps, baseApps)
	if err != nil {
		return nil, err
	}
	r.predictJobs(ctx, jobs)
	r.gather(ctx, res, jobs)
	sortResult(res)
	if ctx.Err() != nil {
		return res, fmt.Errorf("predict stopped before every application was predicted: %w", context.Cause(ctx))
	}
	return res, nil
}

// predictRun is what one Run shares between its applications: the two
// revisions, the options, the renderer and the files the change touches.
type predictRun struct {
	base, head Revision
	opt        Options
	rr         *renderer
	changed    []string
}

// predictJob is one application to predict, with what its prediction gave.
type predictJob struct {
	a, was       *application
	srcs, bsrcs  []drift.Source
	remote       bool // rendered by Options.Remote
	headPs       []Prediction
	basePs       []Prediction
	err, baseErr error
}

// newResult starts the result with what discovery found at head: its notes,
// the manifests of the applications and the ones it cannot predict (those
// the change touches, or every one with All).
func (r *predictRun) newResult(hd *discovery) *Result {
	res := &Result{Notes: hd.notes, Manifests: map[string]string{}}
	for _, a := range hd.apps {
		if a.manifest != "" {
			res.Manifests[drift.Str(a.obj, "metadata", "name")] = a.manifest
		}
	}
	if r.opt.All {
		res.NotPredicted = append(res.NotPredicted, hd.not...)
	} else {
		res.NotPredicted = append(res.NotPredicted, hd.touchedNot(r.changed)...)
	}
	return res
}

// selectJobs decides, in order, which applications to predict: those the
// change touches (every one with All) that render from the repository or
// through Argo CD. The ones missing a source are listed as not predicted,
// and more than Options.MaxApplications is an error.
func (r *predictRun) selectJobs(res *Result, apps, baseApps []application) ([]*predictJob, error) {
	opt, base, head, changed, rr := r.opt, r.base, r.head, r.changed, r.rr
	known := map[string]drift.Object{}
	for _, k := range opt.Applications {
		known[appKey(k)] = k
	}
	limit := opt.MaxApplications
	if limit <= 0 {
		limit = DefaultMaxApplications
	}
	var jobs []*predictJob
	for i := range apps {
		a := &apps[i]
		name := drift.Str(a.obj, "metadata", "name")
		was := findDefinition(baseApps, *a)
		srcs, missing := planSourcesWith(a.obj, head.Files, opt)
		for _, e := range missing {
			res.Notes = append(res.Notes, fmt.Sprintf("application %s: %v", name, e))
		}
		specChanged := was == nil || !reflect.DeepEqual(was.obj, a.obj)
		k := known[appKey(a.obj)]
		// Argo CD, where it is at hand, renders what is not in the
		// repository: the fetched charts are for when it is not.
		remote := (len(missing) > 0 || hasRemoteChart(a.obj)) && argoRenders(opt, head, k, a.obj)
		if (len(srcs) == 0 || len(missing) > 0) && !remote {
			// a render without one of its sources is not the application's
			if specChanged || opt.All || touches(a.obj, srcs, changed, rr, base, head, opt.Repositories) || readsRef(a.obj, changed) {
				n := notLocal(a, name, missing)
				if k != nil && opt.Remote != nil && head.Commit != "" {
					n.Reason += "; Argo CD renders the Application it has, and this change edits it"
					n.Needs = "the change to the Application merged first, then the rest predicted with Argo CD at hand"
				}
				res.NotPredicted = append(res.NotPredicted, n)
			}
			continue
		}
		touched := specChanged || touches(a.obj, srcs, changed, rr, base, head, opt.Repositories) || (remote && readsRef(a.obj, changed))
		if !touched && !opt.All {
			continue
		}
		if len(jobs) >= limit {
			return nil, fmt.Errorf("%w: more than %d; predict fewer at a time with --app", ErrTooManyApplications, limit)
		}
		j := &predictJob{a: a, srcs: srcs, remote: remote}
		if was != nil && !opt.All {
			j.was = was
			j.bsrcs, _ = planSourcesWith(was.obj, base.Files, opt)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// predictJobs renders and predicts the jobs side by side, one worker per
// processor, each at head and, where the application was at base, at base.
// Once ctx is done no render starts: the jobs left get render.ErrStopped.
func (r *predictRun) predictJobs(ctx context.Context, jobs []*predictJob) {
	opt, base, head, rr := r.opt, r.base, r.head, r.rr
	if opt.Remote != nil {
		remote := opt.Remote
		opt.Remote = func(app drift.Object, rev Revision) ([]drift.Object, error) {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %w", render.ErrStopped, context.Cause(ctx))
			}
			return remote(app, rev)
		}
	}
	var wg sync.WaitGroup
	work := make(chan *predictJob)
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				if ctx.Err() != nil {
					j.err = fmt.Errorf("%w: %w", render.ErrStopped, context.Cause(ctx))
					continue
				}
				if j.remote {
					j.headPs, j.err = predictRemote(*j.a, head, opt, rr, false)
					if j.err == nil && j.was != nil && base.Commit != "" {
						j.basePs, j.baseErr = predictRemote(*j.was, base, opt, rr, false)
					}
					continue
				}
				j.headPs, j.err = predictAt(*j.a, j.srcs, head, opt, rr, true, opt.Suggest)
				if j.err == nil && j.was != nil && len(j.bsrcs) > 0 {
					j.basePs, j.baseErr = predictAt(*j.was, j.bsrcs, base, opt, rr, true, false)
				}
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
}

// gather puts the jobs' outcomes into res in the order they were chosen:
// the changes from base to head (every prediction at head with All), or
// why an application was not predicted.
func (r *predictRun) gather(ctx context.Context, res *Result, jobs []*predictJob) {
	base, head := r.base, r.head
	for _, j := range jobs {
		name := drift.Str(j.a.obj, "metadata", "name")
		if j.err != nil && errors.Is(j.err, render.ErrStopped) && ctx.Err() != nil {
			res.NotPredicted = append(res.NotPredicted, NotPredicted{Application: name, Kind: "Application", File: j.a.manifest,
				Reason: fmt.Sprintf("%v before it was predicted", context.Cause(ctx)), Needs: needsFor(context.Cause(ctx))})
			continue
		}
		if j.err != nil {
			res.NotPredicted = append(res.NotPredicted, NotPredicted{Application: name, Kind: "Application", File: j.a.manifest,
				Reason: fmt.Sprintf("does not render at %s: %v", head.Name, j.err), Needs: needsFor(j.err)})
			continue
		}
		res.Applications = append(res.Applications, name)
		if r.opt.All {
			res.Predictions = append(res.Predictions, j.headPs...)
			continue
		}
		if j.baseErr != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("application %s does not render at %s (%v): every prediction at %s is reported", name, base.Name, j.baseErr, head.Name))
		}
		res.Predictions = append(res.Predictions, Changes(j.basePs, j.headPs)...)
	}
}

// sortResult orders the predictions and the applications not predicted, and
// drops a prediction two definitions of one application render alike.
func sortResult(res *Result) {
	sort.SliceStable(res.Predictions, func(i, j int) bool { return less(res.Predictions[i], res.Predictions[j]) })
	// two definitions of one application may render one resource alike
	res.Predictions = slices.CompactFunc(res.Predictions, func(a, b Prediction) bool {
		return a.Key() == b.Key() && a.File == b.File && a.Line == b.Line
	})
	sort.SliceStable(res.NotPredicted, func(i, j int) bool {
		a, b := res.NotPredicted[i], res.NotPredicted[j]
		if a.Application != b.Application {
			return a.Application < b.Application
		}
		return a.Kind < b.Kind
	})
}

// BudgetError is the cause a context given to Run is done with when a time
// budget of predictions ran out (context.WithTimeoutCause): which budget,
// how large, and the setting that raises it.
type BudgetError struct {
	// Of is what the budget is of: "per pull request", "per cycle", "of this run".
	Of string
	// Budget is its size.
	Budget time.Duration
	// Setting raises it: a policy key or a flag.
	Setting string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the render budget %s (%s, set by %s) ran out", e.Of, e.Budget, e.Setting)
}

// notLocal is an application not all of whose sources are in the
// repository: Argo CD renders a chart from a Helm or OCI repository or
// another repository's source (a *render.NotLocalError); a path without
// manifests it cannot render either.
func notLocal(a *application, name string, missing []error) NotPredicted {
	n := NotPredicted{Application: name, Kind: "Application", File: a.manifest}
	if len(drift.Sources(a.obj)) == 0 {
		n.Reason = "no source Argo CD can read (spec.source or spec.sources)"
		return n
	}
	var why []string
	for _, e := range missing {
		why = append(why, e.Error())
		if n.Needs == "" {
			n.Needs = needsFor(e)
		}
	}
	n.Reason = strings.Join(why, "; ")
	return n
}

// argoRenders says whether Options.Remote renders app at rev: Argo CD
// knows it (known, as argocd-server has it) with the spec rev gives it
// (Argo CD renders the Application it has), and can fetch rev.
func argoRenders(opt Options, rev Revision, known, app drift.Object) bool {
	return opt.Remote != nil && rev.Commit != "" && known != nil &&
		reflect.DeepEqual(drift.Lookup(known, "spec"), drift.Lookup(app, "spec"))
}

// touchedFile says whether a file is among the changed ones (sorted).
func touchedFile(f string, changed []string) bool {
	i := sort.SearchStrings(changed, f)
	return i < len(changed) && changed[i] == f
}

// needsArgoCD is what a source predict does not read needs.
const needsArgoCD = "Argo CD at hand (--argocd-server), which renders what predict does not read: charts from Helm or OCI repositories, other repositories, plugins"

// needsFor says what would let an application that does not render be
// predicted: Argo CD's own render where the CLI reads no network, a
// larger budget where a limit stopped it.
func needsFor(err error) string {
	var remote *render.RemoteError
	var notLocal *render.NotLocalError
	var limit *render.LimitError
	var unread *render.UnreadError
	var budget *BudgetError
	var fetchErr *ChartFetchError
	switch {
	case errors.As(err, &fetchErr) && errors.Is(err, ErrNotNamedByBase):
		return "the chart repository named by the base branch first (merge that alone), or Argo CD at hand"
	case errors.As(err, &fetchErr):
		return "the chart repository reachable from here (its URL, network, credentials: --helm-repository-config, --helm-registry-config), or Argo CD at hand"
	case errors.As(err, &notLocal) && notLocal.NotFetched != "":
		return "the chart fetched (driftfix predict without --offline), or Argo CD at hand (--argocd-server)"
	case errors.As(err, &budget):
		return "a larger render budget (" + budget.Setting + ")"
	case errors.Is(err, context.Canceled):
		return ""

	case errors.As(err, &unread) && unread.Raise != "":
		return "a larger read budget (" + unread.Raise + ")"
	case errors.As(err, &remote), errors.As(err, &notLocal):
		return needsArgoCD
	case errors.As(err, &limit):
		return "a larger render budget"
	}
	return ""
}

// predictAt renders one application at a revision and predicts.
func predictAt(a application, srcs []drift.Source, rev Revision, opt Options, rr *renderer, twice, suggest bool) ([]Prediction, error) {
	files := rr.files(rev)
	in := Input{Application: a.obj, Cluster: opt.Cluster, Repo: rev.Files, Manifest: a.manifest}

	// argocd-cm, for the options Argo CD builds a kustomization with.
	settings := opt.Cluster
	if opt.ClusterFor != nil {
		settings = rr.clusterFor(opt, &drift.Snapshot{Application: a.obj})
	}
	var again []drift.Object
	varies := false
	for _, src := range srcs {
		objs, err := rr.render(rev, a.obj, src, opt)
		if err != nil {
			return nil, err
		}
		in.Targets = append(in.Targets, objs...)
		if twice && mayVary(src, rev.Files) {
			more, err := renderSourceIn(a.obj, src, files, rev, settings, opt)
			if err != nil {
				return nil, err
			}
			again, varies = append(again, more...), true
		} else {
			again = append(again, objs...)
		}
	}
	if varies {
		in.Renders = [][]drift.Object{again}
	}
	if opt.ClusterFor != nil {
		in.Cluster = rr.clusterFor(opt, &drift.Snapshot{Application: a.obj, Resources: targetsOnly(in.Targets)})
	}
	if crds := rr.siblingCRDsFor(rev, a.obj, in.Targets, in.Cluster, opt); len(crds) > 0 {
		in.Cluster = append(append([]drift.Object(nil), in.Cluster...), crds...)
	}
	return predict(in, suggest)
}

// predictRemote predicts one application from Argo CD's own render of it at
// a revision (Options.Remote).
func predictRemote(a application, rev Revision, opt Options, rr *renderer, suggest bool) ([]Prediction, error) {
	objs, err := rr.remote(opt, a.obj, rev)
	if err != nil {
		return nil, fmt.Errorf("Argo CD's render at %s: %w", rev.Name, err)
	}
	in := Input{Application: a.obj, Cluster: opt.Cluster, Repo: rev.Files, Manifest: a.manifest, Targets: objs}
	if opt.ClusterFor != nil {
		in.Cluster = rr.clusterFor(opt, &drift.Snapshot{Application: a.obj, Resources: targetsOnly(objs)})
	}
	return predict(in, suggest)
}

// targetsOnly are the render's objects as a snapshot's resources without a
// live state: what a cluster read selects its objects by.
func targetsOnly(objs []drift.Object) []drift.Resource {
	out := make([]drift.Resource, 0, len(objs))
	for _, o := range objs {
		out = append(out, drift.Resource{Target: o})
	}
	return out
}

// withKnown adds the known Applications the repository has no manifest of
// (by name), with no manifest file.
func withKnown(apps []application, known []drift.Object) []application {
	for _, k := range known {
		if drift.Str(k, "metadata", "name") == "" || findNamed(apps, k) != nil {
			continue
		}
		obj, _ := drift.NormalizeNumbers(drift.DeepCopy(k)).(map[string]any)
		if obj == nil {
			continue
		}
		delete(obj, "status")
		apps = append(apps, application{obj: obj})
	}
	return apps
}

// touches says whether a changed file is in one of the sources, is one of a
// chart's value files outside it, or is read by a kustomization (a base or
// component outside the source path) at base or head.
func touches(app drift.Object, srcs []drift.Source, changed []string, rr *renderer, base, head Revision, repos []string) bool {
	for _, src := range srcs {
		if remoteChart(src) {
			// Its files are the fetched chart's: only the Application
			// (its version, its options) and its $ref value files touch it.
			if readsRef(drift.Object{"spec": map[string]any{"sources": []any{src.Spec}}}, changed) {
				return true
			}
			continue
		}
		var reads []map[string]bool
		var dirs []string
		for _, rev := range []Revision{base, head} {
			if kustomization(src.Path, rev.Files) {
				reads = append(reads, rr.reads(rev, src.Path))
			}
			for _, r := range sourceReads(app, src, rev.Files, repos) {
				if d, ok := strings.CutSuffix(r, "/"); ok {
					dirs = append(dirs, d)
				} else {
					reads = append(reads, map[string]bool{r: true})
				}
			}
		}
		for _, f := range changed {
			if inDir(f, src.Path) {
				return true
			}
			for _, r := range reads {
				if r[f] {
					return true
				}
			}
			for _, d := range dirs {
				if inDir(f, d) {
					return true
				}
			}
			for _, vf := range src.ValueFiles {
				if valueFilePath(src.Path, vf) == f {
					return true
				}
			}
		}
	}
	return false
}

// readsRef says whether a changed file is a "$ref/..." value file of one
// of the application's sources.
func readsRef(app drift.Object, changed []string) bool {
	for _, src := range drift.Sources(app) {
		for _, vf := range src.ValueFiles {
			if strings.HasPrefix(vf, "$") && touchedFile(valueFilePath("", vf), changed) {
				return true
			}
		}
	}
	return false
}

// valueFilePath is a Helm value file's path in the repository: relative to
// the chart, or, as "$ref/path", to the root of the repository the ref
// source names (taken as this one; a ref to another repository is not
// rendered).
func valueFilePath(chart, vf string) string {
	if strings.HasPrefix(vf, "$") {
		if _, rest, ok := strings.Cut(vf, "/"); ok {
			return drift.CleanSourcePath(rest)
		}
	}
	return drift.CleanSourcePath(path.Join(chart, vf))
}

func changedFiles(base, head map[string]string) []string {
	var out []string
	for f, b := range base {
		if h, ok := head[f]; !ok || h != b {
			out = append(out, f)
		}
	}
	for f := range head {
		if _, ok := base[f]; !ok {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

func isApplication(m map[string]any) bool {
	g, _ := drift.SplitAPIVersion(drift.Str(m, "apiVersion"))
	return drift.Str(m, "kind") == "Application" && g == "argoproj.io"
}

// findApplications returns the Applications of the revision (see
// discover); with opt.App (--app), those of one manifest file (and what its
// Applications and ApplicationSets produce) or one made for a source
// directory.
func findApplications(rev Revision, opt Options, rr *renderer) (*discovery, error) {
	only := strings.Trim(path.Clean("/"+opt.App), "/")
	if only == "" {
		return discover(rev, opt, rr), nil
	}
	if c, ok := rev.Files[only]; ok {
		if len(argoObjects(c)) == 0 {
			return nil, fmt.Errorf("--app %s: the file holds no Argo CD Application or ApplicationSet (kind Application or ApplicationSet, apiVersion argoproj.io/...)", only)
		}
		d := discover(rev, opt, rr)
		d.only(only)
		return d, nil
	}
	if !hasFiles(rev.Files, only) {
		return nil, fmt.Errorf("--app %s: no such file or directory with manifests in %s", only, rev.Name)
	}
	return &discovery{apps: []application{{obj: parentApp(only)}}}, nil
}

// applicationsIn reads the Applications of one file; a file that is not
// YAML holds none (a template, a values file).
func applicationsIn(file, content string) []application {
	docs, err := yamledit.Documents([]byte(content))
	if err != nil {
		return nil
	}
	var out []application
	for _, d := range docs {
		m, _ := d.(map[string]any)
		if m == nil || !isApplication(m) || drift.Str(m, "metadata", "name") == "" {
			continue
		}
		out = append(out, application{obj: drift.NormalizeNumbers(m).(map[string]any), manifest: file})
	}
	return out
}

func findNamed(apps []application, obj drift.Object) *application {
	return findDefinition(apps, application{obj: obj})
}

// findDefinition is the application of apps that is a's definition: of its
// name and manifest, else of its name.
func findDefinition(apps []application, a application) *application {
	var named *application
	for i := range apps {
		if drift.Str(apps[i].obj, "metadata", "name") != drift.Str(a.obj, "metadata", "name") {
			continue
		}
		if a.manifest != "" && apps[i].manifest == a.manifest {
			return &apps[i]
		}
		if named == nil {
			named = &apps[i]
		}
	}
	return named
}

// SameRepository says whether a repoURL names one of the repositories, in
// whatever form (https or ssh, with or without .git, user or case).
func SameRepository(url string, repos ...string) bool {
	u := repositoryKey(url)
	for _, r := range repos {
		if repositoryKey(r) == u {
			return true
		}
	}
	return false
}

// repositoryKey is a repository URL as host/path, lower case, without scheme,
// user, port-less ssh's colon or .git.
func repositoryKey(url string) string {
	u := strings.ToLower(strings.TrimSpace(url))
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	} else if at := strings.Index(u, "@"); at >= 0 && strings.Contains(u[at:], ":") {
		u = strings.Replace(u[at+1:], ":", "/", 1) // git@host:owner/name
	}
	if at := strings.LastIndex(u, "@"); at >= 0 && at < strings.Index(u+"/", "/") {
		u = u[at+1:]
	}
	u = strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
	return u
}
