package diff

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// checkDecodeJSONObject fails when decodeJSONObject gives a result where
// json.Unmarshal into a map[string]any fails or gives another. It reports
// whether the fast way gave one.
func checkDecodeJSONObject(t *testing.T, s string) bool {
	t.Helper()
	fast, ok := decodeJSONObject(s)
	var want map[string]any
	err := json.Unmarshal([]byte(s), &want)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("decodeJSONObject(%q) gave %#v; json.Unmarshal fails: %v", s, fast, err)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("decodeJSONObject(%q) = %#v, json.Unmarshal gives %#v", s, fast, want)
	}
	return true
}

// randomJSONValue generates a decoded JSON value of every kind.
func randomJSONValue(r *rand.Rand, depth int) any {
	n := 9
	if depth > 4 {
		n = 6
	}
	switch r.Intn(n) {
	case 0:
		return nil
	case 1:
		return r.Intn(2) == 0
	case 2:
		return []float64{0, 1, -1, 0.5, 1e21, 1e-7, 123456789012, -0.25}[r.Intn(8)]
	case 3, 4, 5:
		return []string{"", "nginx", "a\"b", "line\nbreak\ttab", "\\", "é ü 中", "<&>", "\u2028", "\x01ctl", "a/b", "\ufffd"}[r.Intn(11)]
	case 6, 7:
		m := map[string]any{}
		for i := r.Intn(4); i > 0; i-- {
			m[[]string{"name", "image", "", "a.b", "k\"q", "é"}[r.Intn(6)]] = randomJSONValue(r, depth+1)
		}
		return m
	default:
		l := []any{}
		for i := r.Intn(4); i > 0; i-- {
			l = append(l, randomJSONValue(r, depth+1))
		}
		return l
	}
}

// TestDecodeJSONObjectMatchesEncodingJSON compares the fast decoder with
// encoding/json on encoded random objects (as kubectl writes them, compact
// and indented, HTML-escaped or not), on broken and unusual JSON, and checks
// that the fast way is taken on most well-formed objects.
func TestDecodeJSONObjectMatchesEncodingJSON(t *testing.T) {
	fast, total := 0, 0
	for seed := int64(0); seed < 3000; seed++ {
		r := rand.New(rand.NewSource(seed))
		obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": randomJSONValue(r, 0), "spec": randomJSONValue(r, 0)}
		var raw []byte
		switch seed % 3 {
		case 0:
			raw, _ = json.Marshal(obj)
		case 1:
			raw, _ = json.MarshalIndent(obj, "", "  ")
		default:
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(obj); err != nil {
				t.Fatal(err)
			}
			raw = []byte(b.String())
		}
		total++
		if checkDecodeJSONObject(t, string(raw)) {
			fast++
		}
		// A cut or an altered byte: either both refuse or they agree.
		s := string(raw)
		checkDecodeJSONObject(t, s[:r.Intn(len(s))])
		i := r.Intn(len(s))
		const alphabet = "{}[],:\"\\ 0-e.tfn"
		checkDecodeJSONObject(t, s[:i]+string(alphabet[r.Intn(len(alphabet))])+s[i+1:])
	}
	if fast*2 < total {
		t.Errorf("fast way taken for %d of %d encoded objects; want at least half", fast, total)
	}
	tests := []struct {
		in   string
		fast bool
	}{
		{`{}`, true},
		{` {"a": [1, 2.5, -0, 1e3, 1E-2, true, false, null, "x"]} `, true},
		{`{"a":1,"a":2}`, false},
		{`{"a":"\n\t\"\\\/"}`, true},
		{`{"a":"\u00e9"}`, true},
		{`{"a":"\ud800"}`, false},
		{"{\"a\":\"\xff\"}", false},
		{`{"a":1e400}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":-}`, false},
		{`{"a":tru}`, false},
		{`{"a":1,}`, false},
		{`{"a":1} x`, false},
		{`null`, false},
		{`[1]`, false},
		{`"s"`, false},
		{``, false},
		{strings.Repeat(`{"a":`, 600) + `1` + strings.Repeat(`}`, 600), false},
		{strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100), true},
	}
	for _, tc := range tests {
		if got := checkDecodeJSONObject(t, tc.in); got != tc.fast {
			t.Errorf("decodeJSONObject(%.40q) took the fast way: %v, want %v", tc.in, got, tc.fast)
		}
	}
}

// FuzzDecodeJSONObject compares the fast decoder with encoding/json on any
// input.
func FuzzDecodeJSONObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":null}],"c":"d\n"}`, `{"a":1e5,"b":-0.5,"c":true}`, "{\"a\":\"\xe9\"}", `{"a":"\u0041"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDecodeJSONObject(t, s)
	})
}
