package classifiers

import (
	"strconv"

	"github.com/driftfix/driftfix/bot/drift"
)

// crdVersion returns the CRD's entry for one version, and the storage version's name.
func crdVersion(crd drift.Object, version string) (v map[string]any, storage string) {
	for _, e := range drift.List(crd, "spec", "versions") {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if st, _ := m["storage"].(bool); st {
			storage = drift.Str(m, "name")
		}
		if drift.Str(m, "name") == version {
			v = m
		}
	}
	return v, storage
}

// schemaAt walks an OpenAPI v3 schema along a JSON pointer. It reports the
// schema node at the path (nil when the path is not declared) and whether an
// ancestor preserves unknown fields.
func schemaAt(root map[string]any, p drift.Pointer) (node map[string]any, preserve bool) {
	cur := root
	for _, tok := range p {
		if cur == nil {
			return nil, preserve
		}
		if b, _ := cur["x-kubernetes-preserve-unknown-fields"].(bool); b {
			preserve = true
		}
		if props := drift.Map(cur, "properties"); props != nil {
			if next, ok := props[tok].(map[string]any); ok {
				cur = next
				continue
			}
		}
		if items := drift.Map(cur, "items"); items != nil {
			if _, err := strconv.Atoi(tok); err == nil {
				cur = items
				continue
			}
		}
		if ap, ok := cur["additionalProperties"].(map[string]any); ok {
			cur = ap
			continue
		}
		if ap, ok := cur["additionalProperties"].(bool); ok && ap {
			return map[string]any{}, preserve
		}
		return nil, preserve
	}
	if b, _ := cur["x-kubernetes-preserve-unknown-fields"].(bool); b {
		preserve = true
	}
	return cur, preserve
}

// withDefaults returns a copy of v with the schema's defaults filled in, as the
// API server does for a custom resource.
func withDefaults(schema map[string]any, v any, depth int) any {
	if schema == nil || depth > 64 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		props := drift.Map(schema, "properties")
		for k, ps := range props {
			psm, _ := ps.(map[string]any)
			if _, ok := out[k]; !ok {
				if def, ok := psm["default"]; ok {
					out[k] = def
				}
			}
		}
		for k, e := range out {
			if psm, ok := props[k].(map[string]any); ok {
				out[k] = withDefaults(psm, e, depth+1)
			} else if ap, ok := schema["additionalProperties"].(map[string]any); ok {
				out[k] = withDefaults(ap, e, depth+1)
			}
		}
		return out
	case []any:
		items := drift.Map(schema, "items")
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withDefaults(items, e, depth+1)
		}
		return out
	}
	return v
}
