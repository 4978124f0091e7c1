package argocd

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// valueScanner cuts a JSON stream into its values' bytes without decoding
// them: it finds where each value ends by its brackets and strings. It
// checks nothing else; what it hands on is checked where it is read
// (json.Valid, json.Unmarshal), or is byte for byte what was checked
// before. A list of 50,000 applications is cut in a fraction of what
// json.Decoder takes to tokenise it.
type valueScanner struct {
	r   io.Reader
	buf []byte
	pos int
	err error // the read error, io.EOF at the end
}

func newValueScanner(r io.Reader) *valueScanner {
	return &valueScanner{r: r, buf: make([]byte, 0, 64<<10)}
}

// fill reads more input; false at the end or on an error.
func (s *valueScanner) fill() bool {
	if s.err != nil {
		return false
	}
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:])
		s.buf, s.pos = s.buf[:n], 0
	}
	if len(s.buf) == cap(s.buf) {
		s.buf = append(s.buf, 0)[:len(s.buf)]
	}
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if err != nil {
		s.err = err
	}
	return n > 0 || err == nil
}

// fail is the error for input that ends early or cannot be read.
func (s *valueScanner) fail() error {
	if s.err == nil || errors.Is(s.err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return s.err
}

// peek skips white space and returns the next byte, false at the end.
func (s *valueScanner) peek() (byte, bool) {
	for {
		for s.pos < len(s.buf) {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, true
			}
		}
		if !s.fill() {
			return 0, false
		}
	}
}

// expect consumes the next byte after white space, which must be c.
func (s *valueScanner) expect(c byte) error {
	got, ok := s.peek()
	if !ok {
		return s.fail()
	}
	if got != c {
		return fmt.Errorf("want %q, got %q", c, got)
	}
	s.pos++
	return nil
}

// next reads up to the next member of an object or list: false with the
// closing bracket consumed, else true with the comma before any member but
// the first consumed.
func (s *valueScanner) next(closing byte, first bool) (bool, error) {
	c, ok := s.peek()
	if !ok {
		return false, s.fail()
	}
	if c == closing {
		s.pos++
		return false, nil
	}
	if !first {
		return true, s.expect(',')
	}
	return true, nil
}

// value appends the next value's bytes to dst: an object or a list to its
// closing bracket, a string to its closing quote, anything else to the
// next delimiter.
func (s *valueScanner) value(dst []byte) ([]byte, error) {
	c, ok := s.peek()
	if !ok {
		return dst, s.fail()
	}
	depth, inString, escaped := 0, false, false
	scalar := c != '{' && c != '[' && c != '"'
	for {
		chunk := s.buf[s.pos:]
		for i, b := range chunk {
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case b == '\\':
					escaped = true
				case b == '"':
					inString = false
					if depth == 0 {
						s.pos += i + 1
						return append(dst, chunk[:i+1]...), nil
					}
				}
			case scalar:
				if b == ',' || b == ']' || b == '}' || b == ' ' || b == '\t' || b == '\n' || b == '\r' {
					s.pos += i
					return append(dst, chunk[:i]...), nil
				}
			case b == '"':
				inString = true
			case b == '{' || b == '[':
				depth++
			case b == '}' || b == ']':
				depth--
				if depth == 0 {
					s.pos += i + 1
					return append(dst, chunk[:i+1]...), nil
				}
			}
		}
		dst = append(dst, chunk...)
		s.pos = len(s.buf)
		if !s.fill() {
			if scalar && errors.Is(s.err, io.EOF) {
				return dst, nil
			}
			return dst, s.fail()
		}
	}
}

// decodeStream reads Argo CD's application list as it streams in, one item
// at a time: an item byte for byte as one already read keeps its summary
// (l.known, by digest), any other is decoded. It gives what json.Unmarshal
// of the whole answer gives (FuzzListResponse), and refuses a list that
// names items twice.
func (l *listResponse) decodeStream(r io.Reader) error {
	s := newValueScanner(r)
	c, ok := s.peek()
	if !ok {
		return s.fail()
	}
	if c != '{' {
		top, err := s.value(nil)
		switch {
		case err != nil:
			return err
		case string(top) == "null":
			return s.end() // no applications
		case !json.Valid(top):
			return fmt.Errorf("the list is not JSON")
		}
		return fmt.Errorf("the list is %.20s, not an object", top)
	}
	s.pos++
	items := false
	var raw []byte
	for first := true; ; first = false {
		more, err := s.next('}', first)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		kraw, err := s.value(raw[:0])
		if err != nil {
			return err
		}
		var key string
		if err := json.Unmarshal(kraw, &key); err != nil {
			return fmt.Errorf("the list's key %.20s: %w", kraw, err)
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if !strings.EqualFold(key, "items") { // as encoding/json matches a key to a field
			v, err := s.value(kraw[:0])
			if err != nil {
				return err
			}
			if !json.Valid(v) {
				return fmt.Errorf("the list's %q is not JSON", key)
			}
			raw = v
			continue
		}
		if items {
			return fmt.Errorf("the list names items twice")
		}
		items = true
		if err := l.decodeItems(s, &raw); err != nil {
			return err
		}
	}
	return s.end()
}

// decodeItems reads the items value: null, or a list of applications.
func (l *listResponse) decodeItems(s *valueScanner, raw *[]byte) error {
	c, ok := s.peek()
	if !ok {
		return s.fail()
	}
	if c != '[' {
		v, err := s.value((*raw)[:0])
		if err != nil {
			return err
		}
		if string(v) == "null" {
			return nil
		}
		var list []json.RawMessage
		return json.Unmarshal(v, &list) // the error encoding/json gives
	}
	s.pos++
	if l.apps == nil && len(l.known) > 0 {
		l.apps = make([]AppSummary, 0, len(l.known)+len(l.known)/16)
	}
	for first := true; ; first = false {
		if more, err := s.next(']', first); err != nil || !more {
			return err
		}
		v, err := s.value((*raw)[:0])
		if err != nil {
			return err
		}
		*raw = v
		sum := sha256.Sum256(v)
		if i, ok := l.knownAt([16]byte(sum[:16])); ok {
			l.apps = append(l.apps, l.known[i])
			continue
		}
		var it listItem
		if err := json.Unmarshal(v, &it); err != nil {
			return err
		}
		l.add(&it, sum)
	}
}

// end checks that nothing but white space follows.
func (s *valueScanner) end() error {
	if _, ok := s.peek(); ok {
		return fmt.Errorf("more after the list")
	}
	if s.err != nil && !errors.Is(s.err, io.EOF) {
		return s.err
	}
	return nil
}

// knownAt finds an earlier summary by the digest of its item: first at the
// place this item has in the list (a fleet whose applications change in
// place lists them in the same order), else by the index, built on first
// need.
func (l *listResponse) knownAt(sum [16]byte) (int, bool) {
	if at := len(l.apps); at < len(l.known) && l.known[at].Listed == sum {
		return at, true
	}
	if len(l.known) == 0 {
		return 0, false
	}
	if l.index == nil {
		l.index = make(map[[16]byte]int32, len(l.known))
		for i, a := range l.known {
			l.index[a.Listed] = int32(i)
		}
	}
	i, ok := l.index[sum]
	return int(i), ok
}
