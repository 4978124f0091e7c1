package diff

import (
	"github.com/driftfix/driftfix/bot/drift"
)

// RuleCovers returns the paths an ignore rule removes from a resource, as Argo
// CD applies it: its jsonPointers, the paths its jqPathExpressions select in
// the desired and the live object, and every field its managedFieldsManagers
// own in the live object. Ignore rules are judged by what these paths hold.
func RuleCovers(r *drift.IgnoreRule, res *drift.Resource) []drift.Pointer {
	var out []drift.Pointer
	seen := map[string]bool{}
	add := func(p drift.Pointer) {
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	for _, s := range r.JSONPointers {
		if p, err := drift.ParsePointer(s); err == nil {
			add(p)
		}
	}
	for _, expr := range r.JQPathExpressions {
		for _, doc := range []drift.Object{res.Target, res.Live} {
			if doc == nil {
				continue
			}
			ps, _ := JQPaths(expr, doc)
			for _, p := range ps {
				add(p)
			}
		}
	}
	for _, p := range ManagerPaths(res.Live, r.ManagedFieldsManagers) {
		add(p)
	}
	return out
}

// ManagerPaths returns the fields (leaves of the live object) that the given
// field managers own in metadata.managedFields, read with the FieldsV1 parser.
func ManagerPaths(live drift.Object, managers []string) []drift.Pointer {
	if live == nil || len(managers) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, m := range managers {
		want[m] = true
	}
	var sets []*FieldSet
	for _, e := range drift.List(live, "metadata", "managedFields") {
		m := drift.Map(e)
		if !want[drift.Str(m, "manager")] {
			continue
		}
		if set, err := ParseFieldsV1(m["fieldsV1"]); err == nil {
			sets = append(sets, set)
		}
	}
	var out []drift.Pointer
	var walk func(p drift.Pointer, v any, depth int)
	walk = func(p drift.Pointer, v any, depth int) {
		if depth > 100 || p.String() == "/metadata/managedFields" {
			return
		}
		owned := false
		for _, s := range sets {
			owned = owned || s.Owns(live, p)
		}
		if !owned {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if len(x) > 0 {
				for _, k := range drift.SortedKeys(x) {
					walk(p.Child(k), x[k], depth+1)
				}
				return
			}
		case []any:
			if len(x) > 0 {
				for i, e := range x {
					walk(p.Index(i), e, depth+1)
				}
				return
			}
		}
		if len(p) > 0 {
			out = append(out, append(drift.Pointer{}, p...))
		}
	}
	if len(sets) > 0 {
		walk(drift.Pointer{}, live, 0)
	}
	return out
}

// CoverManagedFields adds to each managedFieldsManagers rule the fields its
// managers own in each resource it applies to, so that classifiers judge the
// rule by them (Compare resolves only pointers and jq expressions).
func CoverManagedFields(s *drift.Snapshot, cmp *drift.Comparison) {
	for ri := range cmp.Rules {
		r := &cmp.Rules[ri]
		if len(r.ManagedFieldsManagers) == 0 {
			continue
		}
		for ci := range r.Covered {
			cov := &r.Covered[ci]
			have := map[string]bool{}
			for _, p := range cov.Paths {
				have[p.String()] = true
			}
			for _, p := range ManagerPaths(s.Resources[cov.Index].Live, r.ManagedFieldsManagers) {
				if !have[p.String()] {
					cov.Paths = append(cov.Paths, p)
				}
			}
		}
	}
}
