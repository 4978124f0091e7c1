package diff

import (
	"math/rand"
	"reflect"
	"testing"
)

// randomFieldsV1 builds a FieldsV1 tree with every key form, and now and
// then a bad one (no prefix, an unknown prefix, a bad index or list key, a
// value that is not an object).
func randomFieldsV1(r *rand.Rand, depth int) any {
	if depth > 4 || r.Intn(5) == 0 {
		return map[string]any{}
	}
	m := map[string]any{}
	for i, n := 0, r.Intn(6); i < n; i++ {
		var k string
		switch r.Intn(16) {
		case 0:
			k = "."
		case 1, 2, 3, 4, 5:
			k = "f:" + []string{"a", "b", "spec", "containers", "name", "x.y"}[r.Intn(6)]
		case 6, 7:
			k = `k:{"name":"` + []string{"a", "b", "c"}[r.Intn(3)] + `"}`
		case 8:
			k = `k:{"containerPort":80,"protocol":"TCP"}`
		case 9:
			k = `v:"` + []string{"x", "y"}[r.Intn(2)] + `"`
		case 10:
			k = "v:" + []string{"1", "2.5", "true"}[r.Intn(3)]
		case 11:
			k = "i:" + []string{"0", "3", "-1", "x"}[r.Intn(4)]
		case 12:
			k = []string{"nocolon", "z:odd", "k:[1]", "k:{bad", "v:{bad"}[r.Intn(5)]
		default:
			k = "f:" + string(rune('c'+r.Intn(20)))
		}
		if r.Intn(40) == 0 {
			m[k] = "not an object"
			continue
		}
		m[k] = randomFieldsV1(r, depth+1)
	}
	return m
}

// TestParseFieldsV1FastMatchesSorted holds ParseFieldsV1's unsorted pass to
// the sorted one: the same set where both parse, an error from both where
// either fails, and that error the sorted pass's.
func TestParseFieldsV1FastMatchesSorted(t *testing.T) {
	parsed, failed := 0, 0
	for seed := int64(0); seed < 4000; seed++ {
		v := randomFieldsV1(rand.New(rand.NewSource(seed)), 0)
		fast, fastErr := parseFieldSetFast(v, 0)
		sorted, sortedErr := parseFieldSet(v, 0)
		if (fastErr == nil) != (sortedErr == nil) {
			t.Fatalf("seed %d: fast error %v, sorted error %v for %#v", seed, fastErr, sortedErr, v)
		}
		if sortedErr != nil {
			failed++
			if _, err := ParseFieldsV1(v); err == nil || err.Error() != sortedErr.Error() {
				t.Fatalf("seed %d: ParseFieldsV1 error %v, want %v", seed, err, sortedErr)
			}
			continue
		}
		parsed++
		if !reflect.DeepEqual(fast, sorted) {
			t.Fatalf("seed %d: sets differ for %#v", seed, v)
		}
	}
	if parsed < 500 || failed < 500 {
		t.Errorf("generated %d parsing and %d failing sets; want at least 500 of each", parsed, failed)
	}
}
