package remediations

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// sharedEdit is the blast-radius check: a plan is verified by diagnosing its
// own application again, so an edit to a file another Application of the
// same repository also renders (a Kustomize base two overlays share, a
// chart two applications install) would change that application unverified.
// It returns why the plan is dropped, naming the file and the other
// application, or "" when every edited file is read by this application
// alone. Other applications are found among the Application manifests in
// the repository's files; what a source reads is judged generously (every
// file a kustomization names and every file of a directory or chart), so a
// doubt drops the plan rather than lets it through.
func (c *Context) sharedEdit(p *Plan) string {
	if len(p.Edits) == 0 {
		return ""
	}
	if c.readers == nil {
		c.readers = append(otherReaders(c.Snapshot.Application, c.Repo), c.generatedReaders()...)
	}
	if why := c.sharedBase(p); why != "" {
		return why
	}
	me := drift.Str(c.Snapshot.Application, "metadata", "name")
	for _, r := range c.readers {
		if contains(p.rendered, r.app) {
			continue // its render of the edit was checked
		}
		for _, e := range p.Edits {
			if r.reads[e.File] && !contains(p.reached, e.File) {
				return fmt.Sprintf("the edit changes %s, which Application %s (%s, path %s) also renders; the plan is verified for %s only: make the change where only %s reads it, or let a person decide for both",
					e.File, r.app, r.file, r.path, me, me)
			}
		}
	}
	return ""
}

// refOnly reports whether a source only lends its files to other sources'
// $ref value files (a ref and no path): Argo CD renders nothing from it.
func refOnly(s drift.Source) bool {
	_, hasPath := drift.Map(s.Spec)["path"]
	return s.Ref != "" && !hasPath
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// reader is another Application of the repository, where its manifest is,
// and the files its source at path may read.
type reader struct {
	app, file, path string
	reads           map[string]bool
}

// otherReaders finds, once per planning context, every other Application
// whose manifest is in the repository and whose source is this
// application's repository, with the files each reads. The result is never
// nil, so a context asks once.
func otherReaders(app drift.Object, repo Repo) []reader {
	me := drift.Str(app, "metadata", "name")
	myRepos := map[string]bool{}
	for _, s := range drift.Sources(app) {
		myRepos[normRepo(s.RepoURL)] = true
	}
	out := []reader{}
	for _, file := range sortedFiles(repo) {
		for _, other := range applicationsIn(repo[file]) {
			if drift.Str(other, "metadata", "name") == me {
				continue
			}
			for _, s := range drift.Sources(other) {
				if !myRepos[normRepo(s.RepoURL)] || s.Chart != "" || refOnly(s) {
					continue
				}
				r := reader{app: drift.Str(other, "metadata", "name"), file: file, path: s.Path, reads: map[string]bool{}}
				readsOf(repo, s.Path, r.reads, 0)
				out = append(out, r)
			}
		}
	}
	return out
}

// normRepo compares repository URLs as Argo CD does, without a trailing
// slash or .git and without case.
func normRepo(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	u = strings.TrimSuffix(u, "/")
	return strings.TrimSuffix(u, ".git")
}

func sortedFiles(repo Repo) []string {
	out := make([]string, 0, len(repo))
	for f := range repo {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// applicationsIn returns the Argo CD Applications a YAML file declares; a
// file yamledit cannot read declares none it could edit either.
func applicationsIn(src []byte) []drift.Object {
	if !strings.Contains(string(src), "Application") {
		return nil
	}
	docs, err := yamledit.Documents(src)
	if err != nil {
		return nil
	}
	var out []drift.Object
	for _, d := range docs {
		doc, _ := d.(map[string]any)
		if drift.Str(doc, "kind") == "Application" && strings.HasPrefix(drift.Str(doc, "apiVersion"), "argoproj.io/") {
			out = append(out, doc)
		}
	}
	return out
}

// readsOf adds to reads every file of the repository a source at dir may
// read: the kustomization and every file or directory it names (recursively),
// or, without a kustomization, every file under dir.
func readsOf(repo Repo, dir string, reads map[string]bool, depth int) {
	dir = path.Clean(dir)
	if depth > 16 {
		return
	}
	k := kustomizationFile(repo, dir)
	if k == "" {
		for f := range repo {
			if inDir(f, dir) {
				reads[f] = true
			}
		}
		return
	}
	if reads[k] {
		return
	}
	reads[k] = true
	var doc any
	if err := yaml.Unmarshal(repo[k], &doc); err != nil {
		readsOf(repo, dir+"/..", reads, depth+1) // unreadable: take the whole tree around it
		return
	}
	for _, s := range stringsIn(doc, 0) {
		p := path.Clean(path.Join(dir, s))
		if _, ok := repo[p]; ok {
			reads[p] = true
			continue
		}
		for f := range repo {
			if inDir(f, p) {
				readsOf(repo, p, reads, depth+1)
				break
			}
		}
	}
}

// stringsIn returns every string value in a YAML document.
func stringsIn(v any, depth int) []string {
	if depth > 32 {
		return nil
	}
	switch x := v.(type) {
	case string:
		// a files: entry may be key=path
		if _, after, ok := strings.Cut(x, "="); ok {
			return []string{x, after}
		}
		return []string{x}
	case map[string]any:
		var out []string
		for _, e := range x {
			out = append(out, stringsIn(e, depth+1)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, stringsIn(e, depth+1)...)
		}
		return out
	}
	return nil
}

// inDir reports whether repository file f lies under dir ("" or "." is the
// repository's root).
func inDir(f, dir string) bool {
	dir = strings.Trim(dir, "/")
	return dir == "" || dir == "." || strings.HasPrefix(f, dir+"/")
}
