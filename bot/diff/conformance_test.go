package diff

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// conformance is what Argo CD decides for a conformance snapshot: that it
// cannot compare the application at all, or per resource (in the snapshot's
// order) whether it differs and where.
type conformance struct {
	ComparisonError bool `json:"comparisonError"`
	Resources       []struct {
		Modified bool     `json:"modified"`
		Paths    []string `json:"paths"`
	} `json:"resources"`
}

// TestConformance holds driftfix's diff to one case per class of Argo CD's
// comparison rules, in testdata/conformance: each written from the rule, and
// judged by Argo CD 3.6.1's own code in the oracle module (e2e/oracle) too.
func TestConformance(t *testing.T) {
	files := corpus.Files(t, "testdata/conformance/*.yaml")
	if len(files) == 0 {
		t.Fatal("no conformance cases")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			s, err := drift.LoadSnapshot(f)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".expected.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var want conformance
			if err := yaml.UnmarshalStrict(raw, &want); err != nil {
				t.Fatal(err)
			}
			cmp, _, err := Compare(s.WithoutArgoStates())
			if err != nil {
				t.Fatal(err)
			}
			if want.ComparisonError != (cmp.Failed != nil) {
				t.Fatalf("comparison error: want %v, got %v", want.ComparisonError, cmp.Failed)
			}
			if want.ComparisonError {
				return
			}
			if len(want.Resources) != len(s.Resources) {
				t.Fatalf("the expectation lists %d resources, the snapshot has %d", len(want.Resources), len(s.Resources))
			}
			got := make([][]string, len(s.Resources))
			for _, d := range cmp.Diffs {
				if len(d.HiddenBy) == 0 && !d.Raw && !d.Unexplained {
					got[d.Index] = append(got[d.Index], d.Path.String())
				}
			}
			for i, w := range want.Resources {
				slices.Sort(got[i])
				slices.Sort(w.Paths)
				if (len(got[i]) > 0) != w.Modified || !slices.Equal(got[i], w.Paths) {
					t.Errorf("%s: want modified=%v at %v, got %v", s.Resources[i].Ref(), w.Modified, w.Paths, got[i])
				}
			}
		})
	}
}
