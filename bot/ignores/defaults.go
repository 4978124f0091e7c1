package ignores

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

//go:embed argocd-defaults.yaml
var defaultsYAML []byte

// DefaultRule is a rule Argo CD ships in its own argocd-cm: its data key,
// the paths it names and the file it was read from.
type DefaultRule struct {
	Key               string   `yaml:"key"`
	JSONPointers      []string `yaml:"jsonPointers"`
	JQPathExpressions []string `yaml:"jqPathExpressions"`
	Source            string   `yaml:"source"`
}

var argocdDefaults = mustDefaults(defaultsYAML)

// ArgoCDDefaults returns the rules Argo CD ships in argocd-cm, as the
// table argocd-defaults.yaml lists them.
func ArgoCDDefaults() []DefaultRule { return slices.Clone(argocdDefaults) }

func mustDefaults(b []byte) []DefaultRule {
	d, err := readDefaults(b)
	if err != nil {
		panic(fmt.Sprintf("bot/ignores/argocd-defaults.yaml: %v", err))
	}
	return d
}

// readDefaults reads the table strictly: every entry names a
// resource.customizations key, at least one path and its source, once.
func readDefaults(b []byte) ([]DefaultRule, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var out []DefaultRule
	if err := dec.Decode(&out); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	seen := map[string]bool{}
	for i, d := range out {
		switch {
		case !strings.HasPrefix(d.Key, "resource.customizations.ignoreResourceUpdates.") && !strings.HasPrefix(d.Key, "resource.customizations.ignoreDifferences."):
			return nil, fmt.Errorf("entry %d: key %q is not a resource.customizations ignore key", i+1, d.Key)
		case len(d.JSONPointers)+len(d.JQPathExpressions) == 0:
			return nil, fmt.Errorf("entry %d (%s): names no path", i+1, d.Key)
		case !strings.HasPrefix(d.Source, "https://"):
			return nil, fmt.Errorf("entry %d (%s): no source URL", i+1, d.Key)
		case seen[d.Key]:
			return nil, fmt.Errorf("entry %d: key %s listed twice", i+1, d.Key)
		}
		seen[d.Key] = true
	}
	return out, nil
}

// shippedDefault returns the source of the Argo CD default a rule is, or
// "" when it is not one: a rule of argocd-cm under the same key naming
// exactly the same paths (in any order) and no managers. A default someone
// changed is theirs.
func shippedDefault(r *drift.IgnoreRule) string {
	if r.Holder.Kind != "ConfigMap" || r.Holder.Name != "argocd-cm" || len(r.Path) != 2 || r.Path[0] != "data" || len(r.ManagedFieldsManagers) > 0 {
		return ""
	}
	for _, d := range argocdDefaults {
		if d.Key == r.Path[1] && sameSet(d.JSONPointers, r.JSONPointers) && sameSet(d.JQPathExpressions, r.JQPathExpressions) {
			return d.Source
		}
	}
	return ""
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}
