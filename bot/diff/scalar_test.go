package diff

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestSchemaScalar: a difference's path is typed by the kind's schema alone,
// the compiled-in type of a built-in kind or the CRD's OpenAPI schema, never
// by the value: outputs show another writer's value only at an integer,
// number or boolean path (drift.LiveShown).
func TestSchemaScalar(t *testing.T) {
	crd := drift.Object{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "names": map[string]any{"kind": "Widget"},
			"versions": []any{map[string]any{"name": "v1", "schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object",
				"properties": map[string]any{"spec": map[string]any{"type": "object", "properties": map[string]any{
					"size":    map[string]any{"type": "integer"},
					"ratio":   map[string]any{"type": "number"},
					"enabled": map[string]any{"type": "boolean"},
					"pin":     map[string]any{"type": "string"},
					"port":    map[string]any{"x-kubernetes-int-or-string": true, "anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}},
					"limits":  map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "integer"}},
					"steps":   map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"weight": map[string]any{"type": "integer"}}}},
				}}},
			}}}},
		},
	}
	obj := func(apiVersion, kind string, body map[string]any) drift.Object {
		o := drift.Object{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x", "namespace": "ns"}}
		for k, v := range body {
			o[k] = v
		}
		return o
	}
	dep := obj("apps/v1", "Deployment", nil)
	cm := obj("v1", "ConfigMap", nil)
	svc := obj("v1", "Service", nil)
	widget := obj("example.com/v1", "Widget", nil)
	s := &drift.Snapshot{Resources: []drift.Resource{{Live: dep}, {Live: cm}, {Live: svc}, {Live: widget}}, Cluster: []drift.Object{crd}}
	rows := []struct {
		idx  int
		path string
		want bool
	}{
		{0, "/spec/replicas", true},
		{0, "/spec/paused", true},
		{0, "/spec/template/spec/containers/0/ports/0/containerPort", true},
		{0, "/spec/template/spec/containers/0/securityContext/privileged", true},
		{0, "/spec/template/spec/containers/0/image", false},
		{0, "/spec/template/spec/containers/0/resources/limits/cpu", false}, // a quantity encodes as a string
		{0, "/spec/template/metadata/labels/app", false},
		{0, "/spec/strategy/rollingUpdate/maxSurge", false}, // int-or-string
		{0, "/spec/nope", false},
		{0, "/metadata/generation", true},
		{0, "/metadata/annotations/n", false},
		{1, "/data/replicas", false},
		{2, "/spec/ports/0/port", true},
		{2, "/spec/ports/0/targetPort", false},
		{2, "/spec/clusterIP", false},
		{3, "/spec/size", true},
		{3, "/spec/ratio", true},
		{3, "/spec/enabled", true},
		{3, "/spec/pin", false},
		{3, "/spec/port", false},
		{3, "/spec/limits/cpu", true},
		{3, "/spec/steps/2/weight", true},
		{3, "/spec/unknown", false},
		{3, "/metadata/generation", true},
		{3, "/metadata/labels/a", false},
	}
	cmp := &drift.Comparison{}
	for _, r := range rows {
		cmp.Diffs = append(cmp.Diffs, drift.Difference{Index: r.idx, Path: drift.MustPointer(r.path)})
	}
	markSchemaScalars(cmp, s)
	for i, r := range rows {
		if got := cmp.Diffs[i].SchemaScalar; got != r.want {
			t.Errorf("%s %s: SchemaScalar = %v, want %v", drift.Str(s.Resources[r.idx].Live, "kind"), r.path, got, r.want)
		}
	}

	// Without its CRD in the snapshot, a custom resource's path is not typed.
	cmp = &drift.Comparison{Diffs: []drift.Difference{{Index: 0, Path: drift.MustPointer("/spec/size")}}}
	markSchemaScalars(cmp, &drift.Snapshot{Resources: []drift.Resource{{Live: widget}}})
	if cmp.Diffs[0].SchemaScalar {
		t.Error("a custom resource without its CRD: SchemaScalar = true, want false")
	}
}
