package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-jsonnet"

	"github.com/driftfix/driftfix/bot/drift"
)

// JsonnetOptions are a directory source's Jsonnet files and options
// (spec.source.directory.jsonnet), as Argo CD's repo-server evaluates them
// with google/go-jsonnet.
type JsonnetOptions struct {
	// Files are the .jsonnet files to evaluate, paths in the repository.
	Files []string
	// Dir is the source's path: the first library path, as Argo CD's.
	Dir string
	// TLAs and ExtVars are the top-level arguments and external variables,
	// their values already substituted ($ARGOCD_APP_NAME, ...).
	TLAs, ExtVars []JsonnetVar
	// Libs are library paths from the repository's root (a leading slash
	// is the root too); one that leaves the repository is refused.
	Libs []string
	// Unread are files the caller did not read (see Unread).
	Unread Unread
	// Limits bound the evaluation; zero fields take DefaultLimits.
	Limits Limits
}

// JsonnetVar is one top-level argument or external variable: a string, or
// Jsonnet code when Code is set.
type JsonnetVar struct {
	Name, Value string
	Code        bool
}

// Jsonnet evaluates each of opts.Files in a render process (no network,
// bounded in time, CPU and memory like a Helm render; Jsonnet's own stack
// bound of 500 frames, Argo CD's, stops deep recursion) and returns the
// objects of each, in order. An import is looked up as Argo CD's
// repo-server looks it up (beside the importing file, then in the library
// paths, the last first) but only among the repository's files: an
// absolute import, or one that leaves the repository, is refused. The
// output of a file is an object or an array of objects, as Argo CD reads it;
// a List's items are not flattened here.
func Jsonnet(files map[string][]byte, opts JsonnetOptions) ([][]drift.Object, error) {
	lim := opts.Limits.withDefaults()
	what := "jsonnet " + displayDir(opts.Dir)
	jpaths, err := jsonnetPaths(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	staged, unread := jsonnetInputs(files, opts.Unread, opts.Files, jpaths)
	if err := checkStaged(staged, what, lim); err != nil {
		return nil, err
	}
	opts.Unread = unread
	opts.Limits = lim
	objs, counts, err := inChildGroups(what, childRequest{Kind: "jsonnet", Files: staged, Jsonnet: opts, Limits: lim})
	if err != nil {
		return nil, err
	}
	if len(counts) != len(opts.Files) {
		return nil, fmt.Errorf("%s: the render process answered for %d files of %d", what, len(counts), len(opts.Files))
	}
	out := make([][]drift.Object, len(counts))
	for i, n := range counts {
		if n < 0 || n > len(objs) {
			return nil, fmt.Errorf("%s: the render process answered %d objects for %s, of %d", what, n, opts.Files[i], len(objs))
		}
		out[i], objs = objs[:n:n], objs[n:]
	}
	return out, nil
}

func displayDir(dir string) string {
	if dir = strings.Trim(dir, "/"); dir == "" {
		return "(repository root)"
	}
	return dir
}

// jsonnetPaths are the library paths, as repository paths: the source's
// path, then each library, as Argo CD orders them.
func jsonnetPaths(opts JsonnetOptions) ([]string, error) {
	dir, ok := inRepo(opts.Dir)
	if !ok {
		return nil, fmt.Errorf("the source path %q leaves the repository", opts.Dir)
	}
	out := []string{dir}
	for _, l := range opts.Libs {
		p, ok := inRepo(l)
		if !ok {
			return nil, fmt.Errorf("the library path %q (directory.jsonnet.libs) leaves the repository", l)
		}
		out = append(out, p)
	}
	return out, nil
}

// inRepo is p as a clean repository path ("" for the root), a leading
// slash taken as the root, and whether it stays in the repository.
func inRepo(p string) (string, bool) {
	p = path.Clean("./" + strings.TrimLeft(p, "/"))
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	if p == "." {
		p = ""
	}
	return p, true
}

// importRef finds the import expressions of a Jsonnet file: import,
// importstr and importbin of a quoted path. Jsonnet allows only a literal
// there, so reading the text finds them (one in a comment is found too,
// which only sends one file more).
var importRef = regexp.MustCompile(`\b(import|importstr|importbin)\s*@?(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')`)

// jsonnetInputs are the files a render process needs to evaluate main: the
// files and every file an import may name, found by reading the imports of
// each Jsonnet file reached (the others are not sent), and the unread ones
// among them.
func jsonnetInputs(files map[string][]byte, unread Unread, main []string, jpaths []string) (map[string][]byte, Unread) {
	staged := map[string][]byte{}
	var gone Unread
	type item struct {
		file string
		code bool // imported with import: its own imports are read too
	}
	queue := make([]item, 0, len(main))
	for _, f := range main {
		queue = append(queue, item{f, true})
	}
	seen := map[string]bool{}
	add := func(p string, code bool) {
		if u, ok := unread[p]; ok {
			if gone == nil {
				gone = Unread{}
			}
			gone[p] = u
		}
		if _, ok := files[p]; ok && !seen[p+strconv.FormatBool(code)] {
			seen[p+strconv.FormatBool(code)] = true
			queue = append(queue, item{p, code})
		}
	}
	for i := 0; i < len(queue); i++ {
		it := queue[i]
		data, ok := files[it.file]
		if !ok {
			if _, ok := unread[it.file]; ok {
				add(it.file, false)
			}
			continue
		}
		staged[it.file] = data
		if !it.code {
			continue
		}
		for _, m := range importRef.FindAllSubmatch(data, -1) {
			ref := string(m[2])
			if m[3] != nil {
				ref = string(m[3])
			}
			if s, err := strconv.Unquote(`"` + ref + `"`); err == nil {
				ref = s
			}
			code := string(m[1]) == "import"
			for _, base := range append([]string{path.Dir(it.file)}, jpaths...) {
				if p, ok := inRepo(path.Join(base, ref)); ok && !path.IsAbs(ref) {
					add(p, code)
				}
			}
		}
	}
	return staged, gone
}

// repoImporter is a Jsonnet importer over the repository's files only.
type repoImporter struct {
	files  map[string][]byte
	unread Unread
	jpaths []string
	cache  map[string]jsonnet.Contents
	// unreadErr is the first unread file an import named: go-jsonnet
	// reports an importer's error as text only.
	unreadErr error
}

// Import finds importedPath beside importedFrom, then in the library paths
// from the last to the first, as go-jsonnet's file importer does, among the
// repository's files.
func (im *repoImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	if path.IsAbs(importedPath) {
		return jsonnet.Contents{}, "", fmt.Errorf("import %q: an absolute path is refused, imports are read from the repository only", importedPath)
	}
	dirs := []string{path.Dir(importedFrom)}
	if importedFrom == "" {
		dirs[0] = ""
	}
	for i := len(im.jpaths) - 1; i >= 0; i-- {
		dirs = append(dirs, im.jpaths[i])
	}
	for i, d := range dirs {
		p, ok := inRepo(path.Join(d, importedPath))
		if !ok {
			if i == 0 {
				return jsonnet.Contents{}, "", fmt.Errorf("import %q from %s leaves the repository: refused", importedPath, importedFrom)
			}
			continue
		}
		if u, ok := im.unread[p]; ok {
			err := fmt.Errorf("import %q from %s: %w", importedPath, importedFrom, u.err(p))
			if im.unreadErr == nil {
				im.unreadErr = err
			}
			return jsonnet.Contents{}, "", err
		}
		if c, ok := im.cache[p]; ok {
			return c, p, nil
		}
		if data, ok := im.files[p]; ok {
			c := jsonnet.MakeContentsRaw(data)
			im.cache[p] = c
			return c, p, nil
		}
	}
	return jsonnet.Contents{}, "", fmt.Errorf("couldn't open import %q: no such file in the repository beside %s or in the Jsonnet library paths", importedPath, importedFrom)
}

// jsonnetChecked evaluates in this process: the body of Jsonnet, run in a
// render process. It returns every file's objects and how many each gave.
func jsonnetChecked(files map[string][]byte, opts JsonnetOptions) ([]drift.Object, []int, error) {
	lim := opts.Limits.withDefaults()
	jpaths, err := jsonnetPaths(opts)
	if err != nil {
		return nil, nil, err
	}
	vm := jsonnet.MakeVM()
	vm.ErrorFormatter.SetMaxStackTraceSize(4) // where it failed, not 500 frames of a recursion
	for _, v := range opts.TLAs {
		if v.Code {
			vm.TLACode(v.Name, v.Value)
		} else {
			vm.TLAVar(v.Name, v.Value)
		}
	}
	for _, v := range opts.ExtVars {
		if v.Code {
			vm.ExtCode(v.Name, v.Value)
		} else {
			vm.ExtVar(v.Name, v.Value)
		}
	}
	im := &repoImporter{files: files, unread: opts.Unread, jpaths: jpaths, cache: map[string]jsonnet.Contents{}}
	vm.Importer(im)
	var all []drift.Object
	var counts []int
	var size int64
	for _, f := range opts.Files {
		if u, ok := opts.Unread[f]; ok {
			return nil, nil, u.err(f)
		}
		out, err := vm.EvaluateFile(f)
		if err != nil && im.unreadErr != nil {
			return nil, nil, fmt.Errorf("evaluate %s: %w", f, im.unreadErr)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("evaluate %s: %s", f, strings.TrimSpace(strings.ReplaceAll(err.Error(), "\tDuring evaluation\t", "")))
		}
		if size += int64(len(out)); over(size, lim.MaxRenderedBytes) {
			return nil, nil, &LimitError{Limit: "MaxRenderedBytes", What: "jsonnet " + f, Got: "more than " + humanBytes(float64(lim.MaxRenderedBytes)), Max: humanBytes(float64(lim.MaxRenderedBytes))}
		}
		objs, err := JsonnetObjects([]byte(out))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, objs...)
		counts = append(counts, len(objs))
	}
	return all, counts, nil
}

// JsonnetObjects reads a Jsonnet file's output as Argo CD does: an array
// of objects, or one object; each needs a kind. A List stays one object.
func JsonnetObjects(out []byte) ([]drift.Object, error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("read the output as JSON: %w", err)
	}
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any:
		items = []any{x}
	default:
		return nil, fmt.Errorf("the output is %s, not an object or an array of objects", jsonKind(v))
	}
	out2 := make([]drift.Object, 0, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("element %d of the output is %s, not an object (Argo CD reads an array of objects only)", i, jsonKind(it))
		}
		if k, _ := m["kind"].(string); k == "" {
			return nil, fmt.Errorf("element %d of the output has no kind", i)
		}
		out2 = append(out2, jsonNumbers(m).(map[string]any))
	}
	return out2, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// jsonNumbers turns json.Numbers into int64 where whole, else float64, as
// a Kubernetes object decodes them.
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonNumbers(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// Unread are repository files a caller did not read because a budget left
// them out, by path. A render that reads one fails with an UnreadError
// naming it and its budget, never as a missing file.
type Unread map[string]UnreadFile

// UnreadFile is one file a budget left out.
type UnreadFile struct {
	Size   int64
	Budget string // the budget, e.g. "the per-file read budget of 4 MiB"
	Raise  string // how to raise it, e.g. "--max-file-bytes"
}

func (u UnreadFile) err(file string) error {
	return &UnreadError{File: file, UnreadFile: u}
}

// UnreadError is a render that needs a file its caller did not read.
type UnreadError struct {
	File string
	UnreadFile
}

func (e *UnreadError) Error() string {
	s := fmt.Sprintf("%s (%s) is over %s, so it was not read", e.File, humanBytes(float64(e.Size)), e.Budget)
	if e.Raise != "" {
		s += "; raise it with " + e.Raise
	}
	return s
}
