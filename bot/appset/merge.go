package appset

import "fmt"

// mergeTemplate is mergo.Merge(dst, src) over Argo CD's template type, dst
// a generator's own template and src the set's: a field dst leaves out is
// taken from src, and one it leaves empty ("", false, 0, an empty list) is
// when src's is not; maps and objects merge key by key; lists and
// helm.valuesObject (raw bytes in Argo CD's type) are taken whole. A zero
// value written out and one left out read the same in Argo CD's type.
func mergeTemplate(dst, src map[string]any) map[string]any {
	out := copyParams(dst)
	if out == nil {
		out = map[string]any{}
	}
	mergeFill(out, src, "")
	return out
}

func mergeFill(dst, src map[string]any, path string) {
	for k, sv := range src {
		if sv == nil {
			continue
		}
		p := path + "." + k
		dv := dst[k]
		if dv == nil {
			dst[k] = copyParam(sv)
			continue
		}
		dm, dIsMap := dv.(map[string]any)
		sm, sIsMap := sv.(map[string]any)
		if dIsMap && sIsMap && p != ".spec.source.helm.valuesObject" {
			mergeFill(dm, sm, p)
			continue
		}
		if isEmpty(dv) && !isEmpty(sv) {
			dst[k] = copyParam(sv)
		}
	}
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case int:
		return x == 0
	case int64:
		return x == 0
	case float64:
		return x == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// mergeOverride is mergo.Merge(&dst, src, mergo.WithOverride) over
// parameter maps, as Argo CD's matrix and merge generators use it with
// goTemplate: a null in src sets null; a map merges into a non-empty map in
// dst, in place; anything else replaces.
func mergeOverride(dst map[string]any, src map[string]any) error {
	for k, sv := range src {
		if sv == nil {
			dst[k] = nil
			continue
		}
		dv := dst[k]
		if isParamMap(sv) && isParamMap(dv) && !isNilMap(dv) {
			if err := mergeInto(dv, sv); err != nil {
				return err
			}
			if paramLen(dv) > 0 {
				continue
			}
		}
		dst[k] = sv
	}
	return nil
}

func isParamMap(v any) bool {
	switch v.(type) {
	case map[string]any, map[string]string:
		return true
	}
	return false
}

func isNilMap(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return x == nil
	case map[string]string:
		return x == nil
	}
	return true
}

func paramLen(v any) int {
	switch x := v.(type) {
	case map[string]any:
		return len(x)
	case map[string]string:
		return len(x)
	}
	return 0
}

// mergeInto merges src into the map dst in place, as mergo does for a map
// inside a map.
func mergeInto(dst, src any) error {
	switch d := dst.(type) {
	case map[string]any:
		switch s := src.(type) {
		case map[string]any:
			return mergeOverride(d, s)
		case map[string]string:
			for k, v := range s {
				d[k] = v
			}
		}
	case map[string]string:
		switch s := src.(type) {
		case map[string]string:
			for k, v := range s {
				d[k] = v
			}
		case map[string]any:
			for k := range s {
				return fmt.Errorf("parameter %s: a map of any values cannot merge into a map of strings (Argo CD's controller fails on it)", k)
			}
		}
	}
	return nil
}
