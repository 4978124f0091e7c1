package yamledit

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// pointers lists every path in a decoded document, in a stable order.
func pointers(v any, at drift.Pointer, out *[]drift.Pointer) {
	*out = append(*out, at)
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			pointers(x[k], at.Child(k), out)
		}
	case []any:
		for i, e := range x {
			pointers(e, at.Index(i), out)
		}
	}
}

// FuzzEdit edits random documents at paths taken from the documents: the
// editor never panics, refuses with a typed error or returns YAML that parses,
// and leaves every line outside the change byte-identical.
func FuzzEdit(f *testing.F) {
	f.Add(deployment, uint16(3), uint8(0), "1")
	f.Add(deployment, uint16(17), uint8(1), "x: y")
	f.Add(application, uint16(2), uint8(2), "RespectIgnoreDifferences=true")
	f.Add("a:\n  - b\n  - c: |\n      x\n      y\n  - &r {d: 1}\ne: *r\n", uint16(4), uint8(0), "")
	f.Add("# c\n---\nk: v # t\n...\n", uint16(1), uint8(1), "\"q\"")
	f.Fuzz(func(t *testing.T, src string, pick uint16, op uint8, val string) {
		docs, err := Documents([]byte(src))
		if err != nil || len(docs) == 0 {
			return
		}
		var ps []drift.Pointer
		pointers(docs[0], drift.Pointer{}, &ps)
		p := ps[int(pick)%len(ps)]
		var out []byte
		switch op % 4 {
		case 0:
			out, err = Remove([]byte(src), 0, p)
		case 1:
			out, err = SetScalar([]byte(src), 0, p, val)
		case 2:
			out, err = AppendItem([]byte(src), 0, p, val, "driftfix")
		case 3:
			out, err = SetValue([]byte(src), 0, append(append(drift.Pointer{}, p...), "added"), val)
		}
		if err != nil {
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrNotFound) && !strings.Contains(err.Error(), "refusing") && !strings.Contains(err.Error(), "parse YAML") {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if _, err := Documents(out); err != nil {
			t.Fatalf("edited YAML does not parse: %v\n%s", err, out)
		}
		before := strings.SplitAfter(src, "\n")
		after := strings.SplitAfter(string(out), "\n")
		i := 0
		for i < len(before) && i < len(after) && before[i] == after[i] {
			i++
		}
		j := 0
		for j < len(before)-i && j < len(after)-i && before[len(before)-1-j] == after[len(after)-1-j] {
			j++
		}
		changedBefore := len(before) - i - j
		changedAfter := len(after) - i - j
		switch op % 4 {
		case 0:
			if changedAfter != 0 && !(changedAfter == 1 && after[i] == "") {
				t.Fatalf("remove rewrote lines instead of only deleting them:\n%s\n---\n%s", src, out)
			}
		case 1:
			if changedBefore > 1 || changedAfter > 1 {
				t.Fatalf("set changed %d lines:\n%s\n---\n%s", changedBefore, src, out)
			}
		case 2, 3:
			if changedBefore > 1 {
				t.Fatalf("append rewrote %d existing lines:\n%s\n---\n%s", changedBefore, src, out)
			}
		}
	})
}
