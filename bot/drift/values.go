package drift

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Equal reports whether two decoded JSON values are equal, treating numbers by
// value (2 equals 2.0) as JSON does.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	if xf, ok := Number(a); ok {
		yf, ok := Number(b)
		return ok && xf == yf
	}
	return false
}

// Number returns a numeric value as float64.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case int32:
		return float64(n), true
	}
	return 0, false
}

// IsEmpty reports whether v is null, an empty map, an empty list or an empty string.
func IsEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	}
	return false
}

// ParseQuantity parses a Kubernetes resource quantity ("500m", "1.5Gi", "1e3", 2)
// into an exact rational number. Strings are read by apimachinery's own
// parser, so a value means what the API server stores: precision below a
// nano rounds up, values beyond its range clamp, and what it refuses is no
// quantity.
func ParseQuantity(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case string:
		q, err := resource.ParseQuantity(x)
		if err != nil {
			return nil, false
		}
		d := q.AsDec()
		r := new(big.Rat).SetInt(d.UnscaledBig())
		scale := int64(d.Scale())
		pow := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(max(scale, -scale)), nil))
		if scale > 0 {
			return r.Quo(r, pow), true
		}
		return r.Mul(r, pow), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	}
	return nil, false
}

// SemanticKind names how two differently written values mean the same thing.
type SemanticKind string

// The ways two spellings can be the same value.
const (
	SameQuantity    SemanticKind = "quantity"
	SameDuration    SemanticKind = "duration"
	SameIntOrString SemanticKind = "int-or-string"
	SameBool        SemanticKind = "boolean"
)

// SemanticallyEqual reports whether a and b are the same value written in
// different forms, and how: a quantity (1000m = 1), a duration (1h = 60m0s),
// a number written as a string ("8080" = 8080) or a quoted boolean.
func SemanticallyEqual(a, b any) (SemanticKind, bool) {
	if Equal(a, b) {
		return "", false
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr != bStr { // one string, one not
		s, other := as, b
		if !aStr {
			s, other = bs, a
		}
		if n, ok := Number(other); ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil && f == n {
				return SameIntOrString, true
			}
		}
		if bv, ok := other.(bool); ok {
			if pb, err := strconv.ParseBool(s); err == nil && pb == bv {
				return SameBool, true
			}
		}
	}
	if qa, ok := ParseQuantity(a); ok {
		if qb, ok := ParseQuantity(b); ok && qa.Cmp(qb) == 0 {
			return SameQuantity, true
		}
	}
	if aStr && bStr {
		da, errA := time.ParseDuration(as)
		db, errB := time.ParseDuration(bs)
		if errA == nil && errB == nil && da == db {
			return SameDuration, true
		}
	}
	return "", false
}

// Brief renders a value on one line for tables and evidence, cut to max runes.
func Brief(v any, max int) string {
	var s string
	switch x := v.(type) {
	case nil:
		s = "null"
	case string:
		s = strconv.Quote(x)
	case map[string]any:
		if len(x) == 0 {
			s = "{}"
		} else {
			s = fmt.Sprintf("{…%d keys}", len(x))
			if n, ok := x["name"].(string); ok {
				s = fmt.Sprintf("{name: %s, …}", n)
			}
		}
	case []any:
		if len(x) == 0 {
			s = "[]"
		} else {
			s = fmt.Sprintf("[…%d items]", len(x))
		}
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		s = fmt.Sprint(x)
	}
	r := []rune(s)
	if max > 1 && len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// SortedKeys returns a map's keys in order.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// NormalizeNumbers turns the int values a YAML or JSON decoder produced into
// int64, in place, so values compare the way snapshots are read.
func NormalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = NormalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = NormalizeNumbers(e)
		}
	case int:
		return int64(x)
	}
	return v
}

// DeepCopy copies a decoded JSON/YAML value: maps and lists are new, scalars shared.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = DeepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = DeepCopy(e)
		}
		return l
	}
	return v
}

// EditedText reports whether live is Git's text with part of it rewritten:
// both are multi-line strings, they differ, and at least one non-blank line
// is the same on both sides. A webhook that does this substitutes content
// into a file held in a field (a placeholder filled from a secret store, a
// line added to a config file); what it wrote there is its own, not a form
// of Git's value.
func EditedText(git, live any) bool {
	g, ok1 := git.(string)
	l, ok2 := live.(string)
	if !ok1 || !ok2 || g == l || (!strings.Contains(g, "\n") && !strings.Contains(l, "\n")) {
		return false
	}
	lines := map[string]bool{}
	for _, s := range strings.Split(g, "\n") {
		if s = strings.TrimSpace(s); s != "" {
			lines[s] = true
		}
	}
	for _, s := range strings.Split(l, "\n") {
		if s = strings.TrimSpace(s); s != "" && lines[s] {
			return true
		}
	}
	return false
}
