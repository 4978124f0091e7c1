package drift

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Pointer is an RFC 6901 JSON pointer, held as its unescaped reference tokens.
// The empty Pointer refers to the whole document.
type Pointer []string

// ErrBadPointer is returned for text that is not an RFC 6901 JSON pointer.
var ErrBadPointer = errors.New("invalid JSON pointer")

// ParsePointer parses an RFC 6901 JSON pointer such as "/spec/template/spec/containers/0".
func ParsePointer(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if s[0] != '/' {
		return nil, fmt.Errorf("%w %q: must start with '/'", ErrBadPointer, s)
	}
	parts := strings.Split(s[1:], "/")
	p := make(Pointer, len(parts))
	for i, tok := range parts {
		u, err := unescapeToken(tok)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrBadPointer, s, err)
		}
		p[i] = u
	}
	return p, nil
}

// MustPointer parses s and panics on error; for constants in code and tests.
func MustPointer(s string) Pointer {
	p, err := ParsePointer(s)
	if err != nil {
		panic(err)
	}
	return p
}

func unescapeToken(tok string) (string, error) {
	if !strings.Contains(tok, "~") {
		return tok, nil
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c != '~' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(tok) {
			return "", errors.New("'~' at end of token")
		}
		switch tok[i+1] {
		case '0':
			b.WriteByte('~')
		case '1':
			b.WriteByte('/')
		default:
			return "", fmt.Errorf("'~%c' is not an escape (use ~0 or ~1)", tok[i+1])
		}
		i++
	}
	return b.String(), nil
}

// EscapeToken escapes one reference token ("~" as "~0", "/" as "~1").
func EscapeToken(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	tok = strings.ReplaceAll(tok, "~", "~0")
	return strings.ReplaceAll(tok, "/", "~1")
}

// String renders the pointer in RFC 6901 form.
func (p Pointer) String() string {
	if len(p) == 0 {
		return ""
	}
	n := 0
	for _, t := range p {
		n += len(t) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for _, t := range p {
		b.WriteByte('/')
		b.WriteString(EscapeToken(t))
	}
	return b.String()
}

// Child returns a new pointer with tok appended; p is not modified.
func (p Pointer) Child(tok string) Pointer {
	c := make(Pointer, len(p)+1)
	copy(c, p)
	c[len(p)] = tok
	return c
}

// Index returns a new pointer with the list index i appended.
func (p Pointer) Index(i int) Pointer { return p.Child(strconv.Itoa(i)) }

// HasPrefix reports whether q is p itself or an ancestor of p.
func (p Pointer) HasPrefix(q Pointer) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// Related reports whether one of p and q contains the other.
func (p Pointer) Related(q Pointer) bool { return p.HasPrefix(q) || q.HasPrefix(p) }

// Matches reports whether p is the path a pattern names, step by step, as
// the safety model's patterns match ("*" is any one step).
func (p Pointer) Matches(pattern Pointer) bool {
	return len(p) == len(pattern) && prefixMatches(pattern, p)
}

// Last returns the final token, or "" for the whole document.
func (p Pointer) Last() string {
	if len(p) == 0 {
		return ""
	}
	return p[len(p)-1]
}

// Get resolves the pointer in a decoded JSON/YAML value.
func (p Pointer) Get(doc any) (any, bool) {
	cur := doc
	for _, tok := range p {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Delete removes the value the pointer names from doc, in place, and reports
// whether anything was removed. Deleting a list item shifts the later items.
func (p Pointer) Delete(doc any) (any, bool) {
	if len(p) == 0 {
		return nil, doc != nil
	}
	parent, ok := p[:len(p)-1].Get(doc)
	if !ok {
		return doc, false
	}
	last := p[len(p)-1]
	switch v := parent.(type) {
	case map[string]any:
		if _, ok := v[last]; !ok {
			return doc, false
		}
		delete(v, last)
		return doc, true
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(v) {
			return doc, false
		}
		nv := append(v[:i:i], v[i+1:]...)
		if len(p) == 1 {
			return nv, true
		}
		gp, _ := p[:len(p)-2].Get(doc)
		switch g := gp.(type) {
		case map[string]any:
			g[p[len(p)-2]] = nv
		case []any:
			j, _ := strconv.Atoi(p[len(p)-2])
			g[j] = nv
		}
		return doc, true
	}
	return doc, false
}
