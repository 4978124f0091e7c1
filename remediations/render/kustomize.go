package render

import (
	"fmt"
	"path"
	"strings"

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
	if err := checkStaged(files, what, lim); err != nil {
		return nil, err
	}
	return inChild(what, childRequest{Kind: "kustomize", Files: files, Dir: dir, BuildOptions: opts.BuildOptions, Limits: lim})
}

// kustomizeChecked checks and builds in this process: the body of
// KustomizeWithOptions, run in a render process.
func kustomizeChecked(files map[string][]byte, dir, buildOptions string, lim Limits) ([]drift.Object, error) {
	what := "kustomize build " + dir
	b, err := parseBuildOptions(buildOptions)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := checkKustomizeLocal(files, dir); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return withTimeout(lim.Timeout, what, func() ([]drift.Object, error) {
		return kustomize(files, dir, b, lim)
	})
}

func kustomize(files map[string][]byte, dir string, b kustomizeBuild, lim Limits) ([]drift.Object, error) {
	fs := filesys.MakeFsInMemory()
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
