package diff

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeJSONObject decodes a JSON object (kubectl's last-applied
// configuration) as json.Unmarshal into a map[string]any does: objects as
// map[string]any (the last of repeated keys wins), arrays as []any, numbers
// as float64, strings, bools and nulls. It reads the plain JSON that
// encoders write; ok is false for anything else (\u escapes, invalid UTF-8,
// a number out of range, deep nesting, any syntax error, a value that is
// not an object), and the caller then asks encoding/json, which decides.
func decodeJSONObject(s string) (m map[string]any, ok bool) {
	r := jsonReader{s: s}
	r.space()
	if r.i >= len(s) || s[r.i] != '{' {
		return nil, false
	}
	v, ok := r.value(0)
	if !ok {
		return nil, false
	}
	r.space()
	if r.i != len(s) {
		return nil, false
	}
	m, ok = v.(map[string]any)
	return m, ok
}

// unmarshalObject is json.Unmarshal of s into a map[string]any, through
// decodeJSONObject where it can.
func unmarshalObject(s string) (map[string]any, error) {
	if m, ok := decodeJSONObject(s); ok {
		return m, nil
	}
	var o map[string]any
	err := json.Unmarshal([]byte(s), &o)
	return o, err
}

// maxJSONDepth is where decodeJSONObject leaves nesting to encoding/json
// (which has a limit of its own).
const maxJSONDepth = 512

type jsonReader struct {
	s string
	i int
}

func (r *jsonReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *jsonReader) value(depth int) (any, bool) {
	r.space()
	if r.i >= len(r.s) {
		return nil, false
	}
	switch c := r.s[r.i]; {
	case c == '{':
		return r.object(depth + 1)
	case c == '[':
		return r.array(depth + 1)
	case c == '"':
		return r.str()
	case c == 't':
		return true, r.literal("true")
	case c == 'f':
		return false, r.literal("false")
	case c == 'n':
		return nil, r.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	return nil, false
}

func (r *jsonReader) literal(word string) bool {
	if !strings.HasPrefix(r.s[r.i:], word) {
		return false
	}
	r.i += len(word)
	return true
}

func (r *jsonReader) object(depth int) (any, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	r.i++ // {
	m := map[string]any{}
	r.space()
	if r.i < len(r.s) && r.s[r.i] == '}' {
		r.i++
		return m, true
	}
	for {
		r.space()
		if r.i >= len(r.s) || r.s[r.i] != '"' {
			return nil, false
		}
		k, ok := r.str()
		if !ok {
			return nil, false
		}
		r.space()
		if r.i >= len(r.s) || r.s[r.i] != ':' {
			return nil, false
		}
		r.i++
		v, ok := r.value(depth)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		r.space()
		if r.i >= len(r.s) {
			return nil, false
		}
		switch r.s[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (r *jsonReader) array(depth int) (any, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	r.i++ // [
	l := []any{}
	r.space()
	if r.i < len(r.s) && r.s[r.i] == ']' {
		r.i++
		return l, true
	}
	for {
		v, ok := r.value(depth)
		if !ok {
			return nil, false
		}
		l = append(l, v)
		r.space()
		if r.i >= len(r.s) {
			return nil, false
		}
		switch r.s[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			return l, true
		default:
			return nil, false
		}
	}
}

// str reads a string: as written when it has no escape, with the one-letter
// escapes decoded otherwise; \u escapes and invalid UTF-8 are left to
// encoding/json.
func (r *jsonReader) str() (any, bool) {
	start := r.i + 1
	escaped, ascii := false, true
	j := start
	for ; j < len(r.s); j++ {
		c := r.s[j]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			escaped = true
			j++ // the escaped character
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if j >= len(r.s) {
		return nil, false
	}
	raw := r.s[start:j]
	r.i = j + 1
	if !ascii && !utf8.ValidString(raw) {
		return nil, false
	}
	if !escaped {
		return raw, true
	}
	var b strings.Builder
	b.Grow(len(raw))
	for k := 0; k < len(raw); k++ {
		c := raw[k]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		k++
		if k >= len(raw) {
			return nil, false
		}
		switch raw[k] {
		case '"', '\\', '/':
			b.WriteByte(raw[k])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			return nil, false // \u and invalid escapes
		}
	}
	return b.String(), true
}

// number reads a JSON number (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?)
// as float64, as encoding/json does for an interface value.
func (r *jsonReader) number() (any, bool) {
	s, i := r.s, r.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(s[r.i:i], 64)
	if err != nil {
		return nil, false
	}
	r.i = i
	return f, true
}
