package config

import (
	"encoding/json"
	"strings"
)

// JSONSchema returns a JSON Schema of the policy file, built from Schema,
// for editors (yaml-language-server) and CI linters: every key with its
// type and its one-line meaning, unknown keys refused as the parser refuses
// them. The parser stays the authority; what the schema cannot say
// (cross-key rules, value ranges) it checks alone.
func JSONSchema() []byte {
	root := &schemaNode{typ: "mapping", doc: "driftfix's policy file"}
	for _, k := range Schema {
		root.add(splitKey(k.Path), k)
	}
	out := root.json()
	out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	out["$id"] = "https://github.com/driftfix/driftfix/deploy/driftfix.schema.json"
	out["title"] = "driftfix policy"
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil { // plain maps and strings always encode
		panic(err)
	}
	return append(b, '\n')
}

// scalarItems are lists whose items may also be a plain string (a URL).
var scalarItems = map[string]bool{"platformRepos": true, "policy.sensitivePaths": true}

// sameAs are keys whose value takes the keys of another: an override's
// policy is the global policy's (the parser refuses ignoreRules and repoFile
// there).
var sameAs = map[string]string{"overrides[].policy": "#/properties/policy"}

type schemaNode struct {
	path, typ, doc, def string
	keys                []string // children in Schema's order
	children            map[string]*schemaNode
	items               *schemaNode // the mapping each item of a list is
	any                 *schemaNode // <name>: the value of any key
}

// splitKey splits "argocd[].name" into argocd, [], name.
func splitKey(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		if name, ok := strings.CutSuffix(part, "[]"); ok {
			out = append(out, name, "[]")
			continue
		}
		out = append(out, part)
	}
	return out
}

func (n *schemaNode) add(path []string, k Key) {
	if len(path) == 0 {
		n.path, n.typ, n.doc, n.def = k.Path, k.Type, k.Doc, k.Default
		return
	}
	switch head := path[0]; {
	case head == "[]":
		if n.items == nil {
			n.items = &schemaNode{typ: "mapping"}
		}
		n.items.add(path[1:], k)
	case strings.HasPrefix(head, "<"):
		if n.any == nil {
			n.any = &schemaNode{}
		}
		n.any.add(path[1:], k)
	default:
		if n.children == nil {
			n.children = map[string]*schemaNode{}
		}
		c, ok := n.children[head]
		if !ok {
			c = &schemaNode{}
			n.children[head] = c
			n.keys = append(n.keys, head)
		}
		c.add(path[1:], k)
	}
}

func (n *schemaNode) json() map[string]any {
	if ref, ok := sameAs[n.path]; ok {
		return map[string]any{"$ref": ref, "description": n.description()}
	}
	out := map[string]any{}
	if d := n.description(); d != "" {
		out["description"] = d
	}
	switch t := n.typ; {
	case t == "mapping":
		out["type"] = "object"
		props := map[string]any{}
		var required []string
		for _, k := range n.keys {
			c := n.children[k]
			props[k] = c.json()
			if c.required() {
				required = append(required, k)
			}
		}
		if len(props) > 0 {
			out["properties"] = props
		}
		if n.any != nil {
			out["additionalProperties"] = n.any.json()
		} else if len(props) > 0 {
			out["additionalProperties"] = false
		}
		if required != nil {
			out["required"] = required
		}
	case t == "list":
		out["type"] = "array"
		if n.items != nil {
			item := n.items.json()
			if scalarItems[n.path] {
				item = map[string]any{"anyOf": []any{map[string]any{"type": "string", "minLength": 1}, item}}
			}
			out["items"] = item
		}
	case strings.HasPrefix(t, "list of "):
		out["type"] = "array"
		out["items"] = map[string]any{"type": "string"}
	case t == "bool":
		out["type"] = "boolean"
	case t == "number":
		out["type"] = "integer"
	case t == "fraction":
		out["type"] = "number"
	case t == "size":
		out["type"] = []any{"string", "integer"}
	case t == "string or list of strings":
		out["anyOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}
	case strings.Contains(t, " or "):
		var enum []any
		for _, w := range strings.FieldsFunc(strings.ReplaceAll(t, " or ", ","), func(r rune) bool { return r == ',' || r == ' ' }) {
			enum = append(enum, w)
		}
		out["enum"] = enum
	default:
		out["type"] = "string"
	}
	return out
}

func (n *schemaNode) description() string {
	d := n.doc
	if n.def != "" {
		d += " (default: " + n.def + ")"
	}
	return d
}

// required says the key's meaning calls it required.
func (n *schemaNode) required() bool {
	return strings.HasPrefix(n.doc, "required") || strings.Contains(n.doc, "; required")
}
