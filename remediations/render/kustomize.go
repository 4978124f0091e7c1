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
// as `kustomize build` does with Argo CD's defaults (no plugins, no remote bases).
func Kustomize(files map[string][]byte, dir string) ([]drift.Object, error) {
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
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
		}
		out = append(out, drift.NormalizeNumbers(m).(map[string]any))
	}
	return out, nil
}
