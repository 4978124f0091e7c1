package diff

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// checkFits fails when fits, which walks a description of the type built
// once, and fitsByType, which asks reflect at every step, disagree.
func checkFits(t *testing.T, typ reflect.Type, obj map[string]any) bool {
	t.Helper()
	b := builtins()
	got, want := b.fits(typ, obj, 0), b.fitsByType(typ, obj, 0)
	if got != want {
		t.Fatalf("%v: fits = %v, fitsByType = %v for %#v", typ, got, want, obj)
	}
	return got
}

// TestFitsMatchesReflect compares the two on generated objects of several
// built-in kinds (mistyped values, unknown fields, nulls, quantities...),
// and checks both verdicts occur.
func TestFitsMatchesReflect(t *testing.T) {
	yes, no := 0, 0
	for seed := int64(0); seed < 3000; seed++ {
		g := &canonGen{c: randChooser{rand.New(rand.NewSource(seed))}}
		typ, obj := g.object(t)
		if checkFits(t, typ, obj) {
			yes++
		} else {
			no++
		}
	}
	if yes < 300 || no < 300 {
		t.Errorf("generated %d fitting and %d unfitting objects; want at least 300 of each", yes, no)
	}
}

// fitsByType is fits asking reflect at every step; the differential test
// holds fits to it.
func (b *builtin) fitsByType(t reflect.Type, v any, depth int) bool {
	if depth > maxWalkDepth {
		return false
	}
	if v == nil {
		return true // null decodes into anything as its zero value
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if ownDecoder(t) {
		// Quantity, IntOrString, Time, RawExtension and friends: their own
		// decoders accept a string or a number (RawExtension anything).
		switch v.(type) {
		case string, int64, float64:
			return true
		case map[string]any, []any:
			return t.Kind() == reflect.Struct && !strings.HasPrefix(t.PkgPath(), "k8s.io/apimachinery/pkg/api/resource") &&
				t.Name() != "IntOrString" && t.Name() != "Time" && t.Name() != "MicroTime"
		}
		return true
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for k, e := range m {
			fi, ok := b.child(t, k)
			if !ok || !b.fitsByType(fi.typ, e, depth+1) {
				return false
			}
		}
		return true
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, e := range m {
			if !b.fitsByType(t.Elem(), e, depth+1) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			_, ok := v.(string)
			return ok
		}
		l, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range l {
			if !b.fitsByType(t.Elem(), e, depth+1) {
				return false
			}
		}
		return true
	case reflect.String:
		_, ok := v.(string)
		return ok
	case reflect.Bool:
		_, ok := v.(bool)
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch n := v.(type) {
		case int64:
			return true
		case float64:
			return n == float64(int64(n))
		}
		return false
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int64, float64:
			return true
		}
		return false
	case reflect.Interface:
		return true
	}
	return false
}
