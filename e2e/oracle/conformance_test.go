package oracle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestArgoCDOracleConformance runs the conformance cases (one per class of
// Argo CD's comparison rules, written from the rule) through Argo CD's own
// code: its verdict must be the case's expectation, and driftfix's must be
// Argo CD's. The main module's TestConformance holds driftfix's diff to the
// same expectations.
func TestArgoCDOracleConformance(t *testing.T) {
	files, err := filepath.Glob("../../testdata/conformance/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".expected.yaml") {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			s, err := drift.LoadSnapshot(f)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".expected.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				ComparisonError bool `json:"comparisonError"`
				Resources       []struct {
					Modified bool     `json:"modified"`
					Paths    []string `json:"paths"`
				} `json:"resources"`
			}
			if err := yaml.UnmarshalStrict(raw, &want); err != nil {
				t.Fatal(err)
			}
			av, aerr := ArgoCD(s)
			dv, derr := Driftfix(s)
			if want.ComparisonError {
				if aerr == nil || derr == nil {
					t.Fatalf("want a comparison error from both: Argo CD %v, driftfix %v", aerr, derr)
				}
				return
			}
			if aerr != nil || derr != nil {
				t.Fatalf("Argo CD %v, driftfix %v", aerr, derr)
			}
			for i, w := range want.Resources {
				if av[i].Skipped != "" {
					t.Errorf("%s: Argo CD's code did not compare it: %s", av[i].Resource, av[i].Skipped)
					continue
				}
				exp := Verdict{Modified: w.Modified, Paths: w.Paths}
				if !Agree(av[i], exp) {
					t.Errorf("%s: Argo CD says %v %v, the case expects %v %v", av[i].Resource, av[i].Modified, av[i].Paths, w.Modified, w.Paths)
				}
				if !Agree(av[i], dv[i]) {
					t.Errorf("%s: Argo CD says %v %v, driftfix %v %v", av[i].Resource, av[i].Modified, av[i].Paths, dv[i].Modified, dv[i].Paths)
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no conformance cases")
	}
}
