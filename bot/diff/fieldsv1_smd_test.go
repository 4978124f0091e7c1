package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/driftfix/driftfix/bot/drift"
)

// members lists the paths a parsed FieldSet owns, each element written the
// same way for both parsers: .name, [k=JSON], [v=JSON], [i].
func (f *FieldSet) members(prefix string, out *[]string) {
	if prefix != "" && (f.self || f.leaf()) { // the root is never a member
		*out = append(*out, prefix)
	}
	for name, c := range f.fields {
		c.members(prefix+"."+name, out)
	}
	for _, k := range f.keys {
		b, _ := json.Marshal(k.key)
		k.node.members(prefix+"[k="+string(b)+"]", out)
	}
	for _, v := range f.values {
		b, _ := json.Marshal(v.value)
		v.node.members(prefix+"[v="+string(b)+"]", out)
	}
	for i, c := range f.indexes {
		c.members(prefix+"["+strconv.Itoa(i)+"]", out)
	}
}

// smdMembers lists the paths structured-merge-diff's own FieldsV1 reader
// finds, written as members writes them.
func smdMembers(raw []byte) ([]string, error) {
	var s fieldpath.Set
	if err := s.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	var out []string
	s.Iterate(func(p fieldpath.Path) {
		var b bytes.Buffer
		for _, pe := range p {
			switch {
			case pe.FieldName != nil:
				b.WriteString("." + *pe.FieldName)
			case pe.Key != nil:
				m := map[string]any{}
				for _, f := range *pe.Key {
					m[f.Name] = f.Value.Unstructured()
				}
				j, _ := json.Marshal(m)
				b.WriteString("[k=" + string(j) + "]")
			case pe.Value != nil:
				j, _ := json.Marshal((*pe.Value).Unstructured())
				b.WriteString("[v=" + string(j) + "]")
			case pe.Index != nil:
				b.WriteString("[" + strconv.Itoa(*pe.Index) + "]")
			}
		}
		out = append(out, b.String())
	})
	return out, nil
}

// agreeWithSMD compares driftfix's FieldsV1 reader with structured-merge-
// diff's, the API server's own, on one input: the same owned paths where
// both read it. Where only one reads it, the difference is returned.
func agreeWithSMD(raw []byte) (string, bool) {
	ours, errOurs := ParseFieldsV1JSON(raw)
	theirs, errSMD := smdMembers(raw)
	if errOurs != nil || errSMD != nil {
		return fmt.Sprintf("driftfix: %v; structured-merge-diff: %v", errOurs, errSMD), (errOurs == nil) == (errSMD == nil) || errOurs != nil
	}
	var got []string
	ours.members("", &got)
	sort.Strings(got)
	sort.Strings(theirs)
	if !slices.Equal(got, theirs) {
		return fmt.Sprintf("driftfix owns %q, structured-merge-diff %q", got, theirs), false
	}
	return "", true
}

// TestFieldsV1AgreesWithSMD reads every managedFields entry of every
// snapshot in the repository's corpora with both readers: driftfix's
// FieldsV1 reader must own exactly the paths structured-merge-diff owns.
func TestFieldsV1AgreesWithSMD(t *testing.T) {
	n := 0
	for _, glob := range []string{"../../testdata/*/*.yaml", "../../testdata/*/*/*.yaml", "../../bot/*/testdata/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			s, err := drift.LoadSnapshot(f)
			if err != nil {
				continue // not a snapshot
			}
			for _, r := range s.Resources {
				for _, e := range drift.List(r.Live, "metadata", "managedFields") {
					fv := drift.Lookup(e, "fieldsV1")
					if fv == nil {
						continue
					}
					raw, _ := json.Marshal(fv)
					n++
					if why, ok := agreeWithSMD(raw); !ok {
						t.Errorf("%s %s: %s", f, r.Ref(), why)
					}
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("read only %d managedFields entries in the corpora", n)
	}
	t.Logf("%d managedFields entries agree", n)
}

// FuzzFieldsV1AgainstSMD: on any input structured-merge-diff reads,
// driftfix's reader owns the same paths; an input driftfix reads and it
// refuses is a difference too (driftfix may be stricter, never looser).
func FuzzFieldsV1AgainstSMD(f *testing.F) {
	for _, s := range []string{`{"f:spec":{"f:replicas":{}}}`, `{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`,
		`{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{}}}}}`, `{"f:finalizers":{"v:\"a\"":{}}}`,
		`{"f:args":{"i:0":{}}}`, `{}`, `{"f:a":null}`, `{"x":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if why, ok := agreeWithSMD(raw); !ok {
			t.Fatalf("%s: %s", raw, why)
		}
	})
}
