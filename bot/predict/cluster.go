package predict

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// MaxClusterBytes and MaxClusterObjects bound a cluster context file.
const (
	MaxClusterBytes   = 32 << 20
	MaxClusterObjects = 20_000
)

// ParseCluster reads a cluster context file: the objects a prediction
// consults (HorizontalPodAutoscalers, MutatingWebhookConfigurations,
// Namespaces, CRDs, argocd-cm), as a YAML or JSON list of objects, a stream
// of YAML documents each an object, a kind: List with items, or a mapping
// with a cluster: list (a snapshot's, whose other keys are ignored). Each
// object needs apiVersion, kind and metadata.name; an error names the file's
// line and what is wrong.
func ParseCluster(data []byte) ([]drift.Object, error) {
	if len(data) > MaxClusterBytes {
		return nil, fmt.Errorf("the file is %d bytes, over the limit of %d", len(data), MaxClusterBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var items []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not valid YAML or JSON: %v", err)
		}
		root := &doc
		if root.Kind == yaml.DocumentNode {
			if len(root.Content) == 0 {
				continue
			}
			root = root.Content[0]
		}
		switch root.Kind {
		case yaml.SequenceNode:
			items = append(items, root.Content...)
		case yaml.MappingNode:
			if l := valueOf(root, "cluster"); l != nil && (valueOf(root, "kind") == nil || valueOf(root, "kind").Value == "Snapshot") {
				if l.Kind != yaml.SequenceNode {
					return nil, fmt.Errorf("line %d: cluster: must be a list of objects", l.Line)
				}
				items = append(items, l.Content...)
				continue
			}
			if k := valueOf(root, "kind"); k != nil && k.Value == "List" {
				l := valueOf(root, "items")
				if l == nil || l.Kind != yaml.SequenceNode {
					return nil, fmt.Errorf("line %d: a List needs items: a list of objects", root.Line)
				}
				items = append(items, l.Content...)
				continue
			}
			items = append(items, root)
		case yaml.ScalarNode:
			if root.Tag == "!!null" {
				continue
			}
			return nil, fmt.Errorf("line %d: expected a list of objects, got a scalar", root.Line)
		default:
			return nil, fmt.Errorf("line %d: expected a list of objects", root.Line)
		}
		if len(items) > MaxClusterObjects {
			return nil, fmt.Errorf("more than %d objects", MaxClusterObjects)
		}
	}
	if len(items) > MaxClusterObjects {
		return nil, fmt.Errorf("more than %d objects", MaxClusterObjects)
	}
	out := make([]drift.Object, 0, len(items))
	for i, n := range items {
		if n.Kind == yaml.AliasNode {
			return nil, fmt.Errorf("line %d: object %d is an alias; write the object out", n.Line, i)
		}
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: object %d is not a mapping", n.Line, i)
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: object %d: %v", n.Line, i, err)
		}
		m, ok := plain(v, 0).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("line %d: object %d is not a mapping with string keys", n.Line, i)
		}
		for _, f := range [][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}} {
			if drift.Str(m, f...) == "" {
				return nil, fmt.Errorf("line %d: object %d has no %s", n.Line, i, joinKeys(f))
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func joinKeys(ks []string) string {
	s := ks[0]
	for _, k := range ks[1:] {
		s += "." + k
	}
	return s
}

// valueOf returns the value of a mapping's key, or nil.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// plain turns what YAML decodes into the values the engine reads: maps with
// string keys, int64 and float64 numbers. A map with another key type, or
// nesting deeper than 100 levels, yields nil there.
func plain(v any, depth int) any {
	if depth > 100 {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e, depth+1)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				return nil
			}
			out[ks] = plain(e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e, depth+1)
		}
		return out
	case int:
		return int64(x)
	case uint64:
		return float64(x)
	}
	return v
}
