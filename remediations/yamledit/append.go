package yamledit

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// AppendItem adds item to the end of the list at p in document doc, creating
// the list and any missing mapping keys on the way, with comment (if any) on
// the lines above the new item. Appending an item the list already holds
// changes nothing.
func AppendItem(src []byte, doc int, p drift.Pointer, item any, comment string) ([]byte, error) {
	out, err := appendItem(src, doc, p, item, comment)
	if err != nil || string(out) == string(src) {
		return out, err
	}
	err = verify(src, out, doc, func(d any) (any, bool) {
		list, _ := p.Get(d)
		l, _ := list.([]any)
		return setAt(d, p, append(append([]any{}, l...), toPlain(item)))
	})
	if err != nil {
		return nil, fmt.Errorf("append to %s: %w", p, err)
	}
	return out, nil
}

func appendItem(src []byte, doc int, p drift.Pointer, item any, comment string) ([]byte, error) {
	f, root, steps, err := locate(src, doc, p)
	if err != nil {
		return nil, err
	}
	body, err := renderItem(item, comment)
	if err != nil {
		return nil, err
	}
	if len(steps) == len(p) && len(p) > 0 {
		seq := deref(steps[len(steps)-1].value)
		switch {
		case seq.Kind == yaml.SequenceNode && len(seq.Content) > 0 && !flow(seq):
			for _, c := range seq.Content {
				var v any
				if c.Decode(&v) == nil && drift.Equal(toPlain(v), toPlain(item)) {
					return src, nil
				}
			}
			first := seq.Content[0]
			ind := dashIndent(f.lineAt(first.Line), first.Column)
			if ind < 0 {
				return nil, fmt.Errorf("append to %s: list at line %d does not have one item per line: %w", p, seq.Line, ErrUnsupported)
			}
			last := seq.Content[len(seq.Content)-1]
			end := f.endLine(ind, last)
			if nxt := nextEntryLine(steps[len(steps)-1]); nxt > 0 && end >= nxt {
				return nil, fmt.Errorf("append to %s: %w", p, ErrUnsupported)
			}
			return f.replaceLines(end+1, end, indentBlock(body, ind)), nil
		case (seq.Kind == yaml.SequenceNode && len(seq.Content) == 0) || (seq.Kind == yaml.ScalarNode && seq.Tag == "!!null"):
			// "key: []" or "key:" with nothing: rewrite that one line as "key:" plus the item.
			st := steps[len(steps)-1]
			if st.key == nil || seq.Line != st.key.Line && seq.Tag != "!!null" {
				return nil, fmt.Errorf("append to %s: %w", p, ErrUnsupported)
			}
			line := f.lineAt(st.key.Line)
			ind := st.key.Column - 1
			keyText := string(line[ind : st.key.Column-1+len(st.key.Value)])
			if st.key.Style != 0 {
				return nil, fmt.Errorf("append to %s: quoted key at line %d: %w", p, st.key.Line, ErrUnsupported)
			}
			comment := ""
			if i := bytes.Index(line, []byte(" #")); i >= 0 {
				comment = " " + strings.TrimSpace(string(line[i:]))
			}
			newLine := strings.Repeat(" ", ind) + keyText + ":" + comment + lineEnding(line)
			return f.replaceLines(st.key.Line, st.key.Line, append([]byte(newLine), indentBlock(body, ind+2)...)), nil
		default:
			return nil, fmt.Errorf("append to %s: line %d holds a %s, not a list: %w", p, seq.Line, kindName(seq), ErrUnsupported)
		}
	}
	return f.insertUnder(root, steps, p, func(depth, indent int) ([]byte, error) {
		return indentBlock(body, indent), nil
	})
}

// insertUnder creates the keys of p missing below the deepest mapping that
// exists (steps), then the value lines leaf gives for the last key's indent.
// With asScalar the last key and its value share a line.
func (f *file) insertUnder(root *yaml.Node, steps []step, p drift.Pointer, leaf func(depth, indent int) ([]byte, error)) ([]byte, error) {
	return f.insertKeys(root, steps, p, false, leaf)
}

func (f *file) insertKeys(root *yaml.Node, steps []step, p drift.Pointer, asScalar bool, leaf func(depth, indent int) ([]byte, error)) ([]byte, error) {
	parent := root
	if len(steps) > 0 {
		parent = deref(steps[len(steps)-1].value)
	}
	if parent.Kind != yaml.MappingNode || flow(parent) || len(parent.Content) == 0 {
		return nil, fmt.Errorf("add %s: %s is not a block mapping with fields: %w", p, p[:len(steps)], ErrUnsupported)
	}
	ind := parent.Content[0].Column - 1
	lastKey := parent.Content[len(parent.Content)-2]
	end := f.endLine(ind, parent.Content[len(parent.Content)-1])
	if end < lastKey.Line {
		end = lastKey.Line
	}
	// Lines of spaces only, indented deeper than the new key, go before it:
	// below a new block scalar YAML would read them as its text.
	for end < len(f.lines) {
		next := f.lineAt(end + 1)
		if !blank(next) || indentOf(next) <= ind || len(bytes.TrimRight(next, "\r\n")) == 0 {
			break
		}
		end++
	}
	missing := p[len(steps):]
	var b strings.Builder
	for i, tok := range missing {
		key, err := render(tok, 0)
		if err != nil {
			return nil, err
		}
		b.WriteString(strings.Repeat(" ", ind+2*i) + key + ":")
		if asScalar && i == len(missing)-1 {
			v, err := leaf(i, 0)
			if err != nil {
				return nil, err
			}
			b.WriteString(" " + string(v) + "\n")
			continue
		}
		b.WriteString("\n")
	}
	if !asScalar {
		v, err := leaf(len(missing), ind+2*(len(missing)-1)+2)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	ins := []byte(b.String())
	if end == len(f.lines) && !bytes.HasSuffix(f.lines[end-1], []byte("\n")) {
		ins = append([]byte("\n"), ins...)
	}
	return f.replaceLines(end+1, end, ins), nil
}

// renderItem renders a list item as block YAML starting with "- ", with
// comment lines above it.
func renderItem(item any, comment string) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(item); err != nil {
		return nil, fmt.Errorf("render list item: %w", err)
	}
	var out strings.Builder
	for _, c := range strings.Split(strings.TrimSpace(comment), "\n") {
		if c != "" {
			out.WriteString("# " + c + "\n")
		}
	}
	for i, l := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		if i == 0 {
			out.WriteString("- " + l + "\n")
		} else {
			out.WriteString("  " + l + "\n")
		}
	}
	return []byte(out.String()), nil
}

func indentBlock(b []byte, n int) []byte {
	pad := strings.Repeat(" ", n)
	var out strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		out.WriteString(pad + l)
	}
	return []byte(out.String())
}

func lineEnding(line []byte) string {
	if bytes.HasSuffix(line, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// toPlain turns values into the shapes yaml.v3 decodes to, for comparison.
func toPlain(v any) any {
	b, err := yaml.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if yaml.Unmarshal(b, &out) != nil {
		return v
	}
	return drift.NormalizeNumbers(out)
}
