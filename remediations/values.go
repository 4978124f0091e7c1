package remediations

import (
	"path"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// helmOptions are the Helm options of the application's source src, with
// a ref source taken as this repository when it is a Git repository and
// the only one among the application's Git sources: the repository
// driftfix was given is then the one its $ref value files are read from.
func (c *Context) helmOptions(src drift.Source) render.HelmOptions {
	opts := render.HelmOptionsFor(c.Snapshot.Application, src)
	opts.Limits = c.Render
	gitRepos := map[string]bool{}
	for _, s := range drift.Sources(c.Snapshot.Application) {
		if s.Chart == "" {
			gitRepos[normRepo(s.RepoURL)] = true
		}
	}
	for name, r := range opts.Refs {
		if !r.Local && r.Chart == "" && len(gitRepos) == 1 && gitRepos[normRepo(r.Repository)] {
			r.Local = true
			opts.Refs[name] = r
		}
	}
	return opts
}

// valueFiles are the repository paths of the value files the source reads,
// in the order Helm merges them, the chart's own values.yaml first; those
// not in the repository are left out.
func (c *Context) valueFiles(src drift.Source) []string {
	var out []string
	if own := path.Join(src.Path, "values.yaml"); c.Repo[own] != nil && src.Chart == "" {
		out = append(out, own)
	}
	files, err := render.HelmValueFiles(c.Repo, c.helmOptions(src))
	if err != nil {
		// Unresolved (a ref elsewhere, a URL): the ones in this repository
		// relative to the chart, as written.
		files = nil
		for _, vf := range src.ValueFiles {
			if !strings.HasPrefix(vf, "$") {
				files = append(files, path.Join(src.Path, vf))
			}
		}
	}
	for _, f := range files {
		if c.Repo[f] != nil && !contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// valuesFileFor is the values file a chart value is written in: the last of
// the source's value files that sets key (Helm lets the last one win: a
// $ref file of an environment over the chart's defaults); when none sets
// it, the first value file the Application names, else the chart's
// values.yaml. It is "" when the repository has none of them.
func (c *Context) valuesFileFor(src drift.Source, key string) string {
	files := c.valueFiles(src)
	p := drift.Pointer(strings.Split(key, "."))
	for i := len(files) - 1; i >= 0; i-- {
		docs, err := yamledit.Documents(c.Repo[files[i]])
		if err != nil || len(docs) == 0 {
			continue
		}
		if _, ok := p.Get(docs[0]); ok {
			return files[i]
		}
	}
	own := path.Join(src.Path, "values.yaml")
	for _, f := range files {
		if f != own {
			return f
		}
	}
	if len(files) > 0 {
		return files[0]
	}
	return ""
}

// helmSource is the application's Helm source: one the snapshot shows
// (HelmSource), or a source whose path holds a Chart.yaml in the
// repository driftfix was given (a checkout given with --repo, which the
// snapshot's own files may not carry).
func helmSource(s *drift.Snapshot, repo Repo) (drift.Source, bool) {
	if src, ok := s.HelmSource(); ok {
		return src, true
	}
	for _, src := range drift.Sources(s.Application) {
		if src.Chart == "" && repo[path.Join(src.Path, "Chart.yaml")] != nil {
			return src, true
		}
	}
	return drift.Source{}, false
}

// templateFiles are the chart's template files in the repository, sorted.
func templateFiles(s *drift.Snapshot, repo Repo) []string {
	src, ok := helmSource(s, repo)
	if !ok {
		return nil
	}
	dir := path.Join(src.Path, "templates") + "/"
	if src.Path == "" {
		dir = "templates/"
	}
	var out []string
	for _, f := range sortedFiles(repo) {
		if strings.HasPrefix(f, dir) {
			out = append(out, f)
		}
	}
	return out
}
