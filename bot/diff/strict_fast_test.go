package diff

import (
	"math/rand"
	"reflect"
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
