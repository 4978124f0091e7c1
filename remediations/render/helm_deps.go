package render

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

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
// Chart.lock is read for the versions a file:// dependency must have; its
// digest is not compared with Chart.yaml, which helm does before building.
func loadChart(files map[string][]byte, dir string) (*chart.Chart, error) {
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
	return buildDependencies(files, dir, buf, c, missing)
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
// without a network, then the chart loaded again (see loadChart).
func buildDependencies(files map[string][]byte, dir string, buf []*loader.BufferedFile, c *chart.Chart, missing []*chart.Dependency) (*chart.Chart, error) {
	chartYAML := path.Join(dir, "Chart.yaml")
	// The build fetches every dependency of the lock (or of Chart.yaml when
	// there is no lock), not only the missing ones.
	deps := c.Metadata.Dependencies
	locked := map[string]string{}
	if c.Lock != nil {
		deps = c.Lock.Dependencies
		for _, d := range c.Lock.Dependencies {
			if d != nil {
				locked[d.Name] = d.Version
			}
		}
	}
	for _, d := range append(append([]*chart.Dependency{}, missing...), deps...) {
		if d == nil || d.Repository == "" || strings.HasPrefix(d.Repository, "file://") {
			continue
		}
		why := "dependency " + d.Name + " is not vendored under charts/"
		if !isIn(missing, d.Name) {
			why = "`helm dependency build` (for the missing " + names(missing) + ") fetches dependency " + d.Name
		}
		return nil, &RemoteError{File: chartYAML, URL: d.Repository,
			Why: why + "; dependencies are not fetched by the CLI (Argo CD renders the chart where it is at hand)"}
	}
	var built []*chart.Chart
	local := map[string]bool{}
	for _, d := range deps {
		if d == nil {
			continue
		}
		if d.Repository == "" {
			if isIn(missing, d.Name) {
				return nil, fmt.Errorf("%s: dependency %s has no repository and charts/%s is not in the repository (helm dependency build fails)", chartYAML, d.Name, d.Name)
			}
			local[d.Name] = true
			continue
		}
		target := strings.TrimPrefix(d.Repository, "file://")
		depDir, ok := resolveInRepo(dir, target)
		if strings.HasPrefix(target, "/") || !ok {
			return nil, fmt.Errorf("%s: dependency %s: %s is outside the repository", chartYAML, d.Name, d.Repository)
		}
		if _, ok := files[depDir+"/Chart.yaml"]; !ok {
			return nil, fmt.Errorf("%s: dependency %s: directory %s (%s) has no Chart.yaml in the repository", chartYAML, d.Name, depDir, d.Repository)
		}
		sub, err := loadDirFiles(files, depDir)
		if err != nil {
			return nil, err
		}
		dc, err := loadFiles(sub, depDir)
		if err != nil {
			return nil, err
		}
		want := d.Version
		if v, ok := locked[d.Name]; ok {
			want = v
		}
		if want != "" && !chartutil.IsCompatibleRange(want, dc.Metadata.Version) {
			return nil, fmt.Errorf("%s: can't get a valid version for dependency %s: %s has version %s, not %s", chartYAML, d.Name, depDir, dc.Metadata.Version, want)
		}
		built = append(built, dc)
	}
	// The build replaces the archives of charts/ with what it built; an
	// archive of a dependency without a repository stays, and so do
	// directories.
	var kept []*loader.BufferedFile
	var archives []*loader.BufferedFile
	for _, f := range buf {
		if rest, ok := strings.CutPrefix(f.Name, "charts/"); ok && !strings.Contains(rest, "/") && strings.HasSuffix(rest, ".tgz") {
			archives = append(archives, f)
			continue
		}
		kept = append(kept, f)
	}
	nc, err := loadFiles(kept, dir)
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
	for _, b := range built {
		nc.AddDependency(b)
	}
	if still := missingDependencies(nc); len(still) > 0 {
		return nil, fmt.Errorf("%s: found in Chart.yaml, but missing in charts/ directory: %s", chartYAML, names(still))
	}
	return nc, nil
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
