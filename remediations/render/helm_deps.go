package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/ignore"
)

// loadDirFiles are the files of the chart directory dir as `helm template`
// loads a directory: its .helmignore (and Helm's default rules) applied,
// a byte-order mark trimmed, names relative to dir.
func loadDirFiles(files map[string][]byte, dir string) ([]*loader.BufferedFile, error) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	rules := ignore.Empty()
	if data, ok := files[prefix+ignore.HelmIgnore]; ok {
		r, err := ignore.Parse(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("read %s%s: %w", prefix, ignore.HelmIgnore, err)
		}
		rules = r
	}
	rules.AddDefaults()
	var out []*loader.BufferedFile
	for name, data := range files {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		rel := strings.TrimPrefix(name, prefix)
		if rel == "" || ignored(rules, rel) {
			continue
		}
		out = append(out, &loader.BufferedFile{Name: rel, Data: bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ignored says whether a .helmignore skips the file rel, or a directory it
// is in (a skipped directory is not walked).
func ignored(rules *ignore.Rules, rel string) bool {
	segs := strings.Split(rel, "/")
	for i := 1; i < len(segs); i++ {
		if rules.Ignore(strings.Join(segs[:i], "/"), fileInfo{name: segs[i-1], dir: true}) {
			return true
		}
	}
	return rules.Ignore(rel, fileInfo{name: segs[len(segs)-1]})
}

// fileInfo is what .helmignore rules read of a file: its name and whether
// it is a directory.
type fileInfo struct {
	name string
	dir  bool
}

func (f fileInfo) Name() string { return f.name }
func (f fileInfo) Size() int64  { return 0 }
func (f fileInfo) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (f fileInfo) ModTime() time.Time { return time.Time{} }
func (f fileInfo) IsDir() bool        { return f.dir }
func (f fileInfo) Sys() any           { return nil }

// loadChart loads the chart under dir as Argo CD's repo-server has `helm
// template` load it. When the chart lists a dependency that charts/ lacks
// (helm template's own check, of the chart's direct dependencies by name),
// Argo CD runs `helm dependency build` and templates again; that build is
// done here as far as it needs no network: a file:// dependency is loaded
// from its directory in the repository (which it may not leave), charts/
// archives of other dependencies are dropped as the build drops them, and a
// dependency from a chart repository or an OCI registry is a *RemoteError.
// Versions of dependencies are checked as helm checks them (see
// buildDependencies).
func loadChart(files map[string][]byte, dir string) (*chart.Chart, error) {
	return loadChartWith(files, dir, nil)
}

// loadChartWith is loadChart where the caller fetched the remote
// dependencies the build downloads (HelmOptions.Dependencies, by
// DependencyKey): the build adds each archive as it adds a download.
func loadChartWith(files map[string][]byte, dir string, fetched map[string][]byte) (*chart.Chart, error) {
	buf, err := loadDirFiles(files, dir)
	if err != nil {
		return nil, err
	}
	c, err := loadFiles(buf, dir)
	if err != nil {
		return nil, err
	}
	missing := missingDependencies(c)
	if len(missing) == 0 {
		return c, nil
	}
	return buildDependencies(files, dir, buf, c, missing, fetched)
}

func loadFiles(buf []*loader.BufferedFile, dir string) (*chart.Chart, error) {
	c, err := loader.LoadFiles(buf)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	return c, nil
}

// missingDependencies are the chart's dependencies (by name) that no chart
// under charts/ is, as `helm template` checks before it renders.
func missingDependencies(c *chart.Chart) []*chart.Dependency {
	have := map[string]bool{}
	for _, d := range c.Dependencies() {
		have[d.Name()] = true
	}
	var out []*chart.Dependency
	for _, d := range c.Metadata.Dependencies {
		if d != nil && !have[d.Name] {
			out = append(out, d)
		}
	}
	return out
}

// buildDependencies is `helm dependency build` of the chart under dir,
// without a network, then the chart loaded again (see loadChart). Without
// a Chart.lock helm resolves Chart.yaml's dependencies first: each needs a
// valid version constraint, one without a repository needs charts/<name>,
// a file:// one a chart directory whose version meets the constraint. With
// a Chart.lock, the lock must be Chart.yaml's (its digest) and each file://
// dependency has the version it locks. A dependency from a chart
// repository or an OCI registry, which the build would download, is a
// *RemoteError.
func buildDependencies(files map[string][]byte, dir string, buf []*loader.BufferedFile, c *chart.Chart, missing []*chart.Dependency, fetched map[string][]byte) (*chart.Chart, error) {
	b := &depBuild{files: files, dir: dir, c: c, missing: missing, fetched: fetched, chartYAML: path.Join(dir, "Chart.yaml")}
	localDir, err := b.localDirs()
	if err != nil {
		return nil, err
	}
	deps, err := b.resolve(localDir)
	if err != nil {
		return nil, err
	}
	if err := b.allFetched(deps); err != nil {
		return nil, err
	}
	built, local, err := b.build(deps, localDir)
	if err != nil {
		return nil, err
	}
	return b.reload(buf, built, local)
}

// depBuild is one `helm dependency build`: the repository's files, the
// chart's directory and chart, the dependencies charts/ lacks, and the
// archives fetched for it.
type depBuild struct {
	files     map[string][]byte
	dir       string
	c         *chart.Chart
	missing   []*chart.Dependency
	fetched   map[string][]byte
	chartYAML string
}

// fail is the build's error, naming the chart and what it was for.
func (b *depBuild) fail(format string, args ...any) error {
	return fmt.Errorf("%s: helm dependency build (for the missing %s): %s", b.chartYAML, names(b.missing), fmt.Sprintf(format, args...))
}

// exists says whether p is a file or directory of the repository.
func (b *depBuild) exists(p string) bool {
	if _, ok := b.files[p]; ok {
		return true
	}
	for f := range b.files {
		if strings.HasPrefix(f, p+"/") {
			return true
		}
	}
	return false
}

// localDirs finds each file:// dependency's directory, which must exist
// inside the repository, by dependency name.
func (b *depBuild) localDirs() (map[string]string, error) {
	localDir := map[string]string{}
	for _, d := range b.c.Metadata.Dependencies {
		if d == nil || !strings.HasPrefix(d.Repository, "file://") {
			continue
		}
		target := strings.TrimPrefix(d.Repository, "file://")
		depDir, ok := resolveInRepo(b.dir, target)
		if strings.HasPrefix(target, "/") || !ok {
			return nil, b.fail("dependency %s: %s is outside the repository", d.Name, d.Repository)
		}
		if !b.exists(depDir) {
			return nil, b.fail("directory %s (%s) not found", depDir, d.Repository)
		}
		localDir[d.Name] = depDir
	}
	return localDir, nil
}

// resolve gives the dependencies the build takes: the lock's, once its
// digest shows it is Chart.yaml's, or else Chart.yaml's, each with a valid
// constraint its local chart meets.
func (b *depBuild) resolve(localDir map[string]string) ([]*chart.Dependency, error) {
	c := b.c
	deps := c.Metadata.Dependencies
	if c.Lock != nil {
		if c.Metadata.APIVersion != chart.APIVersionV1 {
			data, err := json.Marshal([2][]*chart.Dependency{c.Metadata.Dependencies, c.Lock.Dependencies})
			sum := sha256.Sum256(data)
			if err != nil || "sha256:"+hex.EncodeToString(sum[:]) != c.Lock.Digest {
				return nil, b.fail("the lock file (Chart.lock) is out of sync with the dependencies file (Chart.yaml); update it with `helm dependency update`")
			}
		}
		return c.Lock.Dependencies, nil
	}
	var unmet []string
	for _, d := range deps {
		if d == nil {
			continue
		}
		if d.Version == "" {
			return nil, b.fail("dependency %q has an invalid version/constraint format: improper constraint: \"\"", d.Name)
		}
		switch {
		case d.Repository == "":
			if !b.exists(path.Join(b.dir, "charts", d.Name)) {
				return nil, b.fail("dependency %s has no repository and directory %s is not in the repository", d.Name, path.Join(b.dir, "charts", d.Name))
			}
		case strings.HasPrefix(d.Repository, "file://"):
			v, err := chartVersion(b.files, localDir[d.Name])
			if err != nil {
				return nil, err
			}
			if !chartutil.IsCompatibleRange(d.Version, v) {
				unmet = append(unmet, fmt.Sprintf("%q (repository %q, version %q; %s has %s)", d.Name, d.Repository, d.Version, localDir[d.Name], v))
			}
		}
	}
	if len(unmet) > 0 {
		return nil, b.fail("can't get a valid version for %d subchart(s): %s", len(unmet), strings.Join(unmet, ", "))
	}
	return deps, nil
}

// allFetched checks that every dependency the build would download, of
// the missing ones and of deps, was fetched: one that was not is a
// *RemoteError.
func (b *depBuild) allFetched(deps []*chart.Dependency) error {
	for _, d := range append(append([]*chart.Dependency{}, b.missing...), deps...) {
		if d == nil || !remoteDependency(d) {
			continue
		}
		if _, ok := fetchedFor(b.fetched, deps, d); ok {
			continue
		}
		why := "dependency " + d.Name + " is not vendored under charts/"
		if !isIn(b.missing, d.Name) {
			why = "`helm dependency build` (for the missing " + names(b.missing) + ") fetches dependency " + d.Name
		}
		return &RemoteError{File: b.chartYAML, URL: d.Repository,
			Why: why + "; it was not fetched (the CLI fetches it unless --offline; Argo CD renders the chart where it is at hand)"}
	}
	return nil
}

// build loads each dependency as the build would: a remote one from its
// fetched archive, a file:// one from its directory, each meeting its
// constraint. One without a repository stays in charts/, checked only; it
// is named in local.
func (b *depBuild) build(deps []*chart.Dependency, localDir map[string]string) (built []*chart.Chart, local map[string]bool, err error) {
	local = map[string]bool{}
	for _, d := range deps {
		if d == nil {
			continue
		}
		if remoteDependency(d) {
			dc, err := b.fromArchive(d, deps)
			if err != nil {
				return nil, nil, err
			}
			built = append(built, dc)
			continue
		}
		if d.Repository == "" {
			local[d.Name] = true
			if err := b.checkVendored(d); err != nil {
				return nil, nil, err
			}
			continue
		}
		dc, err := b.fromDirectory(d, localDir)
		if err != nil {
			return nil, nil, err
		}
		built = append(built, dc)
	}
	return built, local, nil
}

// fromArchive is what the build downloads for remote dependency d: the
// fetched archive, of a version that meets the constraint.
func (b *depBuild) fromArchive(d *chart.Dependency, deps []*chart.Dependency) (*chart.Chart, error) {
	a, _ := fetchedFor(b.fetched, deps, d)
	dc, err := loader.LoadArchive(bytes.NewReader(a))
	if err != nil {
		return nil, b.fail("read the fetched archive of dependency %s (%s): %v", d.Name, d.Repository, err)
	}
	if dc.Metadata == nil || dc.Metadata.Name != d.Name {
		return nil, b.fail("the fetched archive of dependency %s (%s) is chart %q", d.Name, d.Repository, dc.Name())
	}
	if !chartutil.IsCompatibleRange(d.Version, dc.Metadata.Version) {
		return nil, b.fail("the fetched dependency %s at version %s does not satisfy the constraint %s", d.Name, dc.Metadata.Version, d.Version)
	}
	return dc, nil
}

// checkVendored checks, as the build does, that the directory
// charts/<name> of dependency d without a repository meets its version.
func (b *depBuild) checkVendored(d *chart.Dependency) error {
	sub := path.Join(b.dir, "charts", d.Name)
	v, err := chartVersion(b.files, sub)
	if err != nil {
		return b.fail("unable to load chart %s: %v", sub, err)
	}
	if d.Version == "" {
		return b.fail("dependency %s has an invalid version/constraint format: improper constraint: \"\"", d.Name)
	}
	if !chartutil.IsCompatibleRange(d.Version, v) {
		return b.fail("dependency %s at version %s does not satisfy the constraint %s", d.Name, v, d.Version)
	}
	return nil
}

// fromDirectory loads file:// dependency d from its directory, which must
// hold a chart meeting the constraint.
func (b *depBuild) fromDirectory(d *chart.Dependency, localDir map[string]string) (*chart.Chart, error) {
	depDir, ok := localDir[d.Name]
	if !ok { // a lock's file:// dependency Chart.yaml does not list
		target := strings.TrimPrefix(d.Repository, "file://")
		if depDir, ok = resolveInRepo(b.dir, target); !ok || strings.HasPrefix(target, "/") || !b.exists(depDir) {
			return nil, b.fail("directory %s not found", target)
		}
	}
	sub, err := loadDirFiles(b.files, depDir)
	if err != nil {
		return nil, err
	}
	dc, err := loadFiles(sub, depDir)
	if err != nil {
		return nil, err
	}
	if dc.Metadata == nil || !chartutil.IsCompatibleRange(d.Version, dc.Metadata.Version) {
		return nil, b.fail("can't get a valid version for dependency %s (%s)", d.Name, depDir)
	}
	return dc, nil
}

// reload loads the chart again from buf as the build leaves it: the
// archives of charts/ replaced by what it built, except an archive of a
// dependency without a repository (named in local), which stays, as do
// directories. Every dependency must then be there.
func (b *depBuild) reload(buf []*loader.BufferedFile, built []*chart.Chart, local map[string]bool) (*chart.Chart, error) {
	var kept []*loader.BufferedFile
	var archives []*loader.BufferedFile
	for _, f := range buf {
		if rest, ok := strings.CutPrefix(f.Name, "charts/"); ok && !strings.Contains(rest, "/") && strings.HasSuffix(rest, ".tgz") {
			archives = append(archives, f)
			continue
		}
		kept = append(kept, f)
	}
	nc, err := loadFiles(kept, b.dir)
	if err != nil {
		return nil, err
	}
	for _, a := range archives {
		ac, err := loader.LoadArchive(bytes.NewReader(a.Data))
		if err != nil || !local[ac.Name()] {
			continue // not a chart, or not one the build keeps
		}
		nc.AddDependency(ac)
	}
	for _, dc := range built {
		nc.AddDependency(dc)
	}
	if still := missingDependencies(nc); len(still) > 0 {
		return nil, fmt.Errorf("%s: found in Chart.yaml, but missing in charts/ directory: %s", b.chartYAML, names(still))
	}
	return nc, nil
}

// chartVersion is the version of the chart in the repository directory dir.
func chartVersion(files map[string][]byte, dir string) (string, error) {
	data, ok := files[path.Join(dir, "Chart.yaml")]
	if !ok {
		return "", fmt.Errorf("load chart %s: Chart.yaml file is missing", dir)
	}
	var m chartDeps
	if err := yaml.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("load chart %s: %w", dir, err)
	}
	return m.Version, nil
}

func isIn(deps []*chart.Dependency, name string) bool {
	for _, d := range deps {
		if d.Name == name {
			return true
		}
	}
	return false
}

func names(deps []*chart.Dependency) string {
	var n []string
	for _, d := range deps {
		n = append(n, d.Name)
	}
	return strings.Join(n, ", ")
}
