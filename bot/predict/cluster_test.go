package predict

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

func TestParseCluster(t *testing.T) {
	obj := "{apiVersion: v1, kind: Namespace, metadata: {name: shop}}"
	for _, tc := range []struct{ name, in string }{
		{"a list", "- " + obj + "\n- {apiVersion: v1, kind: Namespace, metadata: {name: data}}\n"},
		{"a stream", obj + "\n---\n{apiVersion: v1, kind: Namespace, metadata: {name: data}}\n"},
		{"a List", "apiVersion: v1\nkind: List\nitems:\n- " + obj + "\n- {apiVersion: v1, kind: Namespace, metadata: {name: data}}\n"},
		{"a snapshot's cluster", "apiVersion: driftfix/v1\ncluster:\n- " + obj + "\n- {apiVersion: v1, kind: Namespace, metadata: {name: data}}\n"},
		{"a snapshot", "apiVersion: driftfix/v1\nkind: Snapshot\napplication: {}\nresources: []\ncluster:\n- " + obj + "\n- {apiVersion: v1, kind: Namespace, metadata: {name: data}}\n"},
		{"JSON", `[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}},{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"data","labels":{"n":"1"}}}]`},
	} {
		objs, err := ParseCluster([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(objs) != 2 || drift.Str(objs[0], "metadata", "name") != "shop" || drift.Str(objs[1], "metadata", "name") != "data" {
			t.Errorf("%s: got %v", tc.name, objs)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"- {kind: Namespace, metadata: {name: x}}\n", "line 1: object 0 has no apiVersion"},
		{"- " + obj + "\n- {apiVersion: v1, kind: Namespace}\n", "line 2: object 1 has no metadata.name"},
		{"- 3\n", "line 1: object 0 is not a mapping"},
		{"cluster: {a: b}\n", "line 1: cluster: must be a list of objects"},
		{"kind: List\n", "line 1: a List needs items"},
		{"just words\n", "expected a list of objects, got a scalar"},
		{"- [\n", "not valid YAML or JSON"},
		{"- &a " + obj + "\n- *a\n", "object 1 is an alias"},
	} {
		_, err := ParseCluster([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCluster(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
	if _, err := ParseCluster([]byte(strings.Repeat(" ", MaxClusterBytes+1))); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("an oversized file: %v", err)
	}
}

// FuzzParseCluster: any input is read or refused with an error, never a
// panic, and what is read is objects with apiVersion, kind and a name, which
// predict can take as its cluster context.
func FuzzParseCluster(f *testing.F) {
	f.Add([]byte("- {apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {a: b}}}\n"))
	f.Add([]byte(labelTracking + sidecarWebhook))
	f.Add([]byte("kind: List\nitems: []\n"))
	f.Add([]byte("cluster:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: argocd-cm}, data: {x: 1}}\n"))
	f.Add([]byte(`[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}]`))
	f.Add([]byte("- &a {apiVersion: v1, kind: A, metadata: {name: a, x: *a}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := ParseCluster(data)
		if err != nil {
			return
		}
		for _, o := range objs {
			if drift.Str(o, "apiVersion") == "" || drift.Str(o, "kind") == "" || drift.Str(o, "metadata", "name") == "" {
				t.Fatalf("read an object without apiVersion, kind or name: %v", o)
			}
		}
		app := map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": map[string]any{"name": "a"},
			"spec": map[string]any{"destination": map[string]any{"namespace": "shop"}}}
		target := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": int64(2)}}
		_, _ = Predict(Input{Application: app, Targets: []drift.Object{target}, Cluster: objs})
	})
}
