package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated references in docs/")

// docSection returns the text of a file of the repository between
// <!-- name:start --> and <!-- name:end -->.
func docSection(t *testing.T, file, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	open, end := "<!-- "+name+":start -->\n", "<!-- "+name+":end -->"
	i, j := strings.Index(s, open), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %s:start/%s:end markers", file, name, name)
	}
	return s[i+len(open) : j]
}

// TestGeneratedDocs keeps the references in docs/ equal to the code they
// are generated from: the cause and fix tables to the registries
// (classifiers.Registry, remediations.Remedies), the policy reference to
// config.Schema. `go generate ./cmd/driftfix` (this test with -update)
// rewrites them.
func TestGeneratedDocs(t *testing.T) {
	for _, g := range []struct {
		file, section string // section "": the whole file
		want          string
	}{
		{"docs/causes-and-fixes.md", "causes", causesTable()},
		{"docs/causes-and-fixes.md", "fixes", fixesTable()},
		{"docs/policy-reference.md", "", policyReference()},
	} {
		path := "../../" + g.file
		b, err := os.ReadFile(path)
		if err != nil && !(*update && os.IsNotExist(err)) {
			t.Fatal(err)
		}
		s, out := string(b), g.want
		if g.section != "" {
			out = s
			open, end := "<!-- "+g.section+":start -->\n", "<!-- "+g.section+":end -->"
			i, j := strings.Index(s, open), strings.Index(s, end)
			if i < 0 || j < i {
				t.Fatalf("%s lacks the %s:start/%s:end markers", g.file, g.section, g.section)
			}
			out = s[:i+len(open)] + g.want + s[j:]
		}
		if out == s {
			continue
		}
		if *update {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is stale (section %q): run `go generate ./cmd/driftfix` and commit the result", g.file, g.section)
	}
}
