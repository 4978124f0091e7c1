package render

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// ChartRef names a chart in a Helm chart repository or an OCI registry, as
// an Application's source or a chart's dependency names it. Render reads no
// network: the caller fetches the chart (the CLI's parent process, never a
// render process) and hands its archive in.
type ChartRef struct {
	// Repository is the repoURL or the dependency's repository: an
	// http(s):// chart repository, an oci:// reference, or an OCI
	// registry path without a scheme (Argo CD's form for a Helm OCI
	// source).
	Repository string
	// Chart is the chart's name; "" for an oci:// source whose repoURL is
	// the chart itself.
	Chart string
	// Version is the targetRevision or the dependency's version: an exact
	// version or a semver range ("1.2.*", ">=1.0 <2", "*").
	Version string
}

// String names the chart as a person reads it: "podinfo 6.* from https://…".
func (r ChartRef) String() string {
	name := r.Chart
	if name == "" {
		name = r.Repository
	}
	v := r.Version
	if v == "" {
		v = `""`
	}
	if r.Chart == "" {
		return name + " " + v
	}
	return name + " " + v + " from " + r.Repository
}

// DependencyKey is the key of HelmOptions.Dependencies for a dependency as
// the chart lists it (Chart.lock's entry when there is a lock, else
// Chart.yaml's): its repository, name and version as written.
func DependencyKey(d ChartRef) string {
	return strings.TrimSuffix(d.Repository, "/") + "\x00" + d.Chart + "\x00" + d.Version
}

// RemoteDependencies are the dependencies of the chart under dir that
// `helm dependency build` would download from a chart repository or an OCI
// registry: none when charts/ already has every dependency (`helm template`
// renders then), else each dependency with a remote repository, at the
// version Chart.lock locks (Chart.yaml's constraint without a lock). A
// dependency named by a repository alias ("@name", "alias:name") is among
// them as written; the caller says it cannot fetch it.
func RemoteDependencies(files map[string][]byte, dir string) ([]ChartRef, error) {
	dir = strings.Trim(dir, "/")
	if _, ok := files[path.Join(dir, "Chart.yaml")]; !ok {
		return nil, nil
	}
	buf, err := loadDirFiles(files, dir)
	if err != nil {
		return nil, err
	}
	c, err := loadFiles(buf, dir)
	if err != nil {
		return nil, err
	}
	if len(missingDependencies(c)) == 0 {
		return nil, nil
	}
	deps := c.Metadata.Dependencies
	if c.Lock != nil {
		deps = c.Lock.Dependencies
	}
	var out []ChartRef
	seen := map[string]bool{}
	for _, d := range deps {
		if d == nil || !remoteDependency(d) {
			continue
		}
		ref := ChartRef{Repository: d.Repository, Chart: d.Name, Version: d.Version}
		if k := DependencyKey(ref); !seen[k] {
			seen[k] = true
			out = append(out, ref)
		}
	}
	return out, nil
}

// remoteDependency says whether `helm dependency build` downloads d: it
// names a repository that is not a file:// directory.
func remoteDependency(d *chart.Dependency) bool {
	return d.Repository != "" && !strings.HasPrefix(d.Repository, "file://")
}

// fetchedFor is the fetched archive (HelmOptions.Dependencies) of the
// remote dependency d of the build list deps: the entry of deps of d's
// name and repository (Chart.yaml's d may carry a constraint where the
// lock has the version).
func fetchedFor(fetched map[string][]byte, deps []*chart.Dependency, d *chart.Dependency) ([]byte, bool) {
	if a, ok := fetched[DependencyKey(ChartRef{Repository: d.Repository, Chart: d.Name, Version: d.Version})]; ok {
		return a, true
	}
	for _, e := range deps {
		if e == nil || e.Name != d.Name || strings.TrimSuffix(e.Repository, "/") != strings.TrimSuffix(d.Repository, "/") {
			continue
		}
		if a, ok := fetched[DependencyKey(ChartRef{Repository: e.Repository, Chart: e.Name, Version: e.Version})]; ok {
			return a, true
		}
	}
	return nil, false
}

// ChartArchiveFiles are the files of a chart archive (a packaged .tgz, as
// a chart repository or an OCI registry serves it) as a repository's files
// under dir: the archive's top directory dropped, as `helm pull --untar`
// and Argo CD's repo-server unpack it. The archive is read within
// lim.MaxChartBytes unpacked (and Helm's own bounds on one file); over it
// is a *LimitError. Nothing in it is run here: templates render in a
// render process.
func ChartArchiveFiles(archive []byte, dir string, lim Limits) (map[string][]byte, error) {
	lim = lim.withDefaults()
	what := "chart archive for " + dir
	if over(int64(len(archive)), lim.MaxChartBytes) {
		return nil, &LimitError{Limit: "MaxChartBytes", What: what, Got: humanBytes(float64(len(archive))), Max: humanBytes(float64(lim.MaxChartBytes))}
	}
	buf, err := loader.LoadArchiveFiles(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	out := make(map[string][]byte, len(buf))
	var total int64
	for _, f := range buf {
		total += int64(len(f.Data))
		if over(total, lim.MaxChartBytes) {
			return nil, &LimitError{Limit: "MaxChartBytes", What: what + " unpacked", Got: "more than " + humanBytes(float64(lim.MaxChartBytes)), Max: humanBytes(float64(lim.MaxChartBytes))}
		}
		if over(len(out)+1, lim.MaxFiles) {
			return nil, &LimitError{Limit: "MaxFiles", What: what, Got: fmt.Sprintf("more than %d files", lim.MaxFiles), Max: fmt.Sprint(lim.MaxFiles)}
		}
		out[path.Join(dir, f.Name)] = f.Data
	}
	if _, ok := out[path.Join(dir, "Chart.yaml")]; !ok {
		return nil, fmt.Errorf("read %s: the archive has no Chart.yaml", what)
	}
	return out, nil
}

// RepositoryIdentity is a chart repository's URL as compared when a fetch
// and a base branch name it: without a trailing slash, its scheme and host
// in lower case.
func RepositoryIdentity(u string) string {
	u = strings.TrimSuffix(strings.TrimSpace(u), "/")
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		scheme, rest = "", u
	}
	host, p, _ := strings.Cut(rest, "/")
	out := strings.ToLower(host)
	if p != "" {
		out += "/" + p
	}
	if scheme != "" {
		out = strings.ToLower(scheme) + "://" + out
	}
	return out
}
