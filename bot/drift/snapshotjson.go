package drift

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// errNotQuick means the quick JSON reader leaves the input to the YAML
// reader: it is not JSON, or it is JSON with a problem the YAML reader
// reports with its line and field.
var errNotQuick = errors.New("not read by the quick JSON reader")

// parseJSONSnapshot reads a JSON snapshot straight into Go values, without
// the YAML node tree (which costs some thirty times the input). ok is false
// when the YAML reader must read the input instead; the values it accepts are
// the ones the YAML reader produces, and every error it returns itself is a
// limit, with its line.
func parseJSONSnapshot(data []byte, lim Limits) (s *Snapshot, ok bool, err error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' || !utf8.Valid(data) || !yamlPrintable(data) {
		return nil, false, nil
	}
	r := &jsonReader{data: data, lim: lim, yaml: true}
	v, err := r.value(0)
	if err == nil && !r.end() {
		err = errNotQuick // more after the value: the YAML reader names it
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return nil, true, pe
	}
	if err != nil {
		return nil, false, nil
	}
	top, _ := v.(map[string]any)
	s, good := snapshotFromValues(top, lim)
	if !good {
		return nil, false, nil
	}
	return s, true, nil
}

// yamlPrintable reports whether valid UTF-8 data holds only characters a
// YAML stream may (tab, line breaks, printable ASCII, NEL, and the rest of
// Unicode but surrogates, U+FFFE and U+FFFF). JSON allows the others raw,
// DEL and the C1 controls among them; the YAML reader refuses them and says
// so, so the quick reader leaves such input to it.
func yamlPrintable(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c == 0x7f || c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r < 0xA0 && r != 0x85 || r > 0xD7FF && r < 0xE000 || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += n
	}
	return true
}

// jsonReader reads JSON from a byte slice into Go values. Strings without
// escapes are one copy of their bytes; nothing else is buffered.
type jsonReader struct {
	data  []byte
	pos   int
	lim   Limits
	nodes int
	// floats reads every number as a float64, as json.Unmarshal into an
	// any does (DecodeJSONFloats).
	floats bool
	// yaml leaves to the YAML reader what it reads differently from
	// encoding/json: a snapshot is read as the YAML reader reads it.
	yaml bool
}

// line is the line of the reader's position.
func (r *jsonReader) line() int {
	return bytes.Count(r.data[:r.pos], []byte{'\n'}) + 1
}

func (r *jsonReader) ws() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\r', '\n':
			r.pos++
		default:
			return
		}
	}
}

// end reports whether only white space is left.
func (r *jsonReader) end() bool {
	r.ws()
	return r.pos == len(r.data)
}

func (r *jsonReader) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errNotQuick
	}
	if r.nodes++; r.nodes > maxNodes {
		return nil, errNotQuick
	}
	r.ws()
	if r.pos >= len(r.data) {
		return nil, errNotQuick
	}
	switch c := r.data[r.pos]; {
	case c == '{':
		r.pos++
		out := map[string]any{}
		r.ws()
		if r.pos < len(r.data) && r.data[r.pos] == '}' {
			r.pos++
			return out, nil
		}
		for {
			r.ws()
			if r.pos >= len(r.data) || r.data[r.pos] != '"' {
				return nil, errNotQuick
			}
			k, err := r.str("a key's length")
			if err != nil {
				return nil, err
			}
			if _, dup := out[k]; dup || k == "<<" {
				return nil, errNotQuick
			}
			at := r.pos
			r.ws()
			if r.pos >= len(r.data) || r.data[r.pos] != ':' {
				return nil, errNotQuick
			}
			if r.yaml && bytes.ContainsAny(r.data[at:r.pos], "\r\n") {
				// YAML's flow keys end on their line: the YAML reader
				// refuses a line break before the colon, and says where.
				return nil, errNotQuick
			}
			r.pos++
			v, err := r.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out[k] = v
			r.ws()
			if r.pos >= len(r.data) {
				return nil, errNotQuick
			}
			if r.data[r.pos] == ',' {
				r.pos++
				continue
			}
			if r.data[r.pos] == '}' {
				r.pos++
				return out, nil
			}
			return nil, errNotQuick
		}
	case c == '[':
		r.pos++
		out := []any{}
		r.ws()
		if r.pos < len(r.data) && r.data[r.pos] == ']' {
			r.pos++
			return out, nil
		}
		for {
			v, err := r.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			r.ws()
			if r.pos >= len(r.data) {
				return nil, errNotQuick
			}
			if r.data[r.pos] == ',' {
				r.pos++
				continue
			}
			if r.data[r.pos] == ']' {
				r.pos++
				return out, nil
			}
			return nil, errNotQuick
		}
	case c == '"':
		return r.str("a string's length")
	case c == 't' && bytes.HasPrefix(r.data[r.pos:], []byte("true")):
		r.pos += 4
		return true, nil
	case c == 'f' && bytes.HasPrefix(r.data[r.pos:], []byte("false")):
		r.pos += 5
		return false, nil
	case c == 'n' && bytes.HasPrefix(r.data[r.pos:], []byte("null")):
		r.pos += 4
		return nil, nil
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	return nil, errNotQuick
}

// str reads a string at r.pos (an opening quote), checking its length.
func (r *jsonReader) str(what string) (string, error) {
	start := r.pos + 1
	i := start
	escaped := false
	for ; i < len(r.data); i++ {
		c := r.data[i]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return "", errNotQuick
		}
		if c == '\\' {
			escaped = true
			i++
		}
	}
	if i >= len(r.data) {
		return "", errNotQuick
	}
	if overLimit(int64(i-start), r.lim.MaxStringBytes) {
		return "", &ParseError{Line: r.line(), Msg: limitMsg(what, i-start, "MaxStringBytes", r.lim.MaxStringBytes)}
	}
	raw := r.data[start:i]
	r.pos = i + 1
	if !escaped {
		return string(raw), nil
	}
	var b strings.Builder
	b.Grow(len(raw))
	for j := 0; j < len(raw); j++ {
		if raw[j] != '\\' {
			// Copy up to the next escape at once.
			k := bytes.IndexByte(raw[j:], '\\')
			if k < 0 {
				b.Write(raw[j:])
				break
			}
			b.Write(raw[j : j+k])
			j += k
		}
		j++
		switch raw[j] {
		case '"', '\\':
			b.WriteByte(raw[j])
		case '/':
			if r.yaml {
				// JSON's \/ is no YAML escape: the YAML reader refuses
				// it, and says where.
				return "", errNotQuick
			}
			b.WriteByte('/')
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
		case 'u':
			if j+4 >= len(raw) {
				return "", errNotQuick
			}
			n, err := strconv.ParseUint(string(raw[j+1:j+5]), 16, 32)
			if err != nil || n >= 0xd800 && n < 0xe000 {
				return "", errNotQuick // surrogates: the YAML reader refuses them
			}
			b.WriteRune(rune(n))
			j += 4
		default:
			return "", errNotQuick
		}
	}
	return b.String(), nil
}

// number reads a JSON number at r.pos.
func (r *jsonReader) number() (any, error) {
	start := r.pos
	d := r.data
	i := r.pos
	digits := func() int {
		n := 0
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(d) && d[i] == '-' {
		i++
	}
	if i < len(d) && d[i] == '0' {
		i++
	} else if digits() == 0 {
		return nil, errNotQuick
	}
	if i < len(d) && d[i] == '.' {
		i++
		if digits() == 0 {
			return nil, errNotQuick
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, errNotQuick
		}
	}
	r.pos = i
	if r.floats {
		f, err := strconv.ParseFloat(string(d[start:i]), 64)
		if err != nil {
			return nil, errNotQuick // out of range: encoding/json says so
		}
		return f, nil
	}
	return jsonNumber(string(d[start:i]))
}

// jsonNumber converts a JSON number as the YAML reader does: an integer is
// an int64 (a float64 when it does not fit), anything with a fraction or an
// exponent a float64.
func jsonNumber(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, errNotQuick // out of range: the YAML reader says so
	}
	return f, nil
}

// snapshotFromValues checks a decoded snapshot as ParseSnapshot does and
// builds it; false means the YAML reader must report what is wrong.
func snapshotFromValues(top map[string]any, lim Limits) (*Snapshot, bool) {
	if top == nil || !onlyKeys(top, "apiVersion", "kind", "application", "resources", "renders", "cluster", "repo") {
		return nil, false
	}
	if av, _ := top["apiVersion"].(string); av != SnapshotAPIVersion {
		return nil, false
	}
	if k, _ := top["kind"].(string); k != "Snapshot" {
		return nil, false
	}
	s := &Snapshot{}
	var ok bool
	if s.Application, ok = quickObject(top["application"]); !ok || Str(s.Application, "kind") != "Application" {
		return nil, false
	}
	items, isList := top["resources"].([]any)
	if !isList || overLimit(len(items), lim.MaxResources) {
		return nil, false
	}
	for _, it := range items {
		m, isMap := it.(map[string]any)
		if !isMap || !onlyKeys(m, "target", "live", "normalizedLive", "predictedLive", "dryRun") {
			return nil, false
		}
		var r Resource
		for _, k := range []struct {
			name string
			dst  *Object
		}{{"target", &r.Target}, {"live", &r.Live}, {"normalizedLive", &r.NormalizedLive}, {"predictedLive", &r.PredictedLive}, {"dryRun", &r.DryRun}} {
			if m[k.name] == nil {
				continue
			}
			if *k.dst, ok = quickObject(m[k.name]); !ok {
				return nil, false
			}
		}
		if r.Target == nil && r.Live == nil {
			return nil, false
		}
		if r.Target != nil && r.Live != nil {
			t, l := RefOf(r.Target), RefOf(r.Live)
			if t.Kind != l.Kind || t.Name != l.Name || t.Group != l.Group {
				return nil, false
			}
		}
		s.Resources = append(s.Resources, r)
	}
	list := func(v any) ([]Object, bool) {
		l, isList := v.([]any)
		if !isList || overLimit(len(l), lim.MaxResources) {
			return nil, false
		}
		out := make([]Object, 0, len(l))
		for _, e := range l {
			o, ok := quickObject(e)
			if !ok {
				return nil, false
			}
			out = append(out, o)
		}
		return out, true
	}
	if v := top["renders"]; v != nil {
		rs, isList := v.([]any)
		if !isList {
			return nil, false
		}
		for _, r := range rs {
			objs, ok := list(r)
			if !ok {
				return nil, false
			}
			s.Renders = append(s.Renders, objs)
		}
	}
	if v := top["cluster"]; v != nil {
		if s.Cluster, ok = list(v); !ok {
			return nil, false
		}
	}
	if v, present := top["repo"]; present && v != nil {
		repo, isMap := v.(map[string]any)
		if !isMap || !onlyKeys(repo, "files") {
			return nil, false
		}
		s.Repo.Files = map[string]string{}
		if fv := repo["files"]; fv != nil {
			files, isMap := fv.(map[string]any)
			if !isMap {
				return nil, false
			}
			for k, c := range files {
				content, isStr := c.(string)
				if !isStr {
					return nil, false
				}
				s.Repo.Files[k] = content
			}
		}
	}
	return s, true
}

func onlyKeys(m map[string]any, known ...string) bool {
	n := 0
	for _, k := range known {
		if _, ok := m[k]; ok {
			n++
		}
	}
	return n == len(m)
}

// quickObject is a Kubernetes object with apiVersion, kind and metadata.name.
func quickObject(v any) (Object, bool) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	for _, req := range []string{"apiVersion", "kind"} {
		if s, ok := o[req].(string); !ok || s == "" {
			return nil, false
		}
	}
	return o, Str(o, "metadata", "name") != ""
}

// DecodeJSON reads one JSON value as snapshots are read (integers as int64,
// other numbers as float64, objects as map[string]any), or reports that it
// cannot (ok false: deeper than snapshots nest, or not valid JSON), in which
// case the caller decodes it another way.
func DecodeJSON(data []byte) (v any, ok bool) {
	return decodeJSON(data, false)
}

// DecodeJSONFloats is DecodeJSON with every number a float64, as
// json.Unmarshal into an any gives them. It also reports that it cannot
// read a repeated key, which json.Unmarshal takes the last of.
func DecodeJSONFloats(data []byte) (v any, ok bool) {
	return decodeJSON(data, true)
}

func decodeJSON(data []byte, floats bool) (v any, ok bool) {
	if !utf8.Valid(data) {
		return nil, false
	}
	r := &jsonReader{data: data, lim: Limits{MaxBytes: -1, MaxResources: -1, MaxStringBytes: -1}, floats: floats}
	v, err := r.value(0)
	if err != nil || !r.end() {
		return nil, false
	}
	return v, true
}
