package classifiers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// selectorMatches evaluates a Kubernetes label selector (matchLabels and
// matchExpressions). A nil selector matches everything, as in admission.
func selectorMatches(sel map[string]any, labels map[string]string) (bool, error) {
	for k, v := range drift.Map(sel, "matchLabels") {
		s, _ := v.(string)
		if got, ok := labels[k]; !ok || got != s {
			return false, nil
		}
	}
	for i, e := range drift.List(sel, "matchExpressions") {
		m, ok := e.(map[string]any)
		if !ok {
			return false, fmt.Errorf("matchExpressions[%d] is not an object", i)
		}
		key, op := drift.Str(m, "key"), drift.Str(m, "operator")
		var values []string
		for _, v := range drift.List(m, "values") {
			if s, ok := v.(string); ok {
				values = append(values, s)
			}
		}
		got, has := labels[key]
		in := has && contains(values, got)
		switch op {
		case "In":
			if !in {
				return false, nil
			}
		case "NotIn":
			if in {
				return false, nil
			}
		case "Exists":
			if !has {
				return false, nil
			}
		case "DoesNotExist":
			if has {
				return false, nil
			}
		default:
			return false, fmt.Errorf("matchExpressions[%d]: unknown operator %q", i, op)
		}
	}
	return true, nil
}

// selectorText renders a selector compactly for evidence.
func selectorText(sel map[string]any) string {
	var parts []string
	for _, k := range drift.SortedKeys(drift.Map(sel, "matchLabels")) {
		parts = append(parts, k+"="+drift.Str(sel, "matchLabels", k))
	}
	for _, e := range drift.List(sel, "matchExpressions") {
		m, _ := e.(map[string]any)
		var vals []string
		for _, v := range drift.List(m, "values") {
			vals = append(vals, fmt.Sprint(v))
		}
		s := drift.Str(m, "key") + " " + drift.Str(m, "operator")
		if len(vals) > 0 {
			s += " (" + strings.Join(vals, ", ") + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "everything"
	}
	return strings.Join(parts, ", ")
}

func labelsText(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + l[k]
	}
	return strings.Join(parts, ", ")
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// plural guesses the resource name of a kind (Deployment → deployments), as
// admission rules name it.
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case k == "endpoints":
		return k
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}
