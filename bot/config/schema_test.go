package config

import (
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestSchemaMatchesParser holds Schema, the source of the policy reference,
// to what the parser accepts: a file with every key Schema names is read
// with acceptedKeys recording what each mapping knows; every known key must
// be in Schema, and every Schema key known.
func TestSchemaMatchesParser(t *testing.T) {
	documented := map[string]bool{}
	root := map[string]any{}
	for _, k := range Schema {
		if documented[k.Path] {
			t.Errorf("Schema names %s twice", k.Path)
		}
		documented[k.Path] = true
		if k.Type == "" || k.Doc == "" || strings.Contains(k.Doc, "\n") {
			t.Errorf("Schema %s needs a type and a one-line doc", k.Path)
		}
		place(root, strings.Split(k.Path, "."))
	}
	// An override's policy takes the policy's keys: read one to see them.
	root["overrides"].([]any)[0].(map[string]any)["policy"] = map[string]any{}
	b, err := yaml.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	acceptedKeys = map[string]bool{}
	defer func() { acceptedKeys = nil }()
	Parse(b) // the values are placeholders: only which keys are known counts
	known := map[string]bool{}
	for k := range acceptedKeys {
		switch {
		case strings.HasPrefix(k, "overrides[].policy."):
			rest := strings.TrimPrefix(k, "overrides[].")
			if !documented[cause(rest)] {
				t.Errorf("an override's policy accepts %s, which the global policy does not document", rest)
			}
			continue
		}
		known[cause(k)] = true
	}
	var missing, stale []string
	for k := range known {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	for k := range documented {
		if !known[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("the parser accepts keys Schema does not document (add them to bot/config/schema.go, then go generate ./cmd/driftfix): %s", strings.Join(missing, ", "))
	}
	if len(stale) > 0 {
		t.Errorf("Schema documents keys the parser does not accept: %s", strings.Join(stale, ", "))
	}
}

// cause writes any cause under fixes as <cause>.
func cause(k string) string {
	if i := strings.Index(k, "fixes."); i >= 0 {
		return k[:i] + "fixes.<cause>"
	}
	return k
}

// place puts a key into the document: the mappings and one-item lists of
// mappings above it, the key itself as null.
func place(m map[string]any, parts []string) {
	name, list := strings.CutSuffix(parts[0], "[]")
	if name == "<cause>" {
		return
	}
	if len(parts) == 1 {
		if _, ok := m[name]; !ok {
			m[name] = nil
		}
		return
	}
	if list {
		l, _ := m[name].([]any)
		if l == nil {
			l = []any{map[string]any{}}
			m[name] = l
		}
		place(l[0].(map[string]any), parts[1:])
		return
	}
	c, _ := m[name].(map[string]any)
	if c == nil {
		c = map[string]any{}
		m[name] = c
	}
	place(c, parts[1:])
}
