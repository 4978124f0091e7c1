package oracle

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/ignores"
)

// TestArgoCDOracleDefaultRules compares driftfix's table of the rules Argo CD
// ships in argocd-cm (bot/ignores/argocd-defaults.yaml, which keeps them
// from ever being proposed for removal) with the argocd-cm.yaml of the Argo
// CD release this module builds, read by Argo CD's own settings manager:
// every shipped ignore rule is in the table with exactly its paths, and the
// table holds nothing the release does not ship.
func TestArgoCDOracleDefaultRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v3").Output()
	if err != nil {
		t.Fatalf("locate the Argo CD module: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "manifests", "base", "config", "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatalf("read Argo CD's argocd-cm.yaml: %v", err)
	}
	cm.Namespace = "argocd"
	st, err := loadSettings(&cm)
	if err != nil {
		t.Fatal(err)
	}
	shipped := map[string][2][]string{}
	for gk, o := range st.overrides {
		for name, rule := range map[string]struct{ ptrs, jq []string }{
			"ignoreResourceUpdates": {o.IgnoreResourceUpdates.JSONPointers, o.IgnoreResourceUpdates.JQPathExpressions},
			"ignoreDifferences":     {o.IgnoreDifferences.JSONPointers, o.IgnoreDifferences.JQPathExpressions},
		} {
			if len(rule.ptrs)+len(rule.jq) == 0 || (name == "ignoreDifferences" && slices.Equal(rule.ptrs, []string{"/status"})) {
				continue // the /status rule Argo CD adds itself for ignoreResourceStatusField, not a shipped key
			}
			shipped[name+" "+gk] = [2][]string{rule.ptrs, rule.jq}
		}
	}
	table := map[string][2][]string{}
	for _, d := range ignores.ArgoCDDefaults() {
		rest := strings.TrimPrefix(d.Key, "resource.customizations.")
		name, gk, _ := strings.Cut(rest, ".")
		if gk == "all" {
			gk = "*/*"
		} else {
			gk = strings.Replace(gk, "_", "/", 1)
		}
		table[name+" "+gk] = [2][]string{d.JSONPointers, d.JQPathExpressions}
	}
	for k, want := range shipped {
		got, ok := table[k]
		if !ok {
			t.Errorf("Argo CD ships %s (%v), missing from bot/ignores/argocd-defaults.yaml", k, want)
			continue
		}
		if !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
			t.Errorf("%s: table says %v, Argo CD ships %v", k, got, want)
		}
	}
	for k := range table {
		if _, ok := shipped[k]; !ok {
			t.Errorf("bot/ignores/argocd-defaults.yaml lists %s, which this Argo CD release does not ship", k)
		}
	}
	if len(shipped) == 0 {
		t.Fatal("read no shipped rule from Argo CD's argocd-cm.yaml")
	}
}
