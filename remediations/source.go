package remediations

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// sourceType says how the application renders its manifests.
func sourceType(s *drift.Snapshot, repo Repo) string {
	if _, ok := helmSource(s, repo); ok {
		return "helm"
	}
	for _, src := range drift.Sources(s.Application) {
		for _, k := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
			if _, ok := repo[path.Join(src.Path, k)]; ok {
				return "kustomize"
			}
		}
	}
	return "directory"
}

// located is a document in a repository file.
type located struct {
	file string
	doc  int
}

// mayDeclare says whether a file can hold a document of ref's kind and name
// without parsing it: the text names both, or it has an escape (a double
// quoted "\x.." spelling of them), the one way YAML writes a string without
// its text.
func mayDeclare(data []byte, ref drift.Ref) bool {
	if bytes.IndexByte(data, '\\') >= 0 {
		return true
	}
	return bytes.Contains(data, []byte(ref.Kind)) && bytes.Contains(data, []byte(ref.Name))
}

// locateDoc finds the one YAML document in the repository (under dir when it
// is not empty) with the resource's kind and name. It fails when there is no
// such document or more than one.
func locateDoc(repo Repo, dir string, ref drift.Ref) (located, error) {
	var names []string
	for f := range repo {
		if (strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml")) && (dir == "" || strings.HasPrefix(f, strings.TrimSuffix(dir, "/")+"/")) {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	var found []located
	for _, f := range names {
		if !mayDeclare(repo[f], ref) {
			continue
		}
		docs, err := yamledit.Documents(repo[f])
		if err != nil {
			continue // not a manifest file this tool can read
		}
		for i, d := range docs {
			m, _ := d.(map[string]any)
			g, _ := drift.SplitAPIVersion(drift.Str(m, "apiVersion"))
			ns := drift.Str(m, "metadata", "namespace")
			if drift.Str(m, "kind") == ref.Kind && drift.Str(m, "metadata", "name") == ref.Name && g == ref.Group &&
				(ns == "" || ref.Namespace == "" || ns == ref.Namespace) {
				found = append(found, located{file: f, doc: i})
			}
		}
	}
	switch len(found) {
	case 0:
		where := "the repository"
		if dir != "" {
			where = dir
		}
		return located{}, fmt.Errorf("no manifest of %s in %s", ref, where)
	case 1:
		return found[0], nil
	}
	return located{}, fmt.Errorf("%d manifests of %s (%s and %s); cannot tell which one Argo CD renders", len(found), ref, found[0].file, found[1].file)
}

// locateResource finds the manifest of a resource of a plain-directory application.
func (c *Context) locateResource(ref drift.Ref) (located, string) {
	var errs []string
	for _, src := range drift.Sources(c.Snapshot.Application) {
		loc, err := locateDoc(c.Repo, src.Path, ref)
		if err == nil {
			return loc, ""
		}
		errs = append(errs, err.Error())
	}
	if len(errs) == 0 {
		return located{}, "the Application has no source path"
	}
	return located{}, "cannot locate the source with certainty: " + strings.Join(errs, "; ")
}

// resourceIndex returns the snapshot index of a resource, or -1.
func resourceIndex(s *drift.Snapshot, ref drift.Ref) int {
	for i := range s.Resources {
		if s.Resources[i].Ref() == ref {
			return i
		}
	}
	return -1
}

// withTarget returns a copy of the snapshot whose resource i has a new target,
// as it stands after that target is synced: a client-side apply also records it
// as the last-applied configuration.
func withTarget(s *drift.Snapshot, i int, target drift.Object) *drift.Snapshot {
	c := *s
	c.Resources = append([]drift.Resource(nil), s.Resources...)
	r := &c.Resources[i]
	r.Target = target
	r.PredictedLive, r.NormalizedLive = nil, nil
	if _, ok := drift.Annotations(r.Live)[lastAppliedKey]; ok {
		live := drift.DeepCopy(r.Live).(map[string]any)
		applied := drift.DeepCopy(target).(map[string]any)
		if md, ok := applied["metadata"].(map[string]any); ok {
			if ann, ok := md["annotations"].(map[string]any); ok {
				delete(ann, lastAppliedKey)
			}
		}
		raw, err := json.Marshal(applied)
		if err == nil {
			drift.Map(live, "metadata", "annotations")[lastAppliedKey] = string(raw)
			r.Live = live
		}
	}
	return &c
}

const lastAppliedKey = "kubectl.kubernetes.io/last-applied-configuration"

// withApplication returns a copy of the snapshot with another Application object.
func withApplication(s *drift.Snapshot, app drift.Object) *drift.Snapshot {
	c := *s
	c.Application = app
	return &c
}

// removeClimb deletes p from doc and then every map or list the deletion left
// empty, as the YAML editor does.
func removeClimb(doc any, p drift.Pointer) any {
	doc, _ = p.Delete(doc)
	for q := p[:len(p)-1]; len(q) > 0; q = q[:len(q)-1] {
		v, ok := q.Get(doc)
		if !ok || !drift.IsEmpty(v) {
			break
		}
		if _, isStr := v.(string); isStr {
			break
		}
		doc, _ = q.Delete(doc)
	}
	return doc
}

// errAlreadyApplied says the repository already holds the change.
var errAlreadyApplied = errors.New("the repository already has this change")

// applyEdits runs edit functions over one file in order and returns the Edit.
func applyEdits(repo Repo, file string, steps ...func([]byte) ([]byte, error)) (Edit, error) {
	before, ok := repo[file]
	if !ok {
		return Edit{}, fmt.Errorf("%s is not in the repository", file)
	}
	cur := before
	for _, st := range steps {
		next, err := st(cur)
		if err != nil {
			return Edit{}, fmt.Errorf("edit %s: %w", file, err)
		}
		cur = next
	}
	if string(cur) == string(before) {
		return Edit{}, errAlreadyApplied
	}
	return Edit{File: file, Before: before, After: cur, steps: steps}, nil
}

func undoText(files ...string) string {
	return "revert the commit (git revert) or restore " + strings.Join(files, ", ") + " from the base branch"
}
