package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/internal/gittest"
)

// repo makes a real bare repository with two commits and returns its URL and
// the first commit.
func repo(t *testing.T) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	run := func(d string, args ...string) string {
		t.Helper()
		return gittest.Run(t, d, nil, args...)
	}
	write := func(name, content string) {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	run(work, "init", "-q", "-b", "main")
	write("apps/web/deployment.yaml", "replicas: 2\n")
	write("charts/c/templates/_helpers.tpl", "{{/* x */}}\n")
	write("README.md", "not a manifest\n")
	write("big.yaml", strings.Repeat("x", 2<<20))
	run(work, "add", ".")
	run(work, "commit", "-q", "-m", "one")
	first := run(work, "rev-parse", "HEAD")
	run(work, "tag", "-a", "-m", "first", "v1")
	write("apps/web/deployment.yaml", "replicas: 3\n")
	run(work, "commit", "-q", "-am", "two")
	bare := filepath.Join(dir, "repo.git")
	run(dir, "clone", "-q", "--bare", work, bare)
	return "file://" + bare, first
}

func TestFiles(t *testing.T) {
	url, first := repo(t)
	ctx := context.Background()
	files, err := Files(ctx, url, "main", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if files["apps/web/deployment.yaml"] != "replicas: 3\n" || files["charts/c/templates/_helpers.tpl"] == "" {
		t.Fatalf("files at main: %v", keys(files))
	}
	if files["README.md"] != "not a manifest\n" {
		t.Error("every file is read, a manifest or not (a generator's input, a library)")
	}
	tree, err := ReadTree(ctx, url, "main", Limits{MaxFileBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tree.Files["big.yaml"]; ok || tree.Skipped["big.yaml"] != (Skip{Size: 2 << 20, Limit: "MaxFileBytes", Max: 1 << 20}) {
		t.Errorf("a file over the size budget is named as skipped, not read: %v", tree.Skipped)
	}
	old, err := Files(ctx, url, first, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if old["apps/web/deployment.yaml"] != "replicas: 2\n" {
		t.Errorf("files at %s: %q", first, old["apps/web/deployment.yaml"])
	}
	if _, err := Files(ctx, url, "no-such-branch", Limits{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown revision: %v", err)
	}
	if _, err := Files(ctx, "git@example.com:org/repo.git", "main", Limits{}); err == nil {
		t.Error("ssh URLs are not read")
	}
	if _, err := Files(ctx, url, "main", Limits{MaxTotalBytes: 4}); err == nil {
		t.Error("the total limit must stop reading")
	}
	tag, err := Files(ctx, url, "v1", Limits{})
	if err != nil || tag["apps/web/deployment.yaml"] != "replicas: 2\n" {
		t.Errorf("files at the annotated tag v1: %q, %v", tag["apps/web/deployment.yaml"], err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestResolve: a revision is resolved as Argo CD resolves a Git source's
// target revision: a branch to its tip, an annotated tag to the commit it
// points at, HEAD and "" to the default branch's tip, a full commit to
// itself; an unknown name is an error that names it.
func TestResolve(t *testing.T) {
	url, first := repo(t)
	ctx := context.Background()
	var r Reader
	main, err := r.Resolve(ctx, url, "main")
	if err != nil || len(main) != 40 || main == first {
		t.Fatalf("main: %q, %v (first commit %s)", main, err, first)
	}
	for _, tc := range []struct{ rev, want string }{{"HEAD", main}, {"", main}, {"refs/heads/main", main}, {"v1", first}, {first, first}} {
		if got, err := r.Resolve(ctx, url, tc.rev); err != nil || got != tc.want {
			t.Errorf("resolve %q: %q, %v; want %s", tc.rev, got, err, tc.want)
		}
	}
	if _, err := r.Resolve(ctx, url, "no-such-branch"); err == nil || !strings.Contains(err.Error(), `"no-such-branch" not found`) {
		t.Errorf("unknown revision: %v", err)
	}
	if _, err := r.Resolve(ctx, "http://example.com/repo.git", "main"); err == nil || !strings.Contains(err.Error(), "only file://, https:// and (with an SSH key configured for them) ssh repositories are read") {
		t.Errorf("plain http: %v", err)
	}
}
