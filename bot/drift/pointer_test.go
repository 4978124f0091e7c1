package drift

import (
	"errors"
	"testing"
)

func TestParsePointer(t *testing.T) {
	tests := []struct {
		in      string
		want    Pointer
		wantErr bool
	}{
		{"", Pointer{}, false},
		{"/", Pointer{""}, false},
		{"/spec/replicas", Pointer{"spec", "replicas"}, false},
		{"/metadata/annotations/deployment.kubernetes.io~1revision", Pointer{"metadata", "annotations", "deployment.kubernetes.io/revision"}, false},
		{"/a~0b", Pointer{"a~b"}, false},
		{"/a~01", Pointer{"a~1"}, false},
		{"spec", nil, true},
		{"/a~2", nil, true},
		{"/a~", nil, true},
	}
	for _, tt := range tests {
		got, err := ParsePointer(tt.in)
		if tt.wantErr {
			if !errors.Is(err, ErrBadPointer) {
				t.Errorf("ParsePointer(%q) error = %v, want ErrBadPointer", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePointer(%q): %v", tt.in, err)
			continue
		}
		if len(got) != len(tt.want) || got.String() != tt.in {
			t.Errorf("ParsePointer(%q) = %#v (renders %q)", tt.in, got, got.String())
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("ParsePointer(%q)[%d] = %q, want %q", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

func TestPointerGetAndDelete(t *testing.T) {
	doc := map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}},
	}}
	if v, ok := MustPointer("/spec/containers/1/name").Get(doc); !ok || v != "b" {
		t.Fatalf("Get = %v, %v; want b", v, ok)
	}
	for _, bad := range []string{"/spec/containers/2", "/spec/containers/01", "/spec/containers/-1", "/spec/x", "/spec/containers/0/name/x"} {
		if _, ok := MustPointer(bad).Get(doc); ok {
			t.Errorf("Get(%s) found a value", bad)
		}
	}
	doc2, ok := MustPointer("/spec/containers/0").Delete(doc)
	if !ok {
		t.Fatal("Delete reported nothing removed")
	}
	if v, _ := MustPointer("/spec/containers/0/name").Get(doc2); v != "b" {
		t.Fatalf("after delete containers/0 is %v, want b", v)
	}
	if _, ok := MustPointer("/nope").Delete(doc2); ok {
		t.Fatal("Delete of a missing path reported a removal")
	}
}

func TestPointerRelations(t *testing.T) {
	a, b := MustPointer("/spec/template"), MustPointer("/spec/template/spec")
	if !b.HasPrefix(a) || a.HasPrefix(b) || !a.Related(b) || !b.Related(a) {
		t.Fatal("prefix relations wrong")
	}
	if MustPointer("/spec/templates").HasPrefix(a) {
		t.Fatal("a longer token is not a prefix")
	}
}

// FuzzParsePointer: no panic; whatever parses renders back to the same text,
// and resolving it against any document does not panic.
func FuzzParsePointer(f *testing.F) {
	for _, s := range []string{"", "/", "/a/b", "/a~1b/~0", "/0/1", "x", "/~", "/~2"} {
		f.Add(s)
	}
	doc := map[string]any{"a": []any{map[string]any{"b": 1}}, "": "root"}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePointer(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("ParsePointer(%q).String() = %q", s, p.String())
		}
		q, err := ParsePointer(p.String())
		if err != nil || q.String() != s {
			t.Fatalf("round trip of %q failed: %v", s, err)
		}
		p.Get(doc)
	})
}

func TestPointerMatches(t *testing.T) {
	for _, tc := range []struct {
		p, pattern string
		want       bool
	}{
		{"/spec/ports/0/nodePort", "/spec/ports/*/nodePort", true},
		{"/spec/ports/0/nodePort", "/spec/ports/0/nodePort", true},
		{"/spec/ports/0", "/spec/ports/*/nodePort", false},
		{"/spec/ports/0/nodePort/x", "/spec/ports/*/nodePort", false},
		{"/spec/ports/0/port", "/spec/ports/*/nodePort", false},
	} {
		if got := MustPointer(tc.p).Matches(MustPointer(tc.pattern)); got != tc.want {
			t.Errorf("%s matches %s = %v, want %v", tc.p, tc.pattern, got, tc.want)
		}
	}
}
