package diff

import (
	"os"
	"reflect"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// TestPlainString: a path ends in a plain string field only where the
// compiled-in type declares every step and the last is a string kind with no
// encoding of its own.
func TestPlainString(t *testing.T) {
	b := builtins()
	for _, tc := range []struct {
		apiVersion, kind, path string
		want                   bool
	}{
		{"apps/v1", "Deployment", "/spec/template/spec/containers/0/image", true},
		{"apps/v1", "Deployment", "/spec/template/spec/containers/0/imagePullPolicy", true}, // a named string type
		{"apps/v1", "Deployment", "/metadata/labels/app.kubernetes.io~1name", true},
		{"apps/v1", "Deployment", "/spec/template/spec/containers/0/resources/limits/cpu", false}, // a quantity
		{"apps/v1", "Deployment", "/spec/strategy/rollingUpdate/maxSurge", false},                 // an int-or-string
		{"apps/v1", "Deployment", "/spec/replicas", false},
		{"apps/v1", "Deployment", "/metadata/creationTimestamp", false}, // a time
		{"apps/v1", "Deployment", "/spec/template/spec/containers/0/nickname", false},
		{"apps/v1", "Deployment", "/spec/template/spec/containers", false},
		{"v1", "ConfigMap", "/data/LOG_LEVEL", true},
		{"v1", "Secret", "/data/password", false}, // bytes, base64 in JSON
		{"v1", "Secret", "/stringData/password", true},
		{"v1", "Service", "/spec/type", true},
		{"v1", "Service", "/spec/ports/0/targetPort", false},
	} {
		typ := b.typeOf(tc.apiVersion, tc.kind)
		p, err := drift.ParsePointer(tc.path)
		if typ == nil || err != nil {
			t.Fatalf("%s %s: type %v, path %v", tc.kind, tc.path, typ, err)
		}
		if got := b.plainString(typ, p); got != tc.want {
			t.Errorf("%s %s: plainString = %v, want %v", tc.kind, tc.path, got, tc.want)
		}
	}
}

// TestStoredFormAgreesWithDecode: on every corpus, the stored form each
// difference reports, taken as written for a plain string field, is what
// decoding Git's manifest into its type and encoding it again gives at that
// path.
func TestStoredFormAgreesWithDecode(t *testing.T) {
	b := builtins()
	asWritten, checked := 0, 0
	for _, file := range append(corpus.SharedFixturesIfPresent(t), corpus.Files(t, corpus.Corpora...)...) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s, err := drift.ParseSnapshot(raw)
		if err != nil {
			continue // not a snapshot (a golden file)
		}
		cmp, _, err := Compare(s)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, d := range cmp.Diffs {
			if d.StoredObject == nil {
				continue
			}
			target := s.Resources[d.Index].Target
			typ := b.typeOf(drift.Str(target, "apiVersion"), drift.Str(target, "kind"))
			if typ == nil {
				typ = servedOnly(drift.Str(target, "apiVersion"), d.Resource.Kind)
			}
			stored, ok := b.remarshal(typ, drift.DeepCopy(target).(map[string]any), false)
			if !ok {
				continue
			}
			want, wantIn := d.GitPath.Get(stored)
			got, gotIn, derived := d.Stored()
			if reflect.ValueOf(d.StoredObject()).UnsafePointer() == reflect.ValueOf(target).UnsafePointer() {
				asWritten++
			}
			checked++
			if !derived || gotIn != wantIn || !drift.Equal(got, want) {
				t.Errorf("%s: %s %s: stored %v (in %v), a decode and encode gives %v (in %v)", file, d.Resource, d.Path, got, gotIn, want, wantIn)
			}
		}
	}
	if asWritten == 0 || checked == asWritten {
		t.Fatalf("checked %d stored forms, %d as written: the corpora must exercise both ways", checked, asWritten)
	}
	t.Logf("checked %d stored forms, %d taken as written", checked, asWritten)
}
