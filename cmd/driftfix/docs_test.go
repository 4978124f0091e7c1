package main

import (
	"flag"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode"
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

// TestDocsLinks: every relative link of the README and docs/ names a file of
// the repository, and every #anchor a heading of the page it points at.
func TestDocsLinks(t *testing.T) {
	pages := []string{"README.md"}
	entries, err := os.ReadDir("../../docs")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") {
			pages = append(pages, "docs/"+e.Name())
		}
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile("../../" + page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			resolved := page
			if file != "" {
				resolved = path.Join(path.Dir(page), file)
			}
			if _, err := os.Stat("../../" + resolved); err != nil {
				t.Errorf("%s links %s, which does not exist", page, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(resolved, ".md") && !headingAnchors(t, resolved)[anchor] {
				t.Errorf("%s links %s: %s has no heading #%s", page, target, resolved, anchor)
			}
		}
	}
}

// headingAnchors are the anchors GitHub gives a page's headings.
func headingAnchors(t *testing.T, page string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../" + page)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var a strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				a.WriteRune(r)
			}
		}
		out[a.String()] = true
	}
	return out
}
