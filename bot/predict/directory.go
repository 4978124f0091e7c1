package predict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/gobwas/glob"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// directory reads a plain-directory source with render's default limits
// and every file read (see directoryWith).
func directory(app drift.Object, src drift.Source, files map[string]string) ([]drift.Object, error) {
	return directoryWith(app, src, nil, files, render.Limits{}, nil)
}

// skipRendering is the marker that keeps a file out of a directory source's
// render, as Argo CD's repo-server reads it.
const skipRendering = "+argocd:skip-file-rendering"

// directoryWith renders a plain-directory source as Argo CD's repo-server
// does (findManifests): the files of the path (below it too with
// directory.recurse) named .yaml, .yml, .json or .jsonnet (any name with
// directory.disableExtensionFilter), whose path from the source's path
// matches directory.include and not directory.exclude (Argo CD's glob, see
// DirectoryGlob), without the file-rendering skip marker. YAML files give
// their documents, a JSON file its one object, a Jsonnet file its output
// (an object or an array of objects), evaluated in a render process with
// directory.jsonnet's tlas, extVars and libs. A List's items are taken
// one level down, as Argo CD takes them; Applications are left out: an
// app-of-apps' children are applications of their own. files may be nil
// (it is made from text when a Jsonnet file needs it); unread are the files
// the repository's read left out for a budget: one the render needs is an
// error naming it.
func directoryWith(app drift.Object, src drift.Source, files map[string][]byte, text map[string]string, lim render.Limits, unread render.Unread) ([]drift.Object, error) {
	opts, err := directoryOptions(src)
	if err != nil {
		return nil, err
	}
	include, err := DirectoryGlob(opts.include)
	if err != nil {
		return nil, fmt.Errorf("directory.include: %w", err)
	}
	exclude, err := DirectoryGlob(opts.exclude)
	if err != nil {
		return nil, fmt.Errorf("directory.exclude: %w", err)
	}
	var names []string
	picked := func(f string) bool {
		if !inDir(f, src.Path) {
			return false
		}
		rel := f
		if src.Path != "" {
			rel = strings.TrimPrefix(f, src.Path+"/")
		}
		if !opts.recurse && strings.Contains(rel, "/") {
			return false
		}
		if !opts.anyName && !manifestName(path.Base(f)) {
			return false
		}
		if exclude != nil && exclude.Match(rel) {
			return false
		}
		return include == nil || include.Match(rel)
	}
	for f := range text {
		if picked(f) && !strings.Contains(text[f], skipRendering) {
			names = append(names, f)
		}
	}
	for f, u := range unread {
		if picked(f) {
			return nil, &render.UnreadError{File: f, UnreadFile: u}
		}
	}
	sort.Strings(names)

	var out []drift.Object
	var jsonnets []string
	for _, f := range names {
		if strings.HasSuffix(f, ".jsonnet") {
			jsonnets = append(jsonnets, f)
			continue
		}
		objs, err := manifestsIn(f, []byte(text[f]))
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	if len(jsonnets) > 0 {
		if files == nil {
			files = make(map[string][]byte, len(text))
			for k, v := range text {
				files[k] = []byte(v)
			}
		}
		jo := render.JsonnetOptions{Files: jsonnets, Dir: src.Path, Libs: opts.libs, TLAs: opts.tlas, ExtVars: opts.extVars, Unread: unread, Limits: lim}
		env := argoEnv(app, src)
		for _, vs := range [][]render.JsonnetVar{jo.TLAs, jo.ExtVars} {
			for i := range vs {
				vs[i].Value = os.Expand(vs[i].Value, env)
			}
		}
		groups, err := render.Jsonnet(files, jo)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			out = append(out, g...)
		}
	}
	var objs []drift.Object
	for _, o := range out {
		items, err := listItems(o)
		if err != nil {
			return nil, err
		}
		for _, m := range items {
			if isApplication(m) {
				continue // an app-of-apps' child is its own application
			}
			// numbers as the engine reads them (int64), as a render gives them
			objs = append(objs, drift.NormalizeNumbers(m).(map[string]any))
		}
	}
	return objs, nil
}

// manifestName says whether Argo CD reads a file of a directory source
// when its extension filter is on.
func manifestName(base string) bool {
	for _, ext := range []string{".yaml", ".yml", ".json", ".jsonnet"} {
		if strings.HasSuffix(base, ext) && len(base) > len(ext) {
			return true
		}
	}
	return false
}

// dirOptions are a directory source's options (spec.source.directory).
type dirOptions struct {
	recurse, anyName bool
	include, exclude string
	tlas, extVars    []render.JsonnetVar
	libs             []string
}

// directoryOptions reads the source's own directory options.
func directoryOptions(src drift.Source) (dirOptions, error) {
	var o dirOptions
	d := drift.Map(src.Spec, "directory")
	if d == nil {
		if v, ok := src.Spec["directory"]; ok && v != nil {
			return o, fmt.Errorf("directory: %T, not an object", v)
		}
		return o, nil
	}
	var err error
	flag := func(key string) bool {
		v, ok := d[key]
		b, isBool := v.(bool)
		if ok && v != nil && !isBool && err == nil {
			err = fmt.Errorf("directory.%s: %v is not true or false", key, v)
		}
		return b
	}
	str := func(key string) string {
		v, ok := d[key]
		s, isStr := v.(string)
		if ok && v != nil && !isStr && err == nil {
			err = fmt.Errorf("directory.%s: %v is not a string", key, v)
		}
		return s
	}
	o.recurse, o.anyName = flag("recurse"), flag("disableExtensionFilter")
	o.include, o.exclude = str("include"), str("exclude")
	if err != nil {
		return o, err
	}
	j := drift.Map(d, "jsonnet")
	for _, key := range []string{"tlas", "extVars"} {
		for i, e := range drift.List(j, key) {
			m, ok := e.(map[string]any)
			name := drift.Str(m, "name")
			if !ok || name == "" {
				return o, fmt.Errorf("directory.jsonnet.%s[%d]: not an object with a name", key, i)
			}
			code, _ := m["code"].(bool)
			v := render.JsonnetVar{Name: name, Value: scalarText(m["value"]), Code: code}
			if key == "tlas" {
				o.tlas = append(o.tlas, v)
			} else {
				o.extVars = append(o.extVars, v)
			}
		}
	}
	for i, l := range drift.List(j, "libs") {
		s, ok := l.(string)
		if !ok {
			return o, fmt.Errorf("directory.jsonnet.libs[%d]: %v is not a path", i, l)
		}
		o.libs = append(o.libs, s)
	}
	return o, nil
}

// scalarText is a value as Argo CD's string field holds it.
func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// argoEnv is the build environment Argo CD substitutes in Jsonnet's tlas
// and extVars ($ARGOCD_APP_NAME, ...; $$ is a dollar). The revision
// Argo CD renders (ARGOCD_APP_REVISION and its short forms) is not known
// from a snapshot of files, and is empty, as any unknown name.
func argoEnv(app drift.Object, src drift.Source) func(string) string {
	vars := map[string]string{
		"ARGOCD_APP_NAME":                   drift.Str(app, "metadata", "name"),
		"ARGOCD_APP_NAMESPACE":              drift.Str(app, "spec", "destination", "namespace"),
		"ARGOCD_APP_PROJECT_NAME":           drift.Str(app, "spec", "project"),
		"ARGOCD_APP_SOURCE_REPO_URL":        src.RepoURL,
		"ARGOCD_APP_SOURCE_PATH":            drift.Str(src.Spec, "path"),
		"ARGOCD_APP_SOURCE_TARGET_REVISION": src.TargetRevision,
	}
	return func(name string) string {
		if name == "$" {
			return "$"
		}
		return vars[name]
	}
}

// DirectoryGlob compiles a directory source's include or exclude pattern
// as Argo CD matches it against a file's path from the source's path: a
// gobwas glob with no separator, so * and ** match across directories,
// {a.yaml,b.yaml} is either, [a-c] and ? one character. An empty pattern
// is none (nil). Where Argo CD treats a pattern that does not compile as
// matching nothing, this is an error naming it.
func DirectoryGlob(pattern string) (*glob.Pattern, error) {
	if pattern == "" {
		return nil, nil
	}
	g, err := glob.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%q is not a glob pattern (Argo CD matches no file with it): %w", pattern, err)
	}
	return g, nil
}

// manifestsIn reads one YAML or JSON file of a directory source: a JSON
// file holds one object with a kind, as Argo CD reads it (a second value,
// or no kind, is an error there too); a YAML file any documents, of which
// the objects with a kind are taken. A YAML file that does not parse is an
// error naming it. (Argo CD also refuses a YAML document without a kind
// after an object, or in a file that looks like a manifest, and leaves out
// an unparsable file that does not; here such documents are left out and
// such files are errors, as before directory options were read.)
func manifestsIn(f string, data []byte) ([]drift.Object, error) {
	if strings.HasSuffix(f, ".json") {
		dec := json.NewDecoder(bytes.NewReader(data))
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: not a JSON object Argo CD can read: %w", f, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: more than one JSON value; Argo CD reads one object from a JSON file", f)
		}
		if m, ok := v.(map[string]any); !ok || drift.Str(m, "kind") == "" {
			return nil, fmt.Errorf("%s: not a Kubernetes object (a JSON object with a kind), which Argo CD refuses", f)
		}
	}
	docs, err := yamledit.Documents(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a manifest Argo CD can read: %w", f, err)
	}
	var out []drift.Object
	for _, d := range docs {
		if m, _ := d.(map[string]any); m != nil && drift.Str(m, "kind") != "" {
			out = append(out, m)
		}
	}
	return out, nil
}

// listItems are the objects an object stands for, as Argo CD takes them
// from a render: a List's items (an object whose items is a list, each an
// object), none for a List whose items are null, any other object itself.
func listItems(o drift.Object) ([]drift.Object, error) {
	items, isList := o["items"].([]any)
	_, spec := o["spec"]
	_, status := o["status"]
	if !isList {
		if v, ok := o["items"]; ok && v == nil && !spec && !status {
			return nil, nil
		}
		return []drift.Object{o}, nil
	}
	out := make([]drift.Object, 0, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s %s: items[%d] is not an object, which Argo CD refuses", drift.Str(o, "kind"), drift.Str(o, "metadata", "name"), i)
		}
		out = append(out, m)
	}
	return out, nil
}

// Unread are the files a repository's read left out for a budget, as the
// renders of predict name them: with the flag that raises the budget.
func Unread(skipped map[string]gitrepo.Skip) render.Unread {
	if len(skipped) == 0 {
		return nil
	}
	out := make(render.Unread, len(skipped))
	for f, s := range skipped {
		u := render.UnreadFile{Size: s.Size}
		switch s.Limit {
		case "MaxTotalBytes":
			u.Budget, u.Raise = "the repository's total read budget of "+sizeText(s.Max)+" (every smaller file was read first)", "--max-repo-bytes"
		default:
			u.Budget, u.Raise = "the per-file read budget of "+sizeText(s.Max), "--max-file-bytes"
		}
		out[f] = u
	}
	return out
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Source types, as Argo CD names them.
const (
	typeHelm      = "Helm"
	typeKustomize = "Kustomize"
	typeDirectory = "Directory"
	typePlugin    = "Plugin"
)

// sourceType is how Argo CD's repo-server renders a source of this
// repository: the type its options name (helm, kustomize, directory or
// plugin; more than one is an error, as Argo CD refuses it), else what the
// files directly in its path show (a name ending in Chart.yaml: Helm; a
// kustomization: Kustomize, which wins when both are there, as Argo CD
// finds them in name order and keeps the last), else Directory. A chart
// from a Helm repository is Helm. Argo CD may also find a Config
// Management Plugin that claims the path; that needs its sidecar and is not
// known from the files.
func sourceType(src drift.Source, files map[string]string) (string, error) {
	var named []string
	for _, k := range []struct{ key, typ string }{{"kustomize", typeKustomize}, {"helm", typeHelm}, {"directory", typeDirectory}, {"plugin", typePlugin}} {
		if v, ok := src.Spec[k.key]; ok && v != nil {
			named = append(named, k.typ)
		}
	}
	switch {
	case len(named) > 1:
		return "", fmt.Errorf("the source names more than one type (%s), which Argo CD refuses", strings.Join(named, ", "))
	case len(named) == 1:
		return named[0], nil
	case src.Chart != "":
		return typeHelm, nil
	}
	var bases []string
	for f := range files {
		if path.Dir(f) == path.Clean("./"+src.Path) {
			bases = append(bases, path.Base(f))
		}
	}
	sort.Strings(bases)
	t := typeDirectory
	for _, b := range bases {
		switch {
		case strings.HasSuffix(b, "Chart.yaml"):
			t = typeHelm
		case b == "kustomization.yaml" || b == "kustomization.yml" || b == "Kustomization":
			t = typeKustomize
		}
	}
	return t, nil
}
