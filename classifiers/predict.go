package classifiers

import (
	"github.com/driftfix/driftfix/bot/drift"
)

// This file exports, for `driftfix predict` (bot/predict), the parts of the
// classifiers' knowledge that predict a difference before any live object
// exists: which mutating webhooks will admit an object, and what the API
// server stores for a custom resource its CRD defaults and prunes.

// Admission is one mutating webhook that admits an object, as the API
// server's own matchers decide it (see matchingWebhooks).
type Admission struct {
	Config, Webhook string
	Evidence        []drift.Evidence
}

// Admitting returns the mutating webhooks of the input's cluster context that
// admit the resource on create or update, in the order they are collected.
// res must be one of in.Snapshot.Resources.
func (in *Input) Admitting(res *drift.Resource) []Admission {
	var out []Admission
	for _, m := range in.matchingWebhooks(res.Ref(), res) {
		out = append(out, Admission{Config: m.config, Webhook: m.webhook, Evidence: append([]drift.Evidence(nil), m.evidence...)})
	}
	return out
}

// StoredCustomResource returns a copy of a custom resource as the API server
// stores it under its CRD: the served version's structural schema prunes the
// fields it does not declare (unless x-kubernetes-preserve-unknown-fields or
// additionalProperties keeps them) and fills its defaults. ok is false when
// the CRD has no schema for the object's version; obj is then returned as is.
// apiVersion, kind and metadata are never pruned.
func StoredCustomResource(crd, obj drift.Object) (drift.Object, bool) {
	_, version := drift.SplitAPIVersion(drift.Str(obj, "apiVersion"))
	ver, _ := crdVersion(crd, version)
	schema := drift.Map(ver, "schema", "openAPIV3Schema")
	if schema == nil {
		return obj, false
	}
	out, _ := drift.DeepCopy(obj).(map[string]any)
	if out == nil {
		return obj, false
	}
	props := drift.Map(schema, "properties")
	for k, v := range out {
		switch k {
		case "apiVersion", "kind", "metadata":
			continue
		}
		ps, declared := props[k].(map[string]any)
		if !declared {
			if b, _ := schema["x-kubernetes-preserve-unknown-fields"].(bool); !b {
				delete(out, k)
			}
			continue
		}
		out[k] = prune(ps, v, 0)
	}
	d, _ := withDefaults(schema, out, 0).(map[string]any)
	if d == nil {
		return out, true
	}
	return d, true
}

// prune drops what a structural schema does not declare below one field.
func prune(schema map[string]any, v any, depth int) any {
	if schema == nil || depth > 64 {
		return v
	}
	if b, _ := schema["x-kubernetes-preserve-unknown-fields"].(bool); b {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		props := drift.Map(schema, "properties")
		ap := schema["additionalProperties"]
		if props == nil && ap == nil {
			if t := drift.Str(schema, "type"); t != "object" {
				return v // no structure declared below: kept as written
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if ps, ok := props[k].(map[string]any); ok {
				out[k] = prune(ps, e, depth+1)
				continue
			}
			switch a := ap.(type) {
			case map[string]any:
				out[k] = prune(a, e, depth+1)
			case bool:
				if a {
					out[k] = e
				}
			}
		}
		return out
	case []any:
		items := drift.Map(schema, "items")
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = prune(items, e, depth+1)
		}
		return out
	}
	return v
}
