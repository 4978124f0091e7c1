package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/config"
)

// docExample is one YAML example in the documentation.
type docExample struct {
	where string // file:line of its first line
	text  string
	named string // the file a heredoc writes, "" for a fenced block
}

var (
	fencedYAML = regexp.MustCompile("(?ms)^```ya?ml\n(.*?)^```")
	// heredoc is `cat > FILE <<'EOF'` ... `EOF` in a shell block.
	heredoc = regexp.MustCompile(`(?ms)^cat > (\S+) <<'?(\w+)'?\n(.*?)^(\w+)$`)
)

// docExamples returns every fenced YAML block and every file a shell block
// writes with a heredoc in README.md and docs/*.md.
func docExamples(t *testing.T) []docExample {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	var out []docExample
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		name := strings.TrimPrefix(f, "../../")
		for _, m := range fencedYAML.FindAllStringSubmatchIndex(s, -1) {
			line := strings.Count(s[:m[2]], "\n") + 1
			out = append(out, docExample{where: fmt.Sprintf("%s:%d", name, line), text: s[m[2]:m[3]]})
		}
		for _, m := range heredoc.FindAllStringSubmatchIndex(s, -1) {
			if s[m[4]:m[5]] != s[m[8]:m[9]] {
				continue // a line that only looks like the end
			}
			line := strings.Count(s[:m[6]], "\n") + 1
			out = append(out, docExample{where: fmt.Sprintf("%s:%d", name, line), text: s[m[6]:m[7]], named: s[m[2]:m[3]]})
		}
	}
	return out
}

// policyTop are the keys a policy file holds at its top level.
func policyTop() map[string]bool {
	top := map[string]bool{}
	for _, k := range config.Schema {
		top[strings.TrimSuffix(strings.FieldsFunc(k.Path, func(r rune) bool { return r == '.' })[0], "[]")] = true
	}
	return top
}

// exampleBase is what a policy fragment is validated inside of: an Argo CD
// instance, the one key every policy file needs.
const exampleBase = "argocd:\n  - name: example\n    server: https://argocd.example.com\n    tokenFile: argocd-token\n"

// TestDocExamplesValidate: every example of a policy file or of a
// repository's own file in the README and docs/ passes `driftfix config
// validate` (a repository's file with --repo-file); a policy fragment
// without an argocd entry is validated with one added. Every other YAML
// example is named here with what it is, so none is skipped unseen.
func TestDocExamplesValidate(t *testing.T) {
	top := policyTop()
	others := map[string]string{"jobs": "a GitHub Actions workflow", "steps": "a GitHub Actions job's steps", "apiVersion": "a Kubernetes object"}
	counts := map[string]int{}
	for _, ex := range docExamples(t) {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(ex.text), &doc); err != nil {
			t.Errorf("%s: not YAML: %v", ex.where, err)
			continue
		}
		var keys []string
		for k := range doc {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		isRepo := len(keys) > 0 && strings.HasSuffix(ex.named, config.RepoFilePath)
		isPolicy := len(keys) > 0 && !isRepo
		for _, k := range keys {
			isPolicy = isPolicy && top[k]
		}
		if !isPolicy && !isRepo && ex.named == "" {
			isRepo = len(keys) > 0
			for _, k := range keys {
				isRepo = isRepo && slices.Contains(config.RepoKeys, k)
			}
		}
		switch {
		case isRepo:
			counts["repository file"]++
			if _, err := config.ParseRepoFile([]byte(ex.text)); err != nil {
				t.Errorf("%s: the repository file example does not validate:\n%s", ex.where, problems(err, 0))
			}
		case isPolicy:
			counts["policy"]++
			text, offset := ex.text, 0
			if _, ok := doc["argocd"]; !ok {
				text, offset = exampleBase+text, strings.Count(exampleBase, "\n")
			}
			if _, err := config.Parse([]byte(text)); err != nil {
				t.Errorf("%s: the policy example does not validate:\n%s", ex.where, problems(err, offset))
			}
		default:
			what := ""
			for _, k := range keys {
				what = cmpOr(what, others[k])
			}
			if what == "" {
				t.Errorf("%s: a YAML example with keys %v is neither a policy file, a repository's file nor a format this test knows", ex.where, keys)
				continue
			}
			counts[what]++
		}
	}
	if counts["policy"] < 5 || counts["repository file"] < 1 {
		t.Fatalf("examples found: %v; the docs hold more", counts)
	}
	t.Logf("examples validated: %v", counts)
}

// problems lists a validation error's problems, lines shifted back by
// offset to the example's own.
func problems(err error, offset int) string {
	var es config.Errors
	if !errors.As(err, &es) {
		return "  " + err.Error()
	}
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "  line %d: %s: %s\n", e.Line-offset, e.Key, e.Msg)
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
