package yamledit

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// Remove deletes the field or list item at p in document doc, with its value,
// its inline comment and the comment lines directly above it (for a list
// item, unless it is the first). A mapping or
// list left empty by the removal is removed too, so Git never declares an
// empty value the API server would drop. Removing a path that is not there
// changes nothing.
func Remove(src []byte, doc int, p drift.Pointer) ([]byte, error) {
	if len(p) == 0 {
		return nil, fmt.Errorf("remove: refusing to remove a whole document")
	}
	f, _, steps, err := locate(src, doc, p)
	if err != nil {
		return nil, err
	}
	if len(steps) < len(p) {
		return src, nil // already absent
	}
	// Climb while the container would be left empty.
	i := len(steps) - 1
	for i > 0 && len(steps[i].parent.Content) == containerEntries(steps[i].parent) {
		i--
	}
	st := steps[i]
	if flow(st.parent) {
		return nil, fmt.Errorf("remove %s: the %s at line %d is written in flow style: %w", p[:i+1], kindName(st.parent), st.parent.Line, ErrUnsupported)
	}
	var startLine, indent int
	if st.key != nil {
		startLine, indent = st.key.Line, st.key.Column-1
		if st.index == 0 && isItemStart(f, st.key) {
			if len(st.parent.Content) > 2 {
				return nil, fmt.Errorf("remove %s: it is the first field of a list item at line %d; removing it would need re-indenting: %w", p[:i+1], st.key.Line, ErrUnsupported)
			}
		}
	} else {
		startLine = st.value.Line
		indent = dashIndent(f.lineAt(startLine), st.value.Column)
		if indent < 0 {
			return nil, fmt.Errorf("remove %s: list item at line %d does not start its line: %w", p[:i+1], startLine, ErrUnsupported)
		}
	}
	if containsOtherEntry(st, startLine) {
		return nil, fmt.Errorf("remove %s: line %d holds other fields too: %w", p[:i+1], startLine, ErrUnsupported)
	}
	end := f.endLine(indent, st.value)
	if nxt := nextEntryLine(st); nxt > 0 && end >= nxt {
		return nil, fmt.Errorf("remove %s: the value shares line %d with the next field: %w", p[:i+1], nxt, ErrUnsupported)
	}
	start := f.headCommentStart(startLine, indent)
	if st.key == nil && st.index == 0 {
		// a comment above the first item may be about the whole list;
		// one above a later item, at its dash, is that item's
		start = startLine
	}
	out := f.replaceLines(start, end, nil)
	removed := p[:i+1]
	if err := verify(src, out, doc, func(d any) (any, bool) { return removed.Delete(d) }); err != nil {
		return nil, fmt.Errorf("remove %s: %w", p, err)
	}
	return out, nil
}

// containerEntries is the node count of a container with exactly one entry.
func containerEntries(n *yaml.Node) int {
	if n.Kind == yaml.MappingNode {
		return 2
	}
	return 1
}

func kindName(n *yaml.Node) string {
	if n.Kind == yaml.SequenceNode {
		return "list"
	}
	return "mapping"
}

// isItemStart reports whether key sits on a "- " line as the first field of a list item.
func isItemStart(f *file, key *yaml.Node) bool {
	line := f.lineAt(key.Line)
	pre := strings.TrimSpace(string(line[:min(len(line), key.Column-1)]))
	return strings.HasPrefix(pre, "-")
}

// dashIndent returns the indentation of the "- " that starts a list item whose
// content begins at column col, or -1 when the item does not start its line.
func dashIndent(line []byte, col int) int {
	ind := indentOf(line)
	if ind < len(line) && line[ind] == '-' && ind < col-1 {
		return ind
	}
	return -1
}

func containsOtherEntry(st step, line int) bool {
	c := st.parent.Content
	for j := 0; j < len(c); j++ {
		n := c[j]
		if n == st.key || n == st.value {
			continue
		}
		if st.parent.Kind == yaml.MappingNode && j%2 == 1 {
			continue // values are checked with their keys
		}
		if n.Line == line {
			return true
		}
	}
	return false
}

// nextEntryLine is the line of the entry after st in its container, or 0.
func nextEntryLine(st step) int {
	c := st.parent.Content
	if st.parent.Kind == yaml.MappingNode {
		if j := (st.index + 1) * 2; j < len(c) {
			return c[j].Line
		}
		return 0
	}
	if j := st.index + 1; j < len(c) {
		return c[j].Line
	}
	return 0
}

// SetScalar writes value at p in document doc, in place of the scalar there,
// keeping its quoting where it can and everything else on the line. The value
// is quoted when YAML would otherwise read it as another type.
func SetScalar(src []byte, doc int, p drift.Pointer, value any) ([]byte, error) {
	f, _, steps, err := locate(src, doc, p)
	if err != nil {
		return nil, err
	}
	if len(steps) < len(p) || len(p) == 0 {
		return nil, fmt.Errorf("set %s: %w", p, ErrNotFound)
	}
	n := steps[len(steps)-1].value
	if n.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("set %s: line %d holds a %s, not a single value: %w", p, n.Line, kindName(n), ErrUnsupported)
	}
	var cur any
	if err := n.Decode(&cur); err == nil && drift.Equal(normalizeNumber(cur), normalizeNumber(value)) {
		return src, nil
	}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || strings.Contains(n.Value, "\n") {
		return nil, fmt.Errorf("set %s: line %d holds a multi-line value: %w", p, n.Line, ErrUnsupported)
	}
	if n.Line < 1 || n.Line > len(f.lines) {
		return nil, fmt.Errorf("set %s: value position outside the text: %w", p, ErrUnsupported)
	}
	line := f.lines[n.Line-1]
	startCol := n.Column - 1
	end, err := tokenEnd(line, startCol, n.Style)
	if err != nil {
		return nil, fmt.Errorf("set %s at line %d: %w", p, n.Line, err)
	}
	text, err := render(value, n.Style)
	if err != nil {
		return nil, fmt.Errorf("set %s: %w", p, err)
	}
	newLine := append(append(append([]byte{}, line[:startCol]...), text...), line[end:]...)
	out := f.replaceLines(n.Line, n.Line, newLine)
	if err := verify(src, out, doc, func(d any) (any, bool) { return setAt(d, p, toPlain(value)) }); err != nil {
		return nil, fmt.Errorf("set %s: %w", p, err)
	}
	return out, nil
}

func normalizeNumber(v any) any {
	if i, ok := v.(int); ok {
		return int64(i)
	}
	return v
}

// tokenEnd finds where the scalar starting at col ends on its line.
func tokenEnd(line []byte, col int, style yaml.Style) (int, error) {
	if col >= len(line) {
		return 0, fmt.Errorf("value position past the end of the line: %w", ErrUnsupported)
	}
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		for i := col + 1; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
	case style&yaml.SingleQuotedStyle != 0:
		for i := col + 1; i < len(line); i++ {
			if line[i] == '\'' {
				if i+1 < len(line) && line[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, nil
			}
		}
	default:
		end := len(bytes.TrimRight(line, "\r\n"))
		if i := bytes.Index(line[col:end], []byte(" #")); i >= 0 {
			end = col + i
		}
		for _, stop := range []byte{',', '}', ']'} { // inside a flow collection
			if i := bytes.IndexByte(line[col:end], stop); i >= 0 && line[col] != '"' {
				if end > col+i {
					end = col + i
				}
			}
		}
		return len(bytes.TrimRight(line[:end], " \t")), nil
	}
	return 0, fmt.Errorf("unterminated quoted value: %w", ErrUnsupported)
}

// render writes a scalar so that YAML reads it back as exactly value.
func render(value any, style yaml.Style) (string, error) {
	switch v := value.(type) {
	case string:
		if style&yaml.SingleQuotedStyle != 0 && !strings.ContainsAny(v, "\n") {
			return "'" + strings.ReplaceAll(v, "'", "''") + "'", nil
		}
		if style&yaml.DoubleQuotedStyle == 0 && plainSafe(v) {
			return v, nil
		}
		return doubleQuote(v), nil
	case nil:
		return "null", nil
	case bool, int, int64, float64:
		b, err := yaml.Marshal(v)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", fmt.Errorf("value %v is not a scalar: %w", value, ErrUnsupported)
}

// plainSafe reports whether s written without quotes reads back as the string s.
func plainSafe(s string) bool {
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, "\n\t") ||
		strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") ||
		strings.ContainsRune("[]{},&*!|>'\"%@`#", rune(s[0])) ||
		s == "-" || s == "?" || strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "? ") {
		return false
	}
	var back any
	if err := yaml.Unmarshal([]byte("v: "+s), &back); err != nil {
		return false
	}
	m, _ := back.(map[string]any)
	got, ok := m["v"].(string)
	return ok && got == s
}

func doubleQuote(s string) string {
	b, _ := yaml.Marshal(s)
	out := strings.TrimSpace(string(b))
	if strings.HasPrefix(out, "\"") {
		return out
	}
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case '\n':
			sb.WriteString(`\n`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// SetValue writes a scalar at p in document doc: in place when the field
// exists (as SetScalar), otherwise by adding the missing keys at the end of the
// deepest mapping that exists.
func SetValue(src []byte, doc int, p drift.Pointer, value any) ([]byte, error) {
	f, root, steps, err := locate(src, doc, p)
	if err != nil {
		return nil, err
	}
	if len(steps) == len(p) {
		return SetScalar(src, doc, p, value)
	}
	out, err := f.insertKeys(root, steps, p, true, func(int, int) ([]byte, error) {
		s, err := render(value, 0)
		return []byte(s), err
	})
	if err != nil {
		return nil, err
	}
	if err := verify(src, out, doc, func(d any) (any, bool) { return setAt(d, p, toPlain(value)) }); err != nil {
		return nil, fmt.Errorf("set %s: %w", p, err)
	}
	return out, nil
}

// Scalar renders a value as a YAML scalar that reads back as exactly v.
func Scalar(v any) (string, error) { return render(v, 0) }
