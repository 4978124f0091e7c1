package diff

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/driftfix/driftfix/bot/drift"
)

var (
	knownOnce  sync.Once
	knownNames map[string]reflect.Type
)

// knownType resolves a knownTypeFields type name as Argo CD 3.6 does:
// core/Quantity, meta/v1/Duration, and core/v1/<Name> for the named types of
// Kubernetes' core/v1 API (found by walking the fields of its kinds).
func knownType(name string) (reflect.Type, bool) {
	knownOnce.Do(func() {
		knownNames = map[string]reflect.Type{
			"core/Quantity":    reflect.TypeOf(resource.Quantity{}),
			"meta/v1/Duration": reflect.TypeOf(metav1.Duration{}),
		}
		pkg := reflect.TypeOf(corev1.Pod{}).PkgPath()
		seen := map[reflect.Type]bool{}
		var visit func(t reflect.Type)
		visit = func(t reflect.Type) {
			for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || (t.Kind() == reflect.Map && t.Name() == "") {
				t = t.Elem()
			}
			if seen[t] {
				return
			}
			seen[t] = true
			if t.PkgPath() == pkg && t.Name() != "" {
				knownNames["core/v1/"+t.Name()] = t
			}
			switch t.Kind() {
			case reflect.Struct:
				for i := 0; i < t.NumField(); i++ {
					visit(t.Field(i).Type)
				}
			case reflect.Map:
				visit(t.Elem())
			}
		}
		for gvk, t := range builtins().types {
			if gvk.Group == "" && gvk.Version == "v1" {
				visit(t)
			}
		}
	})
	t, ok := knownNames[name]
	return t, ok
}

// knownFields returns the knownTypeFields that apply to a custom resource:
// argocd-cm's, and Argo CD's built-in typing of an Argo Rollout's pod spec
// where argocd-cm names none for Rollouts.
func knownFields(s drift.Settings, group, kind string) []drift.KnownTypeField {
	if f := s.KnownTypeFields[group+"/"+kind]; len(f) > 0 {
		return f
	}
	if group == "argoproj.io" && kind == "Rollout" {
		return []drift.KnownTypeField{{Field: "spec.template.spec", Type: "core/v1/PodSpec"}}
	}
	return nil
}

// applyKnownTypes returns a copy of o whose known-type fields are re-encoded
// through their Go types, as Argo CD's known-types normalizer does before it
// compares: every item of a list on the way is re-encoded, a field that does
// not decode is left as it is.
func applyKnownTypes(o map[string]any, fields []drift.KnownTypeField) map[string]any {
	if o == nil || len(fields) == 0 {
		return o
	}
	c := drift.DeepCopy(o).(map[string]any)
	for _, f := range fields {
		t, ok := knownType(f.Type)
		if !ok {
			continue // Argo CD warns and skips a type it does not support
		}
		reencodeAt(c, strings.Split(f.Field, "."), t)
	}
	return c
}

func reencodeAt(obj map[string]any, path []string, t reflect.Type) {
	cur := obj
	for i, tok := range path {
		v, ok := cur[tok]
		if !ok {
			return
		}
		if i == len(path)-1 {
			if items, ok := v.([]any); ok {
				for j, it := range items {
					if _, ok := it.(map[string]any); ok {
						if nv, ok := reencode(it, t); ok {
							items[j] = nv
						}
					}
				}
				return
			}
			if nv, ok := reencode(v, t); ok {
				cur[tok] = nv
			}
			return
		}
		switch x := v.(type) {
		case map[string]any:
			cur = x
		case []any:
			for _, it := range x {
				if m, ok := it.(map[string]any); ok {
					reencodeAt(m, path[i+1:], t)
				}
			}
			return
		default:
			return
		}
	}
}

func reencode(v any, t reflect.Type) (any, bool) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	p := reflect.New(t)
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return nil, false
	}
	raw, err = json.Marshal(p.Interface())
	if err != nil {
		return nil, false
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, false
	}
	return drift.NormalizeNumbers(out), true
}
