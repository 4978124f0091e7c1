package render

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
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
// runs in a render process of its own, like Helm.
func KustomizeWithLimits(files map[string][]byte, dir string, lim Limits) ([]drift.Object, error) {
	lim = lim.withDefaults()
	what := "kustomize build " + dir
	if err := checkStaged(files, what, lim); err != nil {
		return nil, err
	}
	return inChild(what, childRequest{Kind: "kustomize", Files: files, Dir: dir, Limits: lim})
}

// kustomizeChecked checks and builds in this process: the body of
// KustomizeWithLimits, run in a render process.
func kustomizeChecked(files map[string][]byte, dir string, lim Limits) ([]drift.Object, error) {
	what := "kustomize build " + dir
	if err := checkKustomizeLocal(files, dir); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return withTimeout(lim.Timeout, what, func() ([]drift.Object, error) {
		return kustomize(files, dir, lim)
	})
}

func kustomize(files map[string][]byte, dir string, lim Limits) ([]drift.Object, error) {
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
	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig = types.DisabledPluginConfig()
	k := krusty.MakeKustomizer(opts)
	rm, err := k.Run(fs, "/"+strings.Trim(dir, "/"))
	if err != nil {
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
