package appset

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// applyPatch applies a rendered templatePatch (YAML, or JSON when it starts
// with {) to an Application as Argo CD does: a strategic merge patch over
// the Application type, which has no merge keys but metadata.finalizers (a
// set), so maps merge, null deletes, lists are replaced; spec.project keeps
// the template's value.
func applyPatch(app map[string]any, text string) (map[string]any, error) {
	js := text
	if t := strings.TrimSpace(text); t == "" || t[0] != '{' {
		b, err := yaml.YAMLToJSON([]byte(text))
		if err != nil {
			return nil, fmt.Errorf("templatePatch is not YAML: %w", err)
		}
		js = string(b)
	}
	var p any
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		return nil, fmt.Errorf("templatePatch is not valid JSON: %w", err)
	}
	if p == nil {
		return app, nil
	}
	pm, ok := p.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("templatePatch is a %s, not a map", kindOf(p))
	}
	if err := checkPatchShape(pm); err != nil {
		return nil, err
	}
	project, hadProject := lookup(app, "spec", "project")
	doc, err := jsonValue(app)
	if err != nil {
		return nil, err
	}
	out, err := smp(doc.(map[string]any), pm, "")
	if err != nil {
		return nil, err
	}
	spec, _ := out["spec"].(map[string]any)
	if hadProject {
		if spec == nil {
			spec = map[string]any{}
			out["spec"] = spec
		}
		spec["project"] = project
	} else if spec != nil {
		delete(spec, "project")
	}
	return out, nil
}

func lookup(m map[string]any, keys ...string) (any, bool) {
	var cur any = m
	for _, k := range keys {
		cm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = cm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// checkPatchShape refuses a patch Argo CD's Application type cannot read,
// as Argo CD checks it before applying: metadata and spec must be maps.
func checkPatchShape(p map[string]any) error {
	for _, k := range []string{"metadata", "spec", "status"} {
		if v, ok := p[k]; ok && v != nil {
			if _, ok := v.(map[string]any); !ok {
				return fmt.Errorf("templatePatch's %s is a %s, not a map", k, kindOf(v))
			}
		}
	}
	if md, ok := p["metadata"].(map[string]any); ok {
		for _, k := range []string{"name", "namespace"} {
			if v, ok := md[k]; ok && v != nil {
				if _, ok := v.(string); !ok {
					return fmt.Errorf("templatePatch's metadata.%s is a %s, not a string", k, kindOf(v))
				}
			}
		}
		for _, k := range []string{"labels", "annotations"} {
			if _, err := stringMap(md[k], "templatePatch's metadata."+k); err != nil {
				return err
			}
		}
		if _, err := stringList(md["finalizers"], "templatePatch's metadata.finalizers"); err != nil {
			return err
		}
	}
	return nil
}

// smp merges patch into doc: maps key by key, null deletes, $patch: replace
// or delete on a map, lists replaced except metadata.finalizers, a set.
func smp(doc, patch map[string]any, path string) (map[string]any, error) {
	if d, ok := patch["$patch"]; ok {
		switch d {
		case "replace":
			out := map[string]any{}
			for k, v := range patch {
				if k != "$patch" && v != nil {
					out[k] = v
				}
			}
			return out, nil
		case "delete":
			return nil, nil
		case "merge":
		default:
			return nil, fmt.Errorf("templatePatch: $patch %v at %s is not replace, delete or merge", d, path)
		}
	}
	if doc == nil {
		doc = map[string]any{}
	}
	for k, pv := range patch {
		if k == "$patch" || strings.HasPrefix(k, "$setElementOrder/") || strings.HasPrefix(k, "$retainKeys") {
			continue
		}
		if strings.HasPrefix(k, "$deleteFromPrimitiveList/") {
			field := strings.TrimPrefix(k, "$deleteFromPrimitiveList/")
			del, _ := pv.([]any)
			if l, ok := doc[field].([]any); ok {
				var kept []any
				for _, e := range l {
					if !containsAny(del, e) {
						kept = append(kept, e)
					}
				}
				doc[field] = kept
			}
			continue
		}
		p := path + "." + k
		if pv == nil {
			delete(doc, k)
			continue
		}
		if pm, ok := pv.(map[string]any); ok {
			dm, _ := doc[k].(map[string]any)
			m, err := smp(dm, pm, p)
			if err != nil {
				return nil, err
			}
			if m == nil {
				delete(doc, k)
			} else {
				doc[k] = m
			}
			continue
		}
		if pl, ok := pv.([]any); ok && p == ".metadata.finalizers" {
			dl, _ := doc[k].([]any)
			doc[k] = mergeSet(dl, pl)
			continue
		}
		doc[k] = pv
	}
	return doc, nil
}

// mergeSet merges a patch's list of scalars into the original's as a
// strategic merge patch does: the patch's items in its order, the
// original's other items placed before the first patch item that follows
// them in the original.
func mergeSet(original, patch []any) []any {
	var right, left []any
	for _, e := range patch {
		if !containsAny(right, e) {
			right = append(right, e)
		}
	}
	for _, e := range original {
		if !containsAny(right, e) && !containsAny(left, e) {
			left = append(left, e)
		}
	}
	index := func(v any) int {
		for i, e := range original {
			if e == v {
				return i
			}
		}
		return -1
	}
	out := make([]any, 0, len(left)+len(right))
	i, j := 0, 0
	for len(out) < len(left)+len(right) {
		switch {
		case i >= len(left):
			out, j = append(out, right[j]), j+1
		case j >= len(right):
			out, i = append(out, left[i]), i+1
		default:
			li, ri := index(left[i]), index(right[j])
			if li >= 0 && ri >= 0 && li < ri {
				out, i = append(out, left[i]), i+1
			} else {
				out, j = append(out, right[j]), j+1
			}
		}
	}
	return out
}

func containsAny(l []any, v any) bool {
	for _, e := range l {
		if e == v {
			return true
		}
	}
	return false
}
