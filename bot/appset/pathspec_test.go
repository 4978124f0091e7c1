package appset

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestPathspecMatchesGit checks lsFiles against git ls-files itself, the
// command Argo CD's repo server runs for a files generator, on a real
// repository and patterns of every kind Git's pathspecs take.
func TestPathspecMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tree := map[string]string{}
	for _, f := range []string{
		"README.md", "x.json", "a/c.json", "a/b/c.json", "a/b/d.yaml", "a/b/e/f.yaml", "a-b/c.json", "a*/e",
		"apps/guestbook/config.json", "apps/blog/config.yaml", "apps/blog/sub/config.yaml", "apps/[x]/config.json",
		"envs/prod/config.json", "envs/Prod2/config.json", "envs/dev-1/values.yaml", ".hidden/config.json",
		"cluster-addons/argo/kustomization.yaml", "q?/file", "sp ace/f.json", "back\\slash/f",
	} {
		tree[f] = "k: v\n"
	}
	dir := t.TempDir()
	for name, content := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	git("add", "-A")
	patterns := []string{
		"*", "*.json", "**.json", "**/*.json", "a", "a/", "a/*", "a/*.json", "a/*/c.json", "a/**/f.yaml", "a/b",
		"a*", "a?b/*", "a[-]b/*", "a[!/]b/c.json", "a[^-]b/c.json", "apps/*/config.json", "apps/**/config.yaml",
		"apps/*/config.*", "apps/[x]/config.json", "apps/\\[x\\]/config.json", "apps/[[:alpha:]]*/config.json",
		"envs/[a-p]*/config.json", "envs/[[:upper:]]*/*", "envs/*[0-9]/*", "envs/dev-?/values.yaml", "./x.json",
		"a/../x.json", "a//b/c.json", ".", "apps", "apps/", "envs/*/", "*/config.json", "q?/file", "q\\?/file",
		"sp ace/*", "back\\\\slash/f", "[", "a/[", "a/[b", "*[", "apps/blog/sub", "cluster-addons/*/kustomization.yaml",
		".hidden/*", "*.yaml", "?", "??????", "a/b/", "nothing", "[[:digit:]]*", "a/[[:bogus:]]",
	}
	for _, p := range patterns {
		out := git("ls-files", "--full-name", "-z", "--", p)
		var want []string
		for _, f := range strings.Split(out, "\x00") {
			if f != "" {
				want = append(want, f)
			}
		}
		sort.Strings(want)
		if got := lsFiles(tree, p); !reflect.DeepEqual(got, want) {
			t.Errorf("pattern %q: lsFiles %q, git ls-files %q", p, got, want)
		}
	}
}
