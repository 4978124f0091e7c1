package render

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestHelmRepeatedKeysLastWins: a template that renders a key twice in one
// mapping (a common label also set per resource, as kube-state-metrics'
// chart does) is read as Argo CD reads it, the last value kept, not
// refused; anything else YAML refuses still is.
func TestHelmRepeatedKeysLastWins(t *testing.T) {
	chart := func(tmpl string) map[string][]byte {
		return map[string][]byte{
			"c/Chart.yaml":            []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n"),
			"c/templates/deploy.yaml": []byte(tmpl),
		}
	}
	objs, err := Helm(chart("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels:\n    app.kubernetes.io/part-of: a\n    tier: web\n    app.kubernetes.io/part-of: b\nspec:\n  replicas: 1\n  replicas: 2\n"), HelmOptions{ChartDir: "c", ReleaseName: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || drift.Str(objs[0], "metadata", "labels", "app.kubernetes.io/part-of") != "b" || drift.Str(objs[0], "metadata", "labels", "tier") != "web" ||
		drift.Lookup(objs[0], "spec", "replicas") != int64(2) {
		t.Errorf("rendered %v, want the last of each repeated key", objs)
	}
	if _, err := Helm(chart("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n"), HelmOptions{ChartDir: "c", ReleaseName: "r"}); err == nil || !strings.Contains(err.Error(), "deploy.yaml") {
		t.Errorf("malformed render: %v, want an error naming the template", err)
	}
}
