package render

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/driftfix/driftfix/bot/drift"
)

// Kustomize builds the kustomization in dir from the given files, in memory,
// as `kustomize build` does with Argo CD's defaults (no plugins), under
// DefaultLimits. See KustomizeWithLimits.
func Kustomize(files map[string][]byte, dir string) ([]drift.Object, error) {
	return KustomizeWithLimits(files, dir, Limits{})
}

// KustomizeWithLimits builds the kustomization in dir from the given files,
// in memory and without any network: a remote base, resource, component,
// file or chart is refused with a RemoteError naming the kustomization and
// the URL. The build is bounded by lim (zero fields take DefaultLimits) and
// runs in a render process of its own, like Helm. It takes no build
// options; see KustomizeWithOptions.
func KustomizeWithLimits(files map[string][]byte, dir string, lim Limits) ([]drift.Object, error) {
	return KustomizeWithOptions(files, dir, KustomizeOptions{Limits: lim})
}

// KustomizeWithOptions is KustomizeWithLimits with the build options Argo CD
// passes to `kustomize build` (argocd-cm's kustomize.buildOptions), read as
// kustomize reads them. An option driftfix cannot render as Argo CD would
// (Helm, an output path) is an error naming it, before anything is built.
// The staged files are the only ones a build can read, whatever its load
// restrictor: the file system is in memory.
func KustomizeWithOptions(files map[string][]byte, dir string, opts KustomizeOptions) ([]drift.Object, error) {
	lim := opts.Limits.withDefaults()
	what := "kustomize build " + dir
	if _, err := parseBuildOptions(opts.BuildOptions); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	files = kustomizeInputs(files)
	if err := checkStaged(files, what, lim); err != nil {
		return nil, err
	}
	return inChild(what, childRequest{Kind: "kustomize", Files: files, Dir: dir, BuildOptions: opts.BuildOptions, Unread: opts.Unread, Limits: lim})
}

// kustomizeInputs are the files a build may read, of those given: every
// manifest, kustomization and patch (.yaml, .yml, .json, Kustomization),
// and every other file whose name a kustomization or a generator's
// configuration names (a configMapGenerator's files: or envs: input, of any
// type). The others (images, archives, documentation) are not staged, so
// a repository's size does not count against MaxChartBytes.
func kustomizeInputs(files map[string][]byte) map[string][]byte {
	named := map[string]bool{}
	for f, data := range files {
		base := path.Base(f)
		if !(konfigName(base) || (manifestName(f) && bytes.Contains(data, []byte("Generator")))) {
			continue
		}
		for _, tok := range bytes.FieldsFunc(data, func(r rune) bool {
			return r <= ' ' || strings.ContainsRune("\"',[]{}=:#", r)
		}) {
			named[path.Base(string(tok))] = true
		}
	}
	out := make(map[string][]byte, len(files))
	for f, data := range files {
		if manifestName(f) || named[path.Base(f)] {
			out[f] = data
		}
	}
	return out
}

func konfigName(base string) bool {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if base == n {
			return true
		}
	}
	return false
}

// manifestName says whether a file is staged for any build: a manifest,
// kustomization or patch.
func manifestName(f string) bool {
	return strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") || strings.HasSuffix(f, ".json") || konfigName(path.Base(f))
}

// kustomizeChecked checks and builds in this process: the body of
// KustomizeWithOptions, run in a render process.
func kustomizeChecked(files map[string][]byte, dir, buildOptions string, unread Unread, lim Limits) ([]drift.Object, error) {
	what := "kustomize build " + dir
	b, err := parseBuildOptions(buildOptions)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := checkKustomizeLocal(files, dir); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return withTimeout(lim.Timeout, what, func() ([]drift.Object, error) {
		return kustomize(files, dir, b, unread, lim)
	})
}

func kustomize(files map[string][]byte, dir string, b kustomizeBuild, unread Unread, lim Limits) ([]drift.Object, error) {
	mem := filesys.MakeFsInMemory()
	fs := &unreadFS{FileSystem: mem, unread: map[string]UnreadFile{}}
	for name, u := range unread {
		// An unread file is there, so kustomize reads it and is told why
		// it cannot, rather than looking for it elsewhere.
		p := "/" + strings.TrimPrefix(name, "/")
		if _, staged := files[name]; staged || mem.MkdirAll(path.Dir(p)) != nil || mem.WriteFile(p, nil) != nil {
			continue
		}
		fs.unread[p] = u
	}
	for name, data := range files {
		p := "/" + strings.TrimPrefix(name, "/")
		if err := fs.MkdirAll(path.Dir(p)); err != nil {
			return nil, fmt.Errorf("stage %s: %w", name, err)
		}
		if err := fs.WriteFile(p, data); err != nil {
			return nil, fmt.Errorf("stage %s: %w", name, err)
		}
	}
	k := krusty.MakeKustomizer(b.opts)
	rm, err := k.Run(fs, "/"+strings.Trim(dir, "/"))
	if err != nil && fs.read != nil {
		// kustomize words the error it wraps its own way: keep its words,
		// and the UnreadError beneath them.
		if strings.Contains(err.Error(), fs.read.Error()) {
			err = &renderError{msg: err.Error(), inner: fs.read}
		} else {
			err = fmt.Errorf("%w (%w)", fs.read, err)
		}
	}
	if err != nil {
		if b.plugins {
			return nil, fmt.Errorf("kustomize build %s: %w (argocd-cm %s enables plugins, which driftfix never runs: it builds with plugins disabled)", dir, err, BuildOptionsKey)
		}
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var out []drift.Object
	var size int64
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
		}
		if b, err := r.AsYAML(); err == nil {
			if size += int64(len(b)); over(size, lim.MaxRenderedBytes) {
				return nil, &LimitError{Limit: "MaxRenderedBytes", What: "kustomize build " + dir, Got: "more than " + humanBytes(float64(lim.MaxRenderedBytes)), Max: humanBytes(float64(lim.MaxRenderedBytes))}
			}
		}
		out = append(out, drift.NormalizeNumbers(m).(map[string]any))
	}
	return out, nil
}

// unreadFS is kustomize's in-memory file system, whose unread files (by
// absolute path) cannot be read: reading one is an UnreadError, kept in
// read for the build's error, as kustomize words what it wraps its own way.
type unreadFS struct {
	filesys.FileSystem
	unread map[string]UnreadFile
	read   error
}

func (f *unreadFS) refuse(p string) error {
	u, ok := f.unread[path.Clean(p)]
	if !ok {
		return nil
	}
	err := u.err(strings.TrimPrefix(path.Clean(p), "/"))
	if f.read == nil {
		f.read = err
	}
	return err
}

// ReadFile reads a staged file, or refuses an unread one.
func (f *unreadFS) ReadFile(p string) ([]byte, error) {
	if err := f.refuse(p); err != nil {
		return nil, err
	}
	return f.FileSystem.ReadFile(p)
}

// Open opens a staged file, or refuses an unread one.
func (f *unreadFS) Open(p string) (filesys.File, error) {
	if err := f.refuse(p); err != nil {
		return nil, err
	}
	return f.FileSystem.Open(p)
}
