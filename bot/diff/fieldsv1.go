package diff

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/drift"
)

// FieldSet is a parsed FieldsV1 tree: the fields one managedFields entry owns.
// Keys are "f:<name>" (a field), "k:<json>" (a list item by its keys),
// "v:<json>" (a set item by value), "i:<n>" (a list item by index) and "." (the
// node itself).
type FieldSet struct {
	self    bool // "." is present: the node itself, not what is beneath it
	fields  map[string]*FieldSet
	keys    []keyedItem
	values  []valuedItem
	indexes map[int]*FieldSet
}

type keyedItem struct {
	key  map[string]any
	node *FieldSet
}

type valuedItem struct {
	value any
	node  *FieldSet
}

// leaf reports whether the node owns its whole subtree (written as {}).
func (f *FieldSet) leaf() bool {
	return !f.self && len(f.fields) == 0 && len(f.keys) == 0 && len(f.values) == 0 && len(f.indexes) == 0
}

// ParseFieldsV1JSON parses FieldsV1 as the API server sends it (a JSON object).
func ParseFieldsV1JSON(raw []byte) (*FieldSet, error) {
	if !utf8.Valid(raw) { // encoding/json would read it as U+FFFD, naming another field
		return nil, fmt.Errorf("parse fieldsV1: not valid UTF-8")
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("parse fieldsV1: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("parse fieldsV1: data after the JSON object")
	}
	return ParseFieldsV1(numbersToFloat(v))
}

func numbersToFloat(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbersToFloat(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersToFloat(e)
		}
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return v
}

// ParseFieldsV1 parses a decoded FieldsV1 object. Every key must be one of the
// forms above, and every value an object.
func ParseFieldsV1(v any) (*FieldSet, error) {
	if fs, err := parseFieldSetFast(v, 0); err == nil {
		return fs, nil
	}
	// The error of the first bad key in sorted order, as parseFieldSet
	// finds it.
	return parseFieldSet(v, 0)
}

// parseFieldSetFast is parseFieldSet without sorting the keys of a node
// first: only list keys (k:) and set values (v:) are kept in a list, in
// sorted order; fields, indexes and "." go into maps or a flag. On error it
// returns any error; ParseFieldsV1 then asks parseFieldSet which.
func parseFieldSetFast(v any, depth int) (*FieldSet, error) {
	if depth > maxWalkDepth {
		return nil, errFieldSet
	}
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return leafFieldSet, nil
		}
		return nil, errFieldSet
	}
	// The commonest nodes, {} and {".":{}}, are shared: a parsed set is
	// never changed.
	switch len(m) {
	case 0:
		return leafFieldSet, nil
	case 1:
		if _, ok := m["."]; ok {
			return selfFieldSet, nil
		}
	}
	fs := &FieldSet{}
	var ordered []string
	for k, e := range m {
		if k == "." {
			fs.self = true
			continue
		}
		prefix, rest, ok := strings.Cut(k, ":")
		if !ok {
			return nil, errFieldSet
		}
		switch prefix {
		case "f":
			child, err := parseFieldSetFast(e, depth+1)
			if err != nil {
				return nil, err
			}
			if fs.fields == nil {
				fs.fields = make(map[string]*FieldSet, len(m))
			}
			fs.fields[rest] = child
		case "i":
			child, err := parseFieldSetFast(e, depth+1)
			if err != nil {
				return nil, err
			}
			i, err := strconv.Atoi(rest)
			if err != nil || i < 0 {
				return nil, errFieldSet
			}
			if fs.indexes == nil {
				fs.indexes = map[int]*FieldSet{}
			}
			fs.indexes[i] = child
		case "k", "v":
			ordered = append(ordered, k)
		default:
			return nil, errFieldSet
		}
	}
	sort.Strings(ordered)
	for _, k := range ordered {
		child, err := parseFieldSetFast(m[k], depth+1)
		if err != nil {
			return nil, err
		}
		prefix, rest, _ := strings.Cut(k, ":")
		if prefix == "k" {
			key, err := unmarshalObject(rest)
			if err != nil || key == nil {
				return nil, errFieldSet
			}
			fs.keys = append(fs.keys, keyedItem{key: key, node: child})
			continue
		}
		var val any
		if err := json.Unmarshal([]byte(rest), &val); err != nil {
			return nil, errFieldSet
		}
		fs.values = append(fs.values, valuedItem{value: val, node: child})
	}
	return fs, nil
}

var errFieldSet = errors.New("parse fieldsV1")

// leafFieldSet ({}: the field owned whole) and selfFieldSet ({".":{}}) are
// the shared results for those nodes.
var (
	leafFieldSet = &FieldSet{}
	selfFieldSet = &FieldSet{self: true}
)

func parseFieldSet(v any, depth int) (*FieldSet, error) {
	if depth > maxWalkDepth {
		return nil, fmt.Errorf("parse fieldsV1: nested too deeply")
	}
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return &FieldSet{}, nil
		}
		return nil, fmt.Errorf("parse fieldsV1: expected an object, got %s", drift.Brief(v, 40))
	}
	fs := &FieldSet{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "." {
			fs.self = true
			continue
		}
		child, err := parseFieldSet(m[k], depth+1)
		if err != nil {
			return nil, err
		}
		prefix, rest, ok := strings.Cut(k, ":")
		if !ok {
			return nil, fmt.Errorf("parse fieldsV1: key %q has no f:, k:, v: or i: prefix", k)
		}
		switch prefix {
		case "f":
			if fs.fields == nil {
				fs.fields = map[string]*FieldSet{}
			}
			fs.fields[rest] = child
		case "k":
			var key map[string]any
			if err := json.Unmarshal([]byte(rest), &key); err != nil || key == nil {
				return nil, fmt.Errorf("parse fieldsV1: key %q: list keys must be a JSON object", k)
			}
			fs.keys = append(fs.keys, keyedItem{key: key, node: child})
		case "v":
			var val any
			if err := json.Unmarshal([]byte(rest), &val); err != nil {
				return nil, fmt.Errorf("parse fieldsV1: key %q: set value must be JSON", k)
			}
			fs.values = append(fs.values, valuedItem{value: val, node: child})
		case "i":
			i, err := strconv.Atoi(rest)
			if err != nil || i < 0 {
				return nil, fmt.Errorf("parse fieldsV1: key %q: index must be a non-negative integer", k)
			}
			if fs.indexes == nil {
				fs.indexes = map[int]*FieldSet{}
			}
			fs.indexes[i] = child
		default:
			return nil, fmt.Errorf("parse fieldsV1: key %q has unknown prefix %q", k, prefix)
		}
	}
	return fs, nil
}

// Owns reports whether the set owns the value at p in doc, or something beneath
// it, or an ancestor of it as a whole.
func (f *FieldSet) Owns(doc any, p drift.Pointer) bool { return f.owns(doc, p, true) }

// OwnsExactly reports whether the set lists p itself: owning a field whose
// value the API server then filled beneath (strategy: {} defaulted to a
// rolling update) is not owning what was filled in.
func (f *FieldSet) OwnsExactly(doc any, p drift.Pointer) bool { return f.owns(doc, p, false) }

func (f *FieldSet) owns(doc any, p drift.Pointer, viaLeaf bool) bool {
	return f.walk(doc, p, func(any) bool { return viaLeaf })
}

// walk follows p through the set and doc together, list items matched by
// their key, value or index. It reports false where the set does not reach
// p, true where it lists p itself, and, where a leaf of the set (a field
// owned whole, written {}) is reached before p ends, what atLeaf says of
// doc's value there.
func (f *FieldSet) walk(doc any, p drift.Pointer, atLeaf func(val any) bool) bool {
	cur, val := f, doc
	for i, tok := range p {
		// An empty set at the root ({}) owns nothing, as structured-merge-diff
		// reads it; only a field's {} owns the field whole.
		if i > 0 && cur.leaf() {
			return atLeaf(val)
		}
		switch v := val.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return false
			}
			next := cur.item(v[i], i)
			if next == nil {
				return false
			}
			cur, val = next, v[i]
		default:
			next := cur.fields[tok]
			if next == nil {
				return false
			}
			m, _ := v.(map[string]any)
			cur, val = next, m[tok]
		}
	}
	return true
}

func (f *FieldSet) item(item any, index int) *FieldSet {
	if m, ok := item.(map[string]any); ok {
	keys:
		for _, k := range f.keys {
			for kk, kv := range k.key {
				if !drift.Equal(m[kk], kv) {
					continue keys
				}
			}
			return k.node
		}
	}
	for _, v := range f.values {
		if drift.Equal(v.value, item) {
			return v.node
		}
	}
	return f.indexes[index]
}

// managed is one parsed managedFields entry.
type managed struct {
	owner drift.Owner
	set   *FieldSet
}

// parseManagedFields reads metadata.managedFields of a live object. Entries whose
// FieldsV1 does not parse are skipped and reported.
func parseManagedFields(live drift.Object) ([]managed, []string) {
	var out []managed
	var problems []string
	for i, e := range drift.List(live, "metadata", "managedFields") {
		m, ok := e.(map[string]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("managedFields[%d] is not an object", i))
			continue
		}
		if t := drift.Str(m, "fieldsType"); t != "" && t != "FieldsV1" {
			problems = append(problems, fmt.Sprintf("managedFields[%d] has fieldsType %q", i, t))
			continue
		}
		set, err := ParseFieldsV1(m["fieldsV1"])
		if err != nil {
			problems = append(problems, fmt.Sprintf("managedFields[%d] (%s): %v", i, drift.Str(m, "manager"), err))
			continue
		}
		out = append(out, managed{
			owner: drift.Owner{
				Manager:     drift.Str(m, "manager"),
				Operation:   drift.Str(m, "operation"),
				Subresource: drift.Str(m, "subresource"),
				Time:        drift.Str(m, "time"),
			},
			set: set,
		})
	}
	return out, problems
}

// ownersOf returns the entries that own p in live.
func ownersOf(entries []managed, live any, p drift.Pointer) []drift.Owner {
	var out []drift.Owner
	for _, e := range entries {
		if e.set.Owns(live, p) {
			out = append(out, e.owner)
		}
	}
	return out
}

// Owners returns the managedFields entries of a live object that own p (or
// a part of it), with their manager, operation, subresource and time.
func Owners(live drift.Object, p drift.Pointer) []drift.Owner {
	entries, _ := parseManagedFields(live)
	return ownersOf(entries, live, p)
}

// OwnersIn is Owners for many paths of one live object: it reads the
// object's managedFields once and answers for each path the same as Owners.
func OwnersIn(live drift.Object) func(drift.Pointer) []drift.Owner {
	entries, _ := parseManagedFields(live)
	return func(p drift.Pointer) []drift.Owner { return ownersOf(entries, live, p) }
}
