// Package yamledit edits YAML files in place: it changes the lines a change
// needs and leaves every other byte as it was — comments, key order,
// indentation, quotes, document markers and trailing newlines. It parses the
// file to find positions and edits the text; anything it cannot edit that way
// (flow-style containers, multi-line scalars) is refused with an error.
package yamledit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// ErrNotFound is returned when a path does not exist in the document.
var ErrNotFound = errors.New("path not found")

// ErrUnsupported is returned for YAML that cannot be edited without rewriting
// lines outside the change.
var ErrUnsupported = errors.New("cannot edit in place")

// file is a parsed YAML text.
type file struct {
	src   []byte
	lines [][]byte // each with its line ending
	docs  []*yaml.Node
}

func parse(src []byte) (*file, error) {
	if bytes.Count(src, []byte("\r")) != bytes.Count(src, []byte("\r\n")) {
		return nil, fmt.Errorf("parse YAML: a lone carriage return is a line break to YAML but not to this editor: %w", ErrUnsupported)
	}
	f := &file{src: src}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("parse YAML: %w", err)
		}
		f.docs = append(f.docs, &n)
	}
	rest := src
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			f.lines = append(f.lines, rest)
			break
		}
		f.lines = append(f.lines, rest[:i+1])
		rest = rest[i+1:]
	}
	return f, nil
}

// Documents returns each document of a YAML stream decoded as a plain value,
// in order (empty documents as nil).
func Documents(src []byte) ([]any, error) {
	f, err := parse(src)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(f.docs))
	for i, d := range f.docs {
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("decode document %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

// FindDocument returns the index of the document with the given kind and
// metadata.name, or -1.
func FindDocument(src []byte, kind, name string) (int, error) {
	docs, err := Documents(src)
	if err != nil {
		return -1, err
	}
	for i, d := range docs {
		m, _ := d.(map[string]any)
		if drift.Str(m, "kind") == kind && drift.Str(m, "metadata", "name") == name {
			return i, nil
		}
	}
	return -1, nil
}

func (f *file) root(doc int) (*yaml.Node, error) {
	if doc < 0 || doc >= len(f.docs) {
		return nil, fmt.Errorf("document %d: %w (the file has %d)", doc, ErrNotFound, len(f.docs))
	}
	n := f.docs[doc]
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil, fmt.Errorf("document %d is empty: %w", doc, ErrNotFound)
		}
		n = n.Content[0]
	}
	return n, nil
}

// locate parses src and resolves p in document doc.
func locate(src []byte, doc int, p drift.Pointer) (*file, *yaml.Node, []step, error) {
	f, err := parse(src)
	if err != nil {
		return nil, nil, nil, err
	}
	root, err := f.root(doc)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, root, resolve(root, p), nil
}

// step is one level of a resolved path: the container, and the key and value
// nodes (key is nil for sequence items).
type step struct {
	parent *yaml.Node
	key    *yaml.Node
	value  *yaml.Node
	index  int // position of the pair (mapping) or item (sequence) in parent
}

// resolve walks p and returns one step per token; it stops early (with fewer
// steps) when a token is missing.
func resolve(root *yaml.Node, p drift.Pointer) []step {
	var steps []step
	cur := root
	for _, tok := range p {
		cur = deref(cur)
		switch cur.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if cur.Content[i].Value == tok {
					steps = append(steps, step{parent: cur, key: cur.Content[i], value: cur.Content[i+1], index: i / 2})
					cur = cur.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				return steps
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.Content) {
				return steps
			}
			steps = append(steps, step{parent: cur, value: cur.Content[i], index: i})
			cur = cur.Content[i]
		default:
			return steps
		}
	}
	return steps
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// maxLine returns the last line any node of the subtree starts on.
func maxLine(n *yaml.Node) int {
	m := n.Line
	for _, c := range n.Content {
		if l := maxLine(c); l > m {
			m = l
		}
	}
	return m
}

func lastNode(n *yaml.Node) *yaml.Node {
	last := n
	for _, c := range n.Content {
		if l := lastNode(c); l.Line >= last.Line {
			last = l
		}
	}
	return last
}

func indentOf(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// lineAt returns line n (1-based), or nil past either end of the text.
func (f *file) lineAt(n int) []byte {
	if n < 1 || n > len(f.lines) {
		return nil
	}
	return f.lines[n-1]
}

func blank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// endLine returns the last line (1-based) of an entry that starts on start at
// indentation indent and whose value is v.
func (f *file) endLine(indent int, v *yaml.Node) int {
	end := maxLine(v)
	last := lastNode(v)
	multiline := last.Kind == yaml.ScalarNode && (last.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || strings.Contains(last.Value, "\n"))
	if !multiline {
		return end
	}
	for end < len(f.lines) {
		next := f.lineAt(end + 1)
		if !blank(next) && indentOf(next) <= indent {
			break
		}
		end++
	}
	for end > maxLine(v) && blank(f.lineAt(end)) { // keep trailing blank lines
		end--
	}
	return end
}

// headCommentStart returns the first line of the comment block directly above
// line (no blank line between), at the same indentation, or line itself.
func (f *file) headCommentStart(line, indent int) int {
	start := line
	for start > 1 {
		prev := f.lineAt(start - 1)
		t := bytes.TrimSpace(prev)
		if len(t) == 0 || t[0] != '#' || indentOf(prev) != indent {
			break
		}
		start--
	}
	return start
}

func (f *file) replaceLines(from, to int, with []byte) []byte {
	// Node positions can point one line past the text (an implicit null at
	// the end of a file); clamp so the edit lands at the end instead.
	n := len(f.lines)
	from = min(max(from, 1), n+1)
	to = min(to, n)
	var out bytes.Buffer
	for i := 1; i < from; i++ {
		out.Write(f.lines[i-1])
	}
	out.Write(with)
	for i := to + 1; i <= len(f.lines); i++ {
		out.Write(f.lines[i-1])
	}
	return out.Bytes()
}

func flow(n *yaml.Node) bool { return n.Style&yaml.FlowStyle != 0 }
