package argocd

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// slowDecode is encoding/json with the snapshot number rule, the reader the
// quick one must agree with.
func slowDecode(b []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

// FuzzDecodeJSON: the quick reader the client decodes states with gives the
// values encoding/json gives (integers int64, other numbers float64), or
// hands the input to encoding/json.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1.5,"x",null,true],"c":{"d":"\u00e9\n"}}`, `{"n":99999999999999999999}`, `{"e":1e3}`, `[]`, `"s"`, `{"a":-0}`, `{"a":"\ud800"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := slowDecode([]byte(s))
		if werr != nil || !json.Valid([]byte(s)) {
			return // invalid input: encoding/json says why
		}
		got, err := decodeJSON([]byte(s))
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: quick %#v, encoding/json %#v", s, got, want)
		}
	})
}
