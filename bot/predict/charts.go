package predict

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// FetchCharts fetches a chart from a Helm chart repository or an OCI
// registry: the version it resolved ref.Version to and the chart's archive
// (a packaged .tgz). The caller's process fetches; renders never reach a
// network.
type FetchCharts func(ref render.ChartRef) (version string, archive []byte, err error)

// ChartFetchError is a chart that could not be fetched.
type ChartFetchError struct {
	Ref render.ChartRef
	Err error
}

func (e *ChartFetchError) Error() string {
	where := e.Ref.Repository
	name := e.Ref.Chart
	if name == "" {
		name = e.Ref.Repository
		where = "its registry"
	}
	v := e.Ref.Version
	if v == "" {
		v = "(no version)"
	}
	return fmt.Sprintf("fetching chart %s %s from %s: %v", name, v, where, e.Err)
}

func (e *ChartFetchError) Unwrap() error { return e.Err }

// ErrNotNamedByBase is a chart repository a pull request's head names that
// its base does not (Options.ChartsFromBase): it is not fetched.
var ErrNotNamedByBase = errors.New("the base revision names no such repository: a change's head does not choose what is fetched")

// remoteChart says whether a source is a chart of a Helm chart repository
// or an OCI registry: a chart, or an oci:// repoURL (Argo CD's OCI source).
func remoteChart(src drift.Source) bool {
	return src.Chart != "" || strings.HasPrefix(src.RepoURL, "oci://")
}

// hasRemoteChart says whether one of the application's sources is a chart
// of a chart repository or an OCI registry.
func hasRemoteChart(app drift.Object) bool {
	for _, src := range drift.Sources(app) {
		if remoteChart(src) {
			return true
		}
	}
	return false
}

// notFetched says why charts are not fetched in this run.
func notFetched(opt Options) string {
	if opt.NotFetched != "" {
		return opt.NotFetched
	}
	return "this run does not fetch charts"
}

// chartRef is the chart a remote source names. An oci:// repoURL is the
// artifact itself (Argo CD's OCI source, which its repo-server takes before
// a chart: a chart field beside it is not read).
func chartRef(src drift.Source) render.ChartRef {
	ref := render.ChartRef{Repository: src.RepoURL, Chart: src.Chart, Version: src.TargetRevision}
	if strings.HasPrefix(src.RepoURL, "oci://") {
		ref.Chart = ""
	}
	return ref
}

// fetch fetches one chart through opt.Charts, its error a *ChartFetchError.
func fetch(opt Options, ref render.ChartRef) (string, []byte, error) {
	if opt.Charts == nil {
		return "", nil, &render.NotLocalError{What: "chart " + ref.String(), Repository: ref.Repository, Chart: ref.Chart, Why: "is not in this repository", NotFetched: notFetched(opt)}
	}
	v, a, err := opt.Charts(ref)
	if err != nil {
		return "", nil, &ChartFetchError{Ref: ref, Err: err}
	}
	return v, a, nil
}

// fetchDependencies fetches the remote dependencies of the chart under dir
// that `helm dependency build` downloads (render.RemoteDependencies), by
// render.DependencyKey; none without opt.Charts (the render then names
// the first one as not fetched).
func fetchDependencies(files map[string][]byte, dir string, opt Options) (map[string][]byte, error) {
	deps, err := render.RemoteDependencies(files, dir)
	if err != nil || len(deps) == 0 {
		return nil, nil // the render says what is wrong with the chart
	}
	if opt.Charts == nil {
		d := deps[0]
		return nil, &render.NotLocalError{What: "dependency " + d.Chart + " of " + path.Join(dir, "Chart.yaml"), Repository: d.Repository, Chart: d.Chart,
			Why: "is not vendored under charts/ but in " + d.Repository, NotFetched: notFetched(opt)}
	}
	out := map[string][]byte{}
	for _, d := range deps {
		_, a, err := fetch(opt, d)
		if err != nil {
			return nil, fmt.Errorf("%s: dependency %s: %w", path.Join(dir, "Chart.yaml"), d.Chart, err)
		}
		out[render.DependencyKey(d)] = a
	}
	return out, nil
}

// remoteChartRoot is where a fetched chart's files are put beside the
// repository's for its render: a folder no Git tree has (Git refuses a
// ".git" entry), so that no file of the repository is taken for the
// chart's.
const remoteChartRoot = ".git/driftfix-charts"

// renderRemoteChart renders a chart of a Helm chart repository or an OCI
// registry as Argo CD's repo-server does: the chart fetched at the version
// targetRevision resolves to, unpacked, its missing dependencies built,
// then templated with the source's options; its $ref value files read from
// this repository.
func renderRemoteChart(app drift.Object, src drift.Source, files map[string][]byte, cluster []drift.Object, opt Options) ([]drift.Object, error) {
	ref := chartRef(src)
	version, archive, err := fetch(opt, ref)
	if err != nil {
		return nil, err
	}
	name := ref.Chart
	if name == "" {
		name = path.Base(strings.TrimPrefix(src.RepoURL, "oci://"))
	}
	dir := path.Join(remoteChartRoot, safeSegment(name)+"-"+safeSegment(version))
	chart, err := render.ChartArchiveFiles(archive, dir, opt.Render)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", ref, err)
	}
	all := make(map[string][]byte, len(files)+len(chart))
	for f, c := range files {
		if !strings.HasPrefix(f, remoteChartRoot+"/") {
			all[f] = c
		}
	}
	maps.Copy(all, chart)
	opts := helmOptions(app, src, opt.Repositories)
	// Argo CD's OCI source reads its path within the artifact; a chart
	// repository's chart is the chart itself.
	opts.ChartDir = dir
	if ref.Chart == "" && src.Path != "" {
		opts.ChartDir = path.Join(dir, src.Path)
	}
	if len(opts.APIVersions) == 0 {
		opts.APIVersions = clusterAPIVersions(cluster)
	}
	opts.Limits = opt.Render
	if opts.Dependencies, err = fetchDependencies(all, opts.ChartDir, opt); err != nil {
		return nil, err
	}
	objs, err := render.Helm(all, opts)
	if err != nil {
		return nil, fmt.Errorf("chart %s (version %s): %w", ref, version, err)
	}
	return objs, nil
}

// safeSegment is a name or version as one folder name.
func safeSegment(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, s)
	if s == "" || s == "." || s == ".." {
		return "_"
	}
	return s
}

// chartRepositoriesOf are the chart repositories and registries a
// revision names, found as what it would fetch: its Applications' remote
// sources (a chart's repoURL, an oci:// repoURL) and the dependencies'
// repositories of its charts (Chart.yaml, requirements.yaml, Chart.lock).
func chartRepositoriesOf(apps []application, files map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, a := range apps {
		for _, src := range drift.Sources(a.obj) {
			if remoteChart(src) {
				out[render.RepositoryIdentity(src.RepoURL)] = true
			}
		}
	}
	for f, c := range files {
		switch path.Base(f) {
		case "Chart.yaml", "requirements.yaml", "Chart.lock", "requirements.lock":
		default:
			continue
		}
		docs, err := yamledit.Documents([]byte(c))
		if err != nil || len(docs) == 0 {
			continue
		}
		for _, d := range drift.List(docs[0], "dependencies") {
			if r := drift.Str(d, "repository"); r != "" && !strings.HasPrefix(r, "file://") {
				out[render.RepositoryIdentity(r)] = true
			}
		}
	}
	return out
}

// fromBase restricts opt.Charts to the repositories named (allowed).
func fromBase(charts FetchCharts, base string, named map[string]bool) FetchCharts {
	return func(ref render.ChartRef) (string, []byte, error) {
		if !named[render.RepositoryIdentity(ref.Repository)] {
			return "", nil, fmt.Errorf("%w (%s is not named at %s)", ErrNotNamedByBase, ref.Repository, base)
		}
		return charts(ref)
	}
}
