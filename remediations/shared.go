package remediations

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

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
	me := drift.Str(c.Snapshot.Application, "metadata", "name")
	myRepos := map[string]bool{}
	for _, s := range drift.Sources(c.Snapshot.Application) {
		myRepos[normRepo(s.RepoURL)] = true
	}
	edited := map[string]bool{}
	for _, e := range p.Edits {
		edited[e.File] = true
	}
	for _, file := range sortedFiles(c.Repo) {
		for _, app := range applicationsIn(c.Repo[file]) {
			if drift.Str(app, "metadata", "name") == me {
				continue
			}
			for _, s := range drift.Sources(app) {
				if !myRepos[normRepo(s.RepoURL)] || s.Chart != "" {
					continue
				}
				reads := map[string]bool{}
				readsOf(c.Repo, s.Path, reads, 0)
				for _, e := range p.Edits {
					if reads[e.File] {
						return fmt.Sprintf("the edit changes %s, which Application %s (%s, path %s) also renders; the plan is verified for %s only: make the change where only %s reads it, or let a person decide for both",
							e.File, drift.Str(app, "metadata", "name"), file, s.Path, me, me)
					}
				}
			}
		}
	}
	return ""
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
