package drift

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// SnapshotParts is a snapshot file read resource by resource: everything
// but its resources is held (Head), and each resource is read from the
// file again when asked for, so that a large snapshot is never held whole.
//
// It reads exactly what LoadSnapshot reads: OpenSnapshotParts declines
// (false) any file it cannot show to be read the same way part by part
// (any error, a YAML alias across resources, a layout it does not split),
// and the caller then reads the file whole, which names the problem.
type SnapshotParts struct {
	// Head is the snapshot without its resources.
	Head *Snapshot

	f     *os.File
	name  string
	spans []span
	yaml  bool
	lim   Limits
}

// span is one resource's bytes in the file, and their hash (the file must
// not change between two reads).
type span struct {
	off, n int64
	sum    uint64
}

// partHeader heads a one-resource document: the resource is read by the
// same reader, with the same checks and values, as inside the whole file.
const (
	partHeaderJSON = `{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"part"}},"resources":[`
	partHeaderYAML = "apiVersion: driftfix/v1\nkind: Snapshot\napplication: {apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: part}}\nresources:\n"
)

// OpenSnapshotParts opens a snapshot file to be read part by part under
// lim, and reads every resource once, in order, for visit (with the
// snapshot's head, read first). It returns false
// when the file must be read whole instead (see SnapshotParts).
func OpenSnapshotParts(path string, lim Limits, visit func(head *Snapshot, i int, r *Resource)) (*SnapshotParts, bool) {
	lim = lim.withDefaults()
	// A pipe or a device is read once, whole: it is not even opened here.
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	p := &SnapshotParts{f: f, name: path, lim: lim}
	if !p.open(visit) {
		f.Close()
		return nil, false
	}
	return p, true
}

func (p *SnapshotParts) open(visit func(*Snapshot, int, *Resource)) bool {
	fi, err := p.f.Stat()
	if err != nil || !fi.Mode().IsRegular() || overLimit(fi.Size(), p.lim.MaxBytes) {
		return false
	}
	br := bufio.NewReaderSize(p.f, 64<<10)
	first, err := firstByte(br)
	if err != nil {
		return false
	}
	var head []byte
	var ok bool
	if first == '{' {
		head, ok = p.scanJSON(br)
	} else {
		p.yaml = true
		head, ok = p.scanYAML(br)
	}
	if !ok || overLimit(len(p.spans), p.lim.MaxResources) {
		return false
	}
	var budget counts
	if p.Head, budget, ok = p.parse(head); !ok || len(p.Head.Resources) != 0 {
		return false
	}
	for i := range p.spans {
		rs, c, err := p.read(i, i+1)
		if err != nil {
			return false
		}
		if budget = budget.add(c); budget.over() {
			return false
		}
		visit(p.Head, i, &rs[0])
	}
	return true
}

// counts are the YAML reader's alias expansions and values, which the whole
// file reads under one bound.
type counts struct{ aliases, nodes int }

func (c counts) add(d counts) counts { return counts{c.aliases + d.aliases, c.nodes + d.nodes} }
func (c counts) over() bool          { return c.aliases > maxAliasExpansions || c.nodes > maxNodes }

// parse reads one document: JSON only by the quick reader (the whole file
// would go to the YAML reader otherwise, under bounds for the whole), YAML
// by the YAML reader, with its counts.
func (p *SnapshotParts) parse(doc []byte) (*Snapshot, counts, bool) {
	if !p.yaml {
		s, ok, err := parseJSONSnapshot(doc, p.lim)
		return s, counts{}, ok && err == nil
	}
	s, c, err := parseYAMLCounted(doc, p.lim)
	return s, c, err == nil
}

// Len is the number of resources.
func (p *SnapshotParts) Len() int { return len(p.spans) }

// Resources reads resources i to j-1 from the file.
func (p *SnapshotParts) Resources(i, j int) ([]Resource, error) {
	rs, _, err := p.read(i, j)
	return rs, err
}

func (p *SnapshotParts) read(i, j int) ([]Resource, counts, error) {
	var total counts
	out := make([]Resource, 0, j-i)
	var buf []byte
	for k := i; k < j; k++ {
		sp := p.spans[k]
		header := partHeaderJSON
		if p.yaml {
			header = partHeaderYAML
		}
		buf = append(buf[:0], header...)
		buf = append(buf, make([]byte, sp.n)...)
		body := buf[len(header):]
		if _, err := p.f.ReadAt(body, sp.off); err != nil {
			return nil, total, fmt.Errorf("read snapshot %s: %w", p.name, err)
		}
		h := fnv.New64a()
		h.Write(body)
		if h.Sum64() != sp.sum {
			return nil, total, fmt.Errorf("read snapshot %s: the file changed while it was read", p.name)
		}
		if !p.yaml {
			buf = append(buf, "]}"...)
		}
		s, c, ok := p.parse(buf)
		if !ok || len(s.Resources) != 1 {
			return nil, total, fmt.Errorf("read snapshot %s: resources[%d] does not read as it did", p.name, k)
		}
		total = total.add(c)
		out = append(out, s.Resources[0])
	}
	return out, total, nil
}

// Close closes the file.
func (p *SnapshotParts) Close() error { return p.f.Close() }

func firstByte(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c, br.UnreadByte()
		}
	}
}

// scanJSON finds each resource's bytes and returns the rest of the
// document with an empty resources list, keys in their order.
func (p *SnapshotParts) scanJSON(br *bufio.Reader) ([]byte, bool) {
	dec := json.NewDecoder(br)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	head := []byte{'{'}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		if err != nil || !isKey || seen[key] {
			return nil, false
		}
		seen[key] = true
		if len(head) > 1 {
			head = append(head, ',')
		}
		k, _ := json.Marshal(key)
		head = append(append(head, k...), ':')
		if key != "resources" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, false
			}
			head = append(head, raw...)
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, false
		}
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, false
			}
			end := dec.InputOffset()
			h := fnv.New64a()
			h.Write(raw)
			p.spans = append(p.spans, span{off: end - int64(len(raw)), n: int64(len(raw)), sum: h.Sum64()})
		}
		if t, err := dec.Token(); err != nil || t != json.Delim(']') {
			return nil, false
		}
		head = append(head, "[]"...)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return append(head, '}'), true
}

// scanYAML splits a block-style YAML snapshot: top-level keys start at
// column 0, and resources is a block sequence whose items start with "- "
// at one indentation, everything else of an item indented deeper. Anything
// else (flow style at the top, documents markers inside, tabs, quoted or
// complex keys) declines.
func (p *SnapshotParts) scanYAML(br *bufio.Reader) ([]byte, bool) {
	var head []byte
	var off int64
	inResources, started := false, false
	indent := -1
	var item []byte
	var itemOff int64
	flush := func() {
		if item != nil {
			h := fnv.New64a()
			h.Write(item)
			p.spans = append(p.spans, span{off: itemOff, n: int64(len(item)), sum: h.Sum64()})
			item = nil
		}
	}
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read it whole.
			rest, err2 := br.ReadBytes('\n')
			line = append(append([]byte(nil), line...), rest...)
			err = err2
		}
		if len(line) == 0 && err != nil {
			break
		}
		at := off
		off += int64(len(line))
		text := bytes.TrimRight(line, "\r\n")
		trimmed := bytes.TrimLeft(text, " ")
		blank := len(bytes.TrimSpace(text)) == 0
		comment := !blank && trimmed[0] == '#'
		switch {
		case len(text) > 0 && text[0] != ' ' && text[0] != '#' && (text[0] != '-' || bytes.HasPrefix(text, []byte("---"))) && !blank:
			// A top-level line: a key, or the document's start.
			if bytes.Equal(text, []byte("---")) && !started {
				head = append(head, line...)
				continue
			}
			key, rest, ok := bytes.Cut(text, []byte(":"))
			if !ok || !plainKey(key) || len(rest) > 0 && rest[0] != ' ' {
				return nil, false
			}
			started = true
			flush()
			inResources = string(key) == "resources"
			if inResources {
				if r := bytes.TrimSpace(rest); len(r) > 0 && r[0] != '#' {
					return nil, false // a flow list, or a value on the key's line
				}
				if indent != -1 {
					return nil, false
				}
				indent = -2 // the key is seen; its items' indentation is not yet
				head = append(head, "resources: []\n"...)
				continue
			}
			head = append(head, line...)
		case !inResources:
			head = append(head, line...)
		case blank || comment:
			if item != nil {
				item = append(item, line...)
			}
		default:
			n := len(text) - len(trimmed)
			if len(trimmed) > 0 && trimmed[0] == '\t' {
				return nil, false
			}
			isItem := bytes.HasPrefix(trimmed, []byte("- ")) || bytes.Equal(trimmed, []byte("-"))
			switch {
			case indent == -2 && isItem:
				indent = n
			case indent == -2:
				return nil, false
			}
			switch {
			case n == indent && isItem:
				flush()
				item, itemOff = append([]byte(nil), line...), at
			case n > indent && item != nil:
				item = append(item, line...)
			default:
				return nil, false
			}
		}
		if err != nil {
			break
		}
	}
	flush()
	if indent < 0 {
		return nil, false // no resources key, or no list under it: the whole read names it
	}
	return head, true
}

// plainKey is a top-level key the splitter reads as the YAML reader does:
// letters only.
func plainKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
