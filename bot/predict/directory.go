package predict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// directory reads a plain-directory source: every YAML or JSON manifest in
// the path (below it too with directory.recurse), as Argo CD does.
func directory(app drift.Object, src drift.Source, files map[string]string) ([]drift.Object, error) {
	recurse := false
	for _, s := range append([]any{drift.Map(app, "spec", "source")}, drift.List(app, "spec", "sources")...) {
		if strings.Trim(drift.Str(s, "path"), "/") == src.Path {
			recurse, _ = drift.Lookup(s, "directory", "recurse").(bool)
		}
	}
	var names []string
	for f := range files {
		if !(strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") || strings.HasSuffix(f, ".json")) || !inDir(f, src.Path) {
			continue
		}
		rel := strings.TrimPrefix(f, strings.TrimSuffix(src.Path, "/")+"/")
		if src.Path == "" {
			rel = f
		}
		if !recurse && strings.Contains(rel, "/") {
			continue
		}
		names = append(names, f)
	}
	sort.Strings(names)
	var out []drift.Object
	for _, f := range names {
		docs, err := yamledit.Documents([]byte(files[f]))
		if err != nil {
			return nil, fmt.Errorf("%s: not a manifest Argo CD can read: %w", f, err)
		}
		for _, d := range docs {
			m, _ := d.(map[string]any)
			if m == nil || drift.Str(m, "kind") == "" {
				continue
			}
			if isApplication(m) {
				continue // an app-of-apps' child is its own application
			}
			// numbers as the engine reads them (int64), as a render gives them
			out = append(out, drift.NormalizeNumbers(m).(map[string]any))
		}
	}
	return out, nil
}
