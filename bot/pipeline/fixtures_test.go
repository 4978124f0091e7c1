package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// sharedFixtures is where the project's public example snapshots live, beside
// the repository root.
const sharedFixtures = "../../../shared/fixtures"

type expectedPath struct {
	Kind        string `yaml:"kind"`
	Name        string `yaml:"name"`
	Path        string `yaml:"path"`
	Cause       string `yaml:"cause"`
	Remediation string `yaml:"remediation"`
	// Why says, for a must_not entry, why that answer would be wrong.
	Why string `yaml:"why"`
}

// violatedBy reports whether a finding is the wrong answer a must_not entry
// names: any finding at its path, or, when the entry names a cause, a finding
// with that cause.
func (m expectedPath) violatedBy(f drift.Finding) bool {
	if f.Resource.Kind != m.Kind || f.Resource.Name != m.Name || f.Path.String() != m.Path {
		return false
	}
	return m.Cause == "" || string(f.Cause) == m.Cause
}

// readExpectation reads the .expected.yaml beside a fixture.
func readExpectation(t *testing.T, in string) expectation {
	t.Helper()
	raw, err := os.ReadFile(strings.TrimSuffix(in, ".yaml") + ".expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var exp expectation
	if err := yaml.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	return exp
}

type expectation struct {
	Source   string         `yaml:"source"`
	Tags     []string       `yaml:"tags"`
	Summary  string         `yaml:"summary"`
	Findings []expectedPath `yaml:"findings"`
	MustNot  []expectedPath `yaml:"must_not"`
}

// TestSharedFixtures diagnoses every public fixture and checks each expected
// finding (kind, name, path, cause, fix kind), that nothing else is reported,
// and that no must_not path appears.
func TestSharedFixtures(t *testing.T) {
	snaps, err := filepath.Glob(filepath.Join(sharedFixtures, "[0-9]*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, s := range snaps {
		if !strings.HasSuffix(s, ".expected.yaml") {
			inputs = append(inputs, s)
		}
	}
	if len(inputs) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no fixtures in %s: the shared folder must sit beside the project root in CI", sharedFixtures)
		}
		t.Skipf("no fixtures in %s (the shared folder sits beside the project root); skipping", sharedFixtures)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		t.Run(name, func(t *testing.T) {
			exp := readExpectation(t, in)
			_, rep := diagnoseFile(t, in)
			got := map[string]drift.Finding{}
			for _, f := range rep.Findings {
				got[f.Resource.Kind+"/"+f.Resource.Name+f.Path.String()] = f
			}
			for _, e := range exp.Findings {
				key := e.Kind + "/" + e.Name + e.Path
				f, ok := got[key]
				if !ok {
					t.Errorf("missing finding %s (%s)", key, e.Cause)
					continue
				}
				delete(got, key)
				if string(f.Cause) != e.Cause {
					t.Errorf("%s: cause %s, want %s; evidence: %q", key, f.Cause, e.Cause, f.Evidence)
				}
				if string(f.Remediation.Kind) != e.Remediation {
					t.Errorf("%s: remediation %s, want %s (%s)", key, f.Remediation.Kind, e.Remediation, f.Remediation.Reason)
				}
				if len(f.Evidence) == 0 {
					t.Errorf("%s: no evidence", key)
				}
			}
			for key, f := range got {
				t.Errorf("unexpected finding %s: %s %q", key, f.Cause, f.Evidence)
			}
			for _, m := range exp.MustNot {
				for _, f := range rep.Findings {
					if m.violatedBy(f) {
						t.Errorf("must_not path reported: %s/%s %s", m.Kind, m.Name, m.Path)
					}
				}
			}
		})
	}
}
