package diff

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// FuzzAnnotationRules: whatever a resource's ignore-differences annotation
// holds, reading it never fails the comparison, and every rule it gives names
// that resource alone, holds at least one pointer and is attributed to the
// annotation.
func FuzzAnnotationRules(f *testing.F) {
	for _, seed := range []string{
		"jsonPointers:\n- /spec/replicas\n",
		"jsonPointers: [/data/a, /data/b]",
		"jsonPointers: /data/a",
		"jqPathExpressions: [.spec]",
		"{}",
		"- /spec",
		"jsonPointers: [1, {a: b}]",
		"jsonPointers: [\"\"]\nextra: true",
		"\x00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		target := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "api", "namespace": "shop", "annotations": map[string]any{drift.AnnotationIgnoreDifferences: value}},
			"spec":     map[string]any{"replicas": int64(2)}}
		live := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "api", "namespace": "shop"},
			"spec":     map[string]any{"replicas": int64(5)}}
		s := &drift.Snapshot{Application: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": map[string]any{"name": "shop"}},
			Resources: []drift.Resource{{Target: target, Live: live}}}
		rules := annotationRules(s)
		if len(rules) > 1 {
			t.Fatalf("one annotation gave %d rules", len(rules))
		}
		for _, r := range rules {
			want := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "api"}
			if !r.Annotation || r.Holder != want || r.Group != "apps" || r.Kind != "Deployment" || r.Name != "api" || r.Namespace != "shop" || len(r.JSONPointers) == 0 {
				t.Fatalf("annotation %q gave rule %+v", value, r)
			}
		}
		if _, _, err := Compare(s); err != nil {
			t.Fatalf("annotation %q fails the comparison: %v", value, err)
		}
	})
}
