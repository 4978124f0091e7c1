package predict

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
)

// generators are the template functions whose output can change between two
// renders of the same inputs (sprig's random, time and crypto functions,
// Helm's lookup).
var generators = regexp.MustCompile(`\b(rand[A-Za-z]*|uuidv4|now|date[A-Za-z]*|gen[A-Z][A-Za-z]*|shuffle|lookup)\b`)

// mayVary says whether a Helm source has a template that calls a generator:
// only such a chart is rendered a second time.
func mayVary(src drift.Source, files map[string]string) bool {
	if !isHelm(src, files) {
		return false
	}
	for f, c := range files {
		if inDir(f, src.Path) && (strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".tpl") || strings.HasSuffix(f, ".yml")) && strings.Contains(f, "/templates/") && generators.MatchString(c) {
			return true
		}
	}
	return false
}

func isHelm(src drift.Source, files map[string]string) bool {
	_, chart := files[path.Join(src.Path, "Chart.yaml")]
	return src.Helm || chart
}

func kustomization(dir string, files map[string]string) bool {
	for _, k := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, ok := files[path.Join(dir, k)]; ok {
			return true
		}
	}
	return false
}

// renderSource renders one source as Argo CD's repo-server does, without
// argocd-cm (see renderSourceWith).
func renderSource(app drift.Object, src drift.Source, files map[string][]byte, text map[string]string, lim render.Limits) ([]drift.Object, error) {
	return renderSourceWith(app, src, files, text, nil, lim)
}

// renderSourceWith renders one source as Argo CD's repo-server does: a Helm
// chart, a kustomization (with the build options of argocd-cm among the
// cluster objects), or a plain directory of manifests.
func renderSourceWith(app drift.Object, src drift.Source, files map[string][]byte, text map[string]string, cluster []drift.Object, lim render.Limits) ([]drift.Object, error) {
	switch {
	case isHelm(src, text):
		opts := render.HelmOptionsFor(app, src)
		opts.Limits = lim
		return render.Helm(files, opts)
	case kustomization(src.Path, text):
		build, err := diff.KustomizeBuildOptions(cluster, app, src.Path)
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %w", src.Path, err)
		}
		return render.KustomizeWithOptions(files, src.Path, render.KustomizeOptions{BuildOptions: build, Limits: lim})
	}
	return directory(app, src, text)
}

// localSources are the application's sources that are in this repository:
// a path with files under it. The others are noted.
func localSources(app drift.Object, files map[string]string, repos []string) ([]drift.Source, []string) {
	var out []drift.Source
	var notes []string
	for _, src := range drift.Sources(app) {
		switch {
		case len(repos) > 0 && src.RepoURL != "" && !SameRepository(src.RepoURL, repos...):
			notes = append(notes, fmt.Sprintf("source %s is another repository: not rendered", src.RepoURL))
		case src.Chart != "":
			notes = append(notes, fmt.Sprintf("source chart %s from %s is not in this repository: not rendered (predict reads no network)", src.Chart, src.RepoURL))
		case !hasFiles(files, src.Path):
			notes = append(notes, fmt.Sprintf("source path %q (%s) has no manifest in this repository: not rendered", src.Path, src.RepoURL))
		default:
			out = append(out, src)
		}
	}
	return out, notes
}

func hasFiles(files map[string]string, dir string) bool {
	for f := range files {
		if inDir(f, dir) {
			return true
		}
	}
	return false
}

func inDir(f, dir string) bool {
	dir = strings.Trim(dir, "/")
	return dir == "" || dir == "." || strings.HasPrefix(f, dir+"/")
}
