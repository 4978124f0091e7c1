package predict

import (
	"fmt"
	"path"
	"regexp"
	"sort"
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
// only such a chart is rendered a second time. A chart with a vendored
// archive (charts/*.tgz), whose templates are not read here, is taken as
// one that may vary; so is one whose file:// dependency has such a template.
func mayVary(src drift.Source, files map[string]string) bool {
	if remoteChart(src) {
		return true // its templates are the fetched archive's, not read here
	}
	if !isHelm(src, files) {
		return false
	}
	dirs := []string{src.Path}
	for _, r := range render.HelmReads(files, render.HelmOptions{ChartDir: src.Path}) {
		if d, ok := strings.CutSuffix(r, "/"); ok {
			dirs = append(dirs, d)
		}
	}
	for f, c := range files {
		for _, dir := range dirs {
			if !inDir(f, dir) {
				continue
			}
			if strings.HasSuffix(f, ".tgz") && strings.HasPrefix(strings.TrimPrefix(f, dir+"/"), "charts/") {
				return true
			}
			if (strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".tpl") || strings.HasSuffix(f, ".yml")) && strings.Contains(f, "/templates/") && generators.MatchString(c) {
				return true
			}
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
// cluster objects), or a plain directory of manifests. A ref source of the
// same repoURL as src is this repository (see renderSourceIn).
func renderSourceWith(app drift.Object, src drift.Source, files map[string][]byte, text map[string]string, cluster []drift.Object, lim render.Limits) ([]drift.Object, error) {
	return renderSourceIn(app, src, files, Revision{Files: text}, cluster, Options{Render: lim})
}

// renderSourceIn renders one source at a revision as Argo CD's repo-server
// does, of the type it decides (sourceType), within opt.Render, where the
// repository is also known by opt.Repositories: a ref source whose repoURL
// is one of them, or src's in another form, reads this revision's files (a
// value file of a ref source in another repository is a
// *render.NotLocalError). A file the revision's read budget left out is
// named as such by the render that needs it.
func renderSourceIn(app drift.Object, src drift.Source, files map[string][]byte, rev Revision, cluster []drift.Object, opt Options) ([]drift.Object, error) {
	if remoteChart(src) {
		return renderRemoteChart(app, src, files, cluster, opt)
	}
	typ, err := sourceType(src, rev.Files)
	if err != nil {
		return nil, err
	}
	switch typ {
	case typeHelm:
		opts := helmOptions(app, src, opt.Repositories)
		if len(opts.APIVersions) == 0 {
			// Argo CD passes the destination cluster's APIs; the cluster
			// context's CRDs are those known here (Helm adds its built-ins).
			opts.APIVersions = clusterAPIVersions(cluster)
		}
		opts.Limits = opt.Render
		if opts.Dependencies, err = fetchDependencies(files, opts.ChartDir, opt); err != nil {
			return nil, err
		}
		return render.Helm(files, opts)
	case typeKustomize:
		build, err := diff.KustomizeBuildOptions(cluster, app, src.Path)
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %w", src.Path, err)
		}
		return render.KustomizeWithOptions(files, src.Path, render.KustomizeOptions{BuildOptions: build, Limits: opt.Render, Unread: rev.Unread})
	case typePlugin:
		return nil, &render.NotLocalError{What: "source " + orRoot(src.Path), Repository: src.RepoURL, Why: "a Config Management Plugin renders it, in Argo CD's repo-server"}
	}
	return directoryWith(app, src, files, rev.Files, opt.Render, rev.Unread)
}

// helmOptions are the Helm options of the source, its ref sources taken as
// this repository when their repoURL is src's (in any form) or one of repos.
func helmOptions(app drift.Object, src drift.Source, repos []string) render.HelmOptions {
	opts := render.HelmOptionsFor(app, src)
	for name, ref := range opts.Refs {
		same := ref.Repository == src.RepoURL || (src.RepoURL != "" && SameRepository(ref.Repository, src.RepoURL)) ||
			(len(repos) > 0 && SameRepository(ref.Repository, repos...))
		ref.Local = ref.Chart == "" && same
		opts.Refs[name] = ref
	}
	return opts
}

// clusterAPIVersions are the API versions the cluster context's
// CustomResourceDefinitions serve, as Argo CD passes a cluster's APIs to
// helm template: group/version and group/version/Kind, sorted.
func clusterAPIVersions(cluster []drift.Object) []string {
	seen := map[string]bool{}
	for _, o := range cluster {
		if drift.Str(o, "kind") != "CustomResourceDefinition" {
			continue
		}
		if g, _ := drift.SplitAPIVersion(drift.Str(o, "apiVersion")); g != "apiextensions.k8s.io" {
			continue
		}
		group, kind := drift.Str(o, "spec", "group"), drift.Str(o, "spec", "names", "kind")
		for _, v := range drift.List(o, "spec", "versions") {
			if served, _ := drift.Lookup(v, "served").(bool); !served || drift.Str(v, "name") == "" || group == "" {
				continue
			}
			gv := group + "/" + drift.Str(v, "name")
			seen[gv] = true
			if kind != "" {
				seen[gv+"/"+kind] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sourceReads are the files and directories (ending in "/") outside the
// source's path that its render reads: a Helm source's value files and
// file parameters (a $ref's from this repository included) and its
// file:// dependencies. A change to one of them changes the application.
func sourceReads(app drift.Object, src drift.Source, files map[string]string, repos []string) []string {
	if remoteChart(src) {
		var out []string
		for _, vf := range src.ValueFiles {
			if strings.HasPrefix(vf, "$") {
				out = append(out, valueFilePath("", vf))
			}
		}
		return out
	}
	if !isHelm(src, files) {
		return nil
	}
	return render.HelmReads(files, helmOptions(app, src, repos))
}

// localSources are the application's sources that are in this repository
// (a path with files under it) or charts opt.Charts fetches. The others
// are noted (see planSourcesWith).
func localSources(app drift.Object, files map[string]string, opt Options) ([]drift.Source, []string) {
	srcs, errs := planSourcesWith(app, files, opt)
	var notes []string
	for _, err := range errs {
		notes = append(notes, err.Error())
	}
	return srcs, notes
}

// planSources are the application's sources to render from this
// repository, and why each other one is not rendered: a
// *render.NotLocalError for a source in another repository or a chart
// from a chart repository or an OCI registry (Argo CD renders it where it
// is at hand), an error for a path without files or sources Argo CD
// refuses. A multi-source application's ref-only source (ref, no path, no
// chart) renders nothing in Argo CD, and is neither.
func planSources(app drift.Object, files map[string]string, repos []string) ([]drift.Source, []error) {
	return planSourcesWith(app, files, Options{Repositories: repos})
}

// planSourcesWith is planSources where opt.Charts fetches charts: a chart
// from a chart repository or an OCI registry is then a source to render
// (fetched when it renders); without opt.Charts it is a
// *render.NotLocalError that says fetching is off.
func planSourcesWith(app drift.Object, files map[string]string, opt Options) ([]drift.Source, []error) {
	repos := opt.Repositories
	all := drift.Sources(app)
	refs := map[string]bool{}
	for _, src := range all {
		if src.Ref == "" {
			continue
		}
		if refs[src.Ref] {
			return nil, []error{fmt.Errorf("sources: multiple sources have ref %s, which Argo CD refuses", src.Ref)}
		}
		refs[src.Ref] = true
	}
	var out []drift.Source
	var errs []error
	for _, src := range all {
		switch {
		case len(all) > 1 && src.Ref != "" && drift.Str(src.Spec, "path") == "" && src.Chart == "" && !strings.HasPrefix(src.RepoURL, "oci://"):
			// Only files for the others' $ref value files.
		case remoteChart(src) && opt.Charts != nil:
			out = append(out, src)
		case remoteChart(src):
			why := "is not in this repository: not rendered"
			if usesRef(src) {
				why = "is not in this repository (with value files from a ref source): not rendered"
			}
			errs = append(errs, &render.NotLocalError{What: "source chart " + src.Chart + " from " + src.RepoURL, Repository: src.RepoURL, Chart: src.Chart, Why: why, NotFetched: notFetched(opt)})
		case len(repos) > 0 && src.RepoURL != "" && !SameRepository(src.RepoURL, repos...):
			errs = append(errs, &render.NotLocalError{What: "source " + src.RepoURL, Repository: src.RepoURL, Why: "is another repository: not rendered"})
		case !hasFiles(files, src.Path):
			errs = append(errs, fmt.Errorf("source path %q (%s) has no manifest in this repository: not rendered", src.Path, src.RepoURL))
		default:
			out = append(out, src)
		}
	}
	return out, errs
}

// usesRef says whether a source reads a file of a ref source.
func usesRef(src drift.Source) bool {
	for _, f := range src.ValueFiles {
		if strings.HasPrefix(f, "$") {
			return true
		}
	}
	for _, p := range drift.List(src.Spec, "helm", "fileParameters") {
		if strings.HasPrefix(drift.Str(p, "path"), "$") {
			return true
		}
	}
	return false
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
