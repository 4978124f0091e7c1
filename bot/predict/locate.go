package predict

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/ignores"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// locate returns the file and line in the repository that declare a
// prediction's path: the resource's manifest (the line of the path, or of its
// nearest ancestor there), a chart's values file where it declares the value,
// else the template that renders the kind; the Application's manifest for
// one of its ignore rules. Line 0: the file is known, the line is not.
func locate(s *drift.Snapshot, manifest string, p Prediction) (string, int) {
	files := s.Repo.Files
	if len(files) == 0 {
		return p.FixFile, 0
	}
	if p.Resource.Group == "argoproj.io" && p.Resource.Kind == "Application" {
		f := manifest
		if f == "" {
			f = p.FixFile
		}
		holder := p.Resource
		holder.Namespace = ""
		if line := lineIn(files[f], holder, p.Path); line > 0 {
			return f, line
		}
		return f, templateLine(files[f], p.Path)
	}
	if p.Cause == drift.CauseTrackingClash && p.Resource.Kind == "PersistentVolumeClaim" && len(p.Path) == 0 {
		if ref, at, ok := claimOrigin(s, p.Resource); ok {
			p.Resource, p.Path, p.Git = ref, at, nil
		}
	}
	repo := remediations.Repo{}
	for k, v := range files {
		repo[k] = []byte(v)
	}
	holder := p.Resource
	if src, ok := s.HelmSource(); ok {
		if f, line := valuesLine(s, src, p); line > 0 {
			return f, line
		}
		f := remediations.Locate(s, repo, p.Resource, drift.FixRemoveField)
		if f == "" {
			f = p.FixFile
		}
		return f, keyLine(files[f], lastKey(p.Path), nil)
	}
	// A manifest in a source path, or anywhere in the repository (a
	// kustomization's base).
	var names []string
	for f := range files {
		if strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	var dirs []string
	for _, src := range drift.Sources(s.Application) {
		dirs = append(dirs, src.Path)
	}
	// A file the application's sources read (in a source path, or a base
	// or patch its kustomization names) wins over any other; then the file
	// that declares the most of the path (an overlay's patch that sets the
	// field over the base, the base over a patch that only names the
	// object); then by name.
	reads := map[string]bool{}
	for _, src := range drift.Sources(s.Application) {
		if kustomization(src.Path, files) {
			for f := range remediations.SourceReads(repo, src.Path) {
				reads[f] = true
			}
		}
	}
	// A kustomization's namePrefix and nameSuffix are not in its bases'
	// files: the object is also looked for under its name without them.
	holders := []drift.Ref{holder}
	for f := range reads {
		if !isKustomizationName(f) {
			continue
		}
		var k struct {
			NamePrefix string `yaml:"namePrefix"`
			NameSuffix string `yaml:"nameSuffix"`
		}
		if yaml.Unmarshal([]byte(files[f]), &k) != nil || k.NamePrefix+k.NameSuffix == "" {
			continue
		}
		h := holder
		h.Name = strings.TrimSuffix(strings.TrimPrefix(h.Name, k.NamePrefix), k.NameSuffix)
		if h.Name != holder.Name && h.Name != "" {
			holders = append(holders, h)
		}
	}
	// Among the files the sources read, the deepest declaration wins, and
	// of two as deep, one in a source's own path (an overlay's patch) over
	// one it reads from elsewhere (a base).
	best, bestLine, bestDepth, bestRead, bestOwn := "", 0, -1, false, false
	for _, f := range names {
		for _, h := range holders {
			line, depth := lineDepth(files[f], h, p.Path)
			if line == 0 {
				continue
			}
			own := inAny(f, dirs)
			read := own || reads[f]
			if (read && !bestRead) || (read == bestRead && (depth > bestDepth || (depth == bestDepth && own && !bestOwn))) {
				best, bestLine, bestDepth, bestRead, bestOwn = f, line, depth, read, own
			}
		}
	}
	if best != "" {
		return best, bestLine
	}
	if f, line := jsonnetLine(files, dirs, p); line > 0 {
		return f, line
	}
	return p.FixFile, 0
}

// templateLine is the line of an ApplicationSet's template that declares
// a generated Application's path (spec.template, then the path), in the
// ApplicationSet manifest file; 0 when none does.
func templateLine(src string, p drift.Pointer) int {
	for _, set := range argoObjects(src) {
		if !isApplicationSet(set) {
			continue
		}
		ref := drift.Ref{Group: "argoproj.io", Kind: "ApplicationSet", Name: drift.Str(set, "metadata", "name")}
		at := append(drift.Pointer{"spec", "template"}, p...)
		if line, depth := lineDepth(src, ref, at); line > 0 && depth > 2 {
			return line
		}
	}
	return 0
}

// jsonnetLine is, for a source of Jsonnet files, the line of a .jsonnet or
// .libsonnet file in the source's path that declares the path's last key,
// a file that names the resource first.
func jsonnetLine(files map[string]string, dirs []string, p Prediction) (string, int) {
	key := lastKey(p.Path)
	if key == "" {
		return "", 0
	}
	var names []string
	for f := range files {
		if (strings.HasSuffix(f, ".jsonnet") || strings.HasSuffix(f, ".libsonnet")) && inAny(f, dirs) {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	var first string
	var firstLine int
	for _, f := range names {
		line := keyLine(files[f], key, nil)
		if line == 0 {
			continue
		}
		c := files[f]
		if strings.Contains(c, "'"+p.Resource.Name+"'") || strings.Contains(c, `"`+p.Resource.Name+`"`) {
			return f, line
		}
		if first == "" {
			first, firstLine = f, line
		}
	}
	return first, firstLine
}

func inAny(f string, dirs []string) bool {
	for _, d := range dirs {
		if d == "" || strings.HasPrefix(f, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// lineIn is the line of the document declaring holder at p, or at the
// nearest ancestor of p that the document has (the document's first line
// when it has none of them); 0 when no document declares holder.
func lineIn(src string, holder drift.Ref, p drift.Pointer) int {
	line, _ := lineDepth(src, holder, p)
	return line
}

// lineDepth is lineIn with how many of p's tokens the document declares.
func lineDepth(src string, holder drift.Ref, p drift.Pointer) (int, int) {
	// A document declares the holder by its kind and name: a file whose
	// text has neither (nor an escape, the one way YAML spells a string
	// without its text) is not parsed.
	if src == "" || (!strings.Contains(src, `\`) && !(strings.Contains(src, holder.Kind) && strings.Contains(src, holder.Name))) {
		return 0, 0
	}
	for n := len(p); n >= 0; n-- {
		line, _, ok, err := ignores.Find([]byte(src), holder, p[:n])
		if err != nil {
			return 0, 0
		}
		if ok {
			return line, n
		}
		if n == 0 {
			break
		}
	}
	// Without a namespace in the manifest the holder's is not compared; a
	// manifest that names the kind and name with another namespace is not it.
	return 0, 0
}

// valuesLine finds, in the chart's values files, the line that declares the
// value a prediction's path holds in Git: a key named like the path's last
// key, with Git's value.
func valuesLine(s *drift.Snapshot, src drift.Source, p Prediction) (string, int) {
	key := lastKey(p.Path)
	if key == "" || p.Git == nil {
		return "", 0
	}
	switch p.Git.(type) {
	case map[string]any, []any:
		return "", 0
	}
	files := []string{path.Join(src.Path, "values.yaml")}
	if vfs, err := render.HelmValueFiles(s.Repo.Files, helmOptions(s.Application, src, nil)); err == nil {
		files = append(files, vfs...) // as Argo CD resolves them: $ref/..., /root, globs
	}
	for i := len(files) - 1; i >= 0; i-- { // the last values file wins in Helm
		if line := keyLine(s.Repo.Files[files[i]], key, p.Git); line > 0 {
			return files[i], line
		}
	}
	return "", 0
}

// lastKey is the last mapping key of a path (list indexes skipped).
func lastKey(p drift.Pointer) string {
	for i := len(p) - 1; i >= 0; i-- {
		if _, err := strconv.Atoi(p[i]); err != nil {
			return p[i]
		}
	}
	return ""
}

// keyLine returns the first line of src (1-based) whose YAML key is key and,
// when value is not nil, whose scalar is value; 0 when there is none.
func keyLine(src, key string, value any) int {
	if src == "" || key == "" {
		return 0
	}
	want := ""
	if value != nil {
		want = strings.Trim(fmt.Sprint(value), `"'`)
	}
	for i, l := range strings.Split(src, "\n") {
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		k, v, ok := strings.Cut(t, ":")
		if !ok || strings.Trim(strings.TrimSpace(k), `"'`) != key {
			continue
		}
		if value == nil {
			return i + 1
		}
		v = strings.TrimSpace(v)
		if c := strings.Index(v, " #"); c >= 0 {
			v = strings.TrimSpace(v[:c])
		}
		if strings.Trim(v, `"'`) == want {
			return i + 1
		}
	}
	return 0
}

// claimOrigin is the StatefulSet whose volumeClaimTemplates create a claim,
// and the path of the template's label Argo CD tracks by.
func claimOrigin(s *drift.Snapshot, claim drift.Ref) (drift.Ref, drift.Pointer, bool) {
	for _, r := range s.Resources {
		ref := drift.RefOf(r.Target)
		if r.Target == nil || ref.Group != "apps" || ref.Kind != "StatefulSet" || ref.Namespace != claim.Namespace {
			continue
		}
		for i, t := range drift.List(r.Target, "spec", "volumeClaimTemplates") {
			if !strings.HasPrefix(claim.Name, drift.Str(t, "metadata", "name")+"-"+ref.Name+"-") {
				continue
			}
			at := drift.Pointer{"spec", "volumeClaimTemplates", strconv.Itoa(i), "metadata", "labels"}
			if st, _, err := diff.ReadSettings(s.Cluster); err == nil && st.InstanceLabelKey != "" {
				at = at.Child(st.InstanceLabelKey)
			}
			return ref, at, true
		}
	}
	return drift.Ref{}, nil, false
}
