package appset

import (
	"fmt"
	"regexp"
	"strings"
)

// requirement is one term of a label selector.
type requirement struct {
	key    string
	op     string // In, NotIn, Exists, DoesNotExist
	values []string
}

// selector is a generator's selector: every requirement must hold. Argo CD
// checks the keys but, unlike Kubernetes, not the values, so cluster URLs
// can be matched.
type selector []requirement

var (
	labelName   = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	dnsSubLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// validKey checks a label key is a qualified name: [prefix/]name.
func validKey(k string) error {
	name := k
	if i := strings.Index(k, "/"); i >= 0 {
		prefix := k[:i]
		name = k[i+1:]
		if prefix == "" || len(prefix) > 253 || !dnsSubLabel.MatchString(prefix) {
			return fmt.Errorf("key %q: the prefix is not a DNS subdomain", k)
		}
	}
	if name == "" || len(name) > 63 || !labelName.MatchString(name) {
		return fmt.Errorf("key %q is not a qualified name (at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit, after an optional DNS prefix and '/')", k)
	}
	return nil
}

func parseSelector(v any, where string) (selector, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is a %s, not a map", where, kindOf(v))
	}
	labels, err := stringMap(m["matchLabels"], where+".matchLabels")
	if err != nil {
		return nil, err
	}
	sel := selector{}
	for _, k := range sortedKeys(labels) {
		if err := validKey(k); err != nil {
			return nil, fmt.Errorf("%s.matchLabels: %w", where, err)
		}
		sel = append(sel, requirement{key: k, op: "In", values: []string{labels[k]}})
	}
	var exprs []any
	if e, ok := m["matchExpressions"]; ok && e != nil {
		if exprs, ok = e.([]any); !ok {
			return nil, fmt.Errorf("%s.matchExpressions is a %s, not a list", where, kindOf(e))
		}
	}
	for i, e := range exprs {
		w := fmt.Sprintf("%s.matchExpressions[%d]", where, i)
		em, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is a %s, not a map", w, kindOf(e))
		}
		key, err := strField(em, "key", w)
		if err != nil {
			return nil, err
		}
		op, err := strField(em, "operator", w)
		if err != nil {
			return nil, err
		}
		vals, err := stringList(em["values"], w+".values")
		if err != nil {
			return nil, err
		}
		switch op {
		case "In", "NotIn":
			if len(vals) == 0 {
				return nil, fmt.Errorf("%s: %s needs values", w, op)
			}
		case "Exists", "DoesNotExist":
			if len(vals) != 0 {
				return nil, fmt.Errorf("%s: %s takes no values", w, op)
			}
		default:
			return nil, fmt.Errorf("%s: %q is not an operator (In, NotIn, Exists, DoesNotExist)", w, op)
		}
		if err := validKey(key); err != nil {
			return nil, fmt.Errorf("%s: %w", w, err)
		}
		sel = append(sel, requirement{key: key, op: op, values: vals})
	}
	return sel, nil
}

func (s selector) matches(labels map[string]string) bool {
	for _, r := range s {
		v, has := labels[r.key]
		switch r.op {
		case "In":
			if !has || !contains(r.values, v) {
				return false
			}
		case "NotIn":
			if has && contains(r.values, v) {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		}
	}
	return true
}
