package drift

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeJSONObjects: objects of every size decode to their members;
// a key twice in one object, small or large, is refused (the caller reads
// it another way), while the same keys in sibling and nested objects are not.
func TestDecodeJSONObjects(t *testing.T) {
	object := func(n int, dup bool) (string, map[string]any) {
		var b strings.Builder
		want := map[string]any{}
		b.WriteString("{")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%d":{"a":%d,"b":[{"k0":1},{"k0":2}]}`, i, i)
			want[fmt.Sprintf("k%d", i)] = map[string]any{"a": int64(i), "b": []any{map[string]any{"k0": int64(1)}, map[string]any{"k0": int64(2)}}}
		}
		if dup {
			b.WriteString(`,"k0":1`)
		}
		b.WriteString("}")
		return b.String(), want
	}
	for _, n := range []int{0, 1, 15, 16, 17, 40, 300} {
		in, want := object(n, false)
		siblings := `[` + in + `,` + in + `]`
		got, ok := DecodeJSON([]byte(siblings))
		if !ok || !reflect.DeepEqual(got, []any{want, want}) {
			t.Fatalf("%d members: ok %v, got %v", n, ok, got)
		}
		if n == 0 {
			continue
		}
		in, _ = object(n, true)
		if _, ok := DecodeJSON([]byte(`{"x":` + in + `}`)); ok {
			t.Fatalf("%d members and a duplicate key: read", n)
		}
	}
}

// TestDecodeJSONEscapes: strings with escapes anywhere (first, last, in a
// row, \u sequences, between long plain runs) read as encoding/json reads them.
func TestDecodeJSONEscapes(t *testing.T) {
	plain := strings.Repeat("x", 100)
	for _, s := range []string{`\n`, `a\n`, `\na`, `\"\\\/`, `\u00e9\u4e2d` + plain, plain + `\t` + plain + `\r`, `\b\f` + plain, `{\"a\":[1,\"b\"]}`, `\\\\`, `a\u0041b`} {
		in := `"` + s + `"`
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := DecodeJSON([]byte(in))
		if !ok || got != want {
			t.Errorf("%s: got %q (%v), encoding/json %q", in, got, ok, want)
		}
	}
}
