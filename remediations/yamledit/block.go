package yamledit

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// SetBlock writes text at p in document doc as a literal block scalar (the
// key, "|" and the text's lines indented below it), in place of the single
// value there, or as new keys at the end of the deepest mapping that exists.
// A comment on the key's line is kept. Text whose lines YAML would read
// back differently in a literal block (leading spaces on its first line, lines
// of spaces only, several trailing newlines, carriage returns) is refused.
func SetBlock(src []byte, doc int, p drift.Pointer, text string) ([]byte, error) {
	if len(p) == 0 {
		return nil, fmt.Errorf("set a block at the document root: %w", ErrUnsupported)
	}
	header, lines, err := blockLines(text)
	if err != nil {
		return nil, fmt.Errorf("set %s: %w", p, err)
	}
	f, root, steps, err := locate(src, doc, p)
	if err != nil {
		return nil, err
	}
	var out []byte
	if len(steps) == len(p) {
		st := steps[len(steps)-1]
		v := st.value
		if st.key == nil || v.Kind != yaml.ScalarNode || v.Line != st.key.Line {
			return nil, fmt.Errorf("set %s: line %d does not hold a single value after a key: %w", p, v.Line, ErrUnsupported)
		}
		var cur any
		if v.Decode(&cur) == nil && cur == text {
			return src, nil
		}
		line := f.lineAt(v.Line)
		col := v.Column - 1
		if col < 0 || col >= len(line) {
			return nil, fmt.Errorf("set %s: value position outside the text: %w", p, ErrUnsupported)
		}
		keyIndent := st.key.Column - 1
		end := v.Line
		comment := ""
		if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			end = f.endLine(keyIndent, v)
			if i := bytes.Index(line[col:], []byte(" #")); i >= 0 {
				comment = strings.TrimRight(string(line[col+i:]), "\r\n")
			}
		} else {
			if strings.Contains(v.Value, "\n") {
				return nil, fmt.Errorf("set %s: line %d holds a multi-line quoted value: %w", p, v.Line, ErrUnsupported)
			}
			tokEnd, err := tokenEnd(line, col, v.Style)
			if err != nil {
				return nil, fmt.Errorf("set %s at line %d: %w", p, v.Line, err)
			}
			comment = strings.TrimRight(string(line[tokEnd:]), " \t\r\n")
		}
		var b strings.Builder
		b.Write(line[:col])
		b.WriteString(header + comment + "\n")
		b.Write(indentLines(lines, keyIndent+2))
		out = f.replaceLines(v.Line, end, []byte(b.String()))
	} else {
		parent := root
		if len(steps) > 0 {
			parent = deref(steps[len(steps)-1].value)
		}
		if parent.Kind != yaml.MappingNode || len(parent.Content) == 0 {
			return nil, fmt.Errorf("add %s: %s is not a block mapping with fields: %w", p, p[:len(steps)], ErrUnsupported)
		}
		depth := len(p) - len(steps) - 1
		ind := parent.Content[0].Column - 1 + 2*depth + 2
		out, err = f.insertKeys(root, steps, p, true, func(int, int) ([]byte, error) {
			return []byte(header + "\n" + strings.TrimSuffix(string(indentLines(lines, ind)), "\n")), nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := verify(src, out, doc, func(d any) (any, bool) { return setAt(d, p, text) }); err != nil {
		return nil, fmt.Errorf("set %s: %w", p, err)
	}
	return out, nil
}

// blockLines splits text into the lines of a literal block and its header:
// "|" when it ends with one newline, "|-" when it ends with none.
func blockLines(text string) (string, []string, error) {
	if strings.ContainsRune(text, '\r') {
		return "", nil, fmt.Errorf("a carriage return in a block value: %w", ErrUnsupported)
	}
	header := "|"
	body, ok := strings.CutSuffix(text, "\n")
	if !ok {
		header = "|-"
	}
	if body == "" || strings.HasSuffix(body, "\n") {
		return "", nil, fmt.Errorf("a block value with no text or blank lines at its end: %w", ErrUnsupported)
	}
	lines := strings.Split(body, "\n")
	if l := lines[0]; strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || l == "" {
		return "", nil, fmt.Errorf("a block value whose first line is blank or indented: %w", ErrUnsupported)
	}
	for _, l := range lines {
		if l != "" && strings.TrimLeft(l, " \t") == "" {
			return "", nil, fmt.Errorf("a block value with a line of spaces only: %w", ErrUnsupported)
		}
	}
	return header, lines, nil
}

func indentLines(lines []string, n int) []byte {
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(pad + l)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// AppendTopItem adds item to the end of the list that is document doc (a
// file that is one block sequence, such as a JSON 6902 patch), with comment
// (if any) on the lines above it. Appending an item the list already holds
// changes nothing.
func AppendTopItem(src []byte, doc int, item any, comment string) ([]byte, error) {
	f, root, _, err := locate(src, doc, nil)
	if err != nil {
		return nil, err
	}
	seq := deref(root)
	if seq.Kind != yaml.SequenceNode || flow(seq) || len(seq.Content) == 0 {
		return nil, fmt.Errorf("append to document %d: it is not a block list with items: %w", doc, ErrUnsupported)
	}
	for _, c := range seq.Content {
		var v any
		if c.Decode(&v) == nil && drift.Equal(toPlain(v), toPlain(item)) {
			return src, nil
		}
	}
	body, err := renderItem(item, comment)
	if err != nil {
		return nil, err
	}
	first := seq.Content[0]
	ind := dashIndent(f.lineAt(first.Line), first.Column)
	if ind < 0 {
		return nil, fmt.Errorf("append to document %d: the list at line %d does not have one item per line: %w", doc, seq.Line, ErrUnsupported)
	}
	end := f.endLine(ind, seq.Content[len(seq.Content)-1])
	ins := indentBlock(body, ind)
	if end >= len(f.lines) && len(f.lines) > 0 && !bytes.HasSuffix(f.lines[len(f.lines)-1], []byte("\n")) {
		ins = append([]byte("\n"), ins...)
	}
	out := f.replaceLines(end+1, end, ins)
	err = verify(src, out, doc, func(d any) (any, bool) {
		l, ok := d.([]any)
		return append(append([]any{}, l...), toPlain(item)), ok
	})
	if err != nil {
		return nil, fmt.Errorf("append to document %d: %w", doc, err)
	}
	return out, nil
}
