package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// allBytes is content no text encoding would keep: every byte value.
var allBytes = func() string {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return string(b)
}()

// TestEveryFileWithinBudgets: every file of a commit is read, binary ones
// byte for byte (a certificate, a chart archive, a generator's .env or .conf
// input, a Jsonnet library), within the per-file and total budgets; a file a
// budget leaves out is named with its size and the budget, and manifests are
// read before any other file, so the total budget never leaves out a
// manifest silently: it stops the read.
func TestEveryFileWithinBudgets(t *testing.T) {
	g := newGitRepo(t)
	g.commit(map[string]string{
		"app/kustomization.yaml":          "configMapGenerator:\n- name: c\n  files: [app.conf]\n",
		"app/app.conf":                    "a = 1\n",
		"app/.env":                        "A=1\n",
		"app/tls.crt":                     allBytes,
		"app/lib/k.libsonnet":             "{ a: 1 }\n",
		"charts/web/charts/dep-1.0.0.tgz": allBytes + allBytes,
		"charts/web/Chart.yaml":           "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"docs/big.png":                    strings.Repeat("p", 3000),
	})
	ctx := context.Background()
	c := NewCache(8, 1<<20)

	all, err := c.Tree(ctx, g.url, "main", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"app/kustomization.yaml", "app/app.conf", "app/.env", "app/tls.crt", "app/lib/k.libsonnet", "charts/web/charts/dep-1.0.0.tgz", "docs/big.png"} {
		if _, ok := all.Files[f]; !ok {
			t.Errorf("%s is not read", f)
		}
	}
	if all.Files["app/tls.crt"] != allBytes || all.Files["charts/web/charts/dep-1.0.0.tgz"] != allBytes+allBytes {
		t.Error("binary files are not read byte for byte")
	}
	if m := Manifests(all.Files); !reflect.DeepEqual(sortedKeys(m), []string{"app/kustomization.yaml", "charts/web/Chart.yaml"}) {
		t.Errorf("the manifests among them: %v", sortedKeys(m))
	}
	if len(all.Skipped) != 0 || len(all.Commit) != 40 {
		t.Errorf("within the default budgets nothing is skipped: %v, commit %q", all.Skipped, all.Commit)
	}

	tests := []struct {
		name    string
		lim     Limits
		skipped map[string]Skip
		err     string
	}{
		{"per file", Limits{MaxFileBytes: 2048}, map[string]Skip{"docs/big.png": {3000, "MaxFileBytes", 2048}}, ""},
		// manifests (about 150 bytes) first, then the others smallest first
		// while they fit: the archive (512) and the image (3000) do not.
		{"total", Limits{MaxTotalBytes: 600}, map[string]Skip{"charts/web/charts/dep-1.0.0.tgz": {512, "MaxTotalBytes", 600}, "docs/big.png": {3000, "MaxTotalBytes", 600}}, ""},
		{"total below the manifests", Limits{MaxTotalBytes: 60}, nil, "MaxTotalBytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Tree(ctx, g.url, "main", tc.lim)
			if tc.err != "" {
				var le *LimitError
				if !errors.As(err, &le) || le.Limit != tc.err {
					t.Fatalf("err = %v, want the limit %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Skipped, tc.skipped) {
				t.Errorf("skipped = %v, want %v", got.Skipped, tc.skipped)
			}
			for f := range tc.skipped {
				if _, ok := got.Files[f]; ok {
					t.Errorf("%s is skipped and read", f)
				}
			}
			if got.Files["app/kustomization.yaml"] == "" || got.Files["app/tls.crt"] != allBytes {
				t.Error("the files within the budget are read")
			}
		})
	}
}

// TestSymlinks: a symbolic link in a commit to a file of the commit is
// read as that file (as a checkout reads it), never as the link's text; one
// that leaves the repository is not read.
func TestSymlinks(t *testing.T) {
	g := newGitRepo(t)
	g.commit(map[string]string{"base/deploy.yaml": "kind: Deployment\n"})
	for link, target := range map[string]string{"app/deploy.yaml": "../base/deploy.yaml", "app/passwd.yaml": "../../../etc/passwd", "app/abs.yaml": "/etc/passwd"} {
		if err := os.MkdirAll(filepath.Join(g.work, "app"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(g.work, link)); err != nil {
			t.Skip("symbolic links cannot be made here")
		}
	}
	g.git("add", "-A")
	g.git("commit", "-q", "-m", "links")
	got, err := NewCache(8, 1<<20).Tree(context.Background(), g.url, "main", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Files["app/deploy.yaml"] != "kind: Deployment\n" {
		t.Errorf("a link to a file of the commit: %q", got.Files["app/deploy.yaml"])
	}
	for _, f := range []string{"app/passwd.yaml", "app/abs.yaml"} {
		if c, ok := got.Files[f]; ok {
			t.Errorf("a link out of the repository is read: %s = %q", f, c)
		}
	}
	wt, err := WorkTree(g.work, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if wt.Files["app/deploy.yaml"] != "kind: Deployment\n" || wt.Files["app/passwd.yaml"] != "" || wt.Files["app/abs.yaml"] != "" {
		t.Errorf("work tree links: %q", wt.Files)
	}
}

// TestWorkTree: the work tree is read as a commit is (every file, binary
// too, within the same budgets), without .git and what Git ignores.
func TestWorkTree(t *testing.T) {
	g := newGitRepo(t)
	g.commit(map[string]string{
		".gitignore":             "node_modules/\n*.log\n",
		"app/deploy.yaml":        "kind: Deployment\n",
		"app/app.conf":           "a = 1\n",
		"app/tls.crt":            allBytes,
		"app/big.bin":            strings.Repeat("b", 5000),
		"sub/.gitignore":         "secret.env\n",
		"sub/secret.env":         "",
		"sub/kustomization.yaml": "resources: []\n",
	})
	for name, content := range map[string]string{"node_modules/x/index.js": "x", "app/debug.log": "log", "sub/secret.env": "TOKEN=1", "new.yaml": "kind: ConfigMap\n"} {
		p := filepath.Join(g.work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := WorkTree(g.work, Limits{MaxFileBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".gitignore", "app/app.conf", "app/deploy.yaml", "app/tls.crt", "new.yaml", "sub/.gitignore", "sub/kustomization.yaml"}
	if k := sortedKeys(got.Files); !reflect.DeepEqual(k, want) {
		t.Errorf("files = %v, want %v", k, want)
	}
	if got.Files["app/tls.crt"] != allBytes {
		t.Error("binary files are read byte for byte")
	}
	if !reflect.DeepEqual(got.Skipped, map[string]Skip{"app/big.bin": {5000, "MaxFileBytes", 4096}}) {
		t.Errorf("skipped = %v", got.Skipped)
	}
	if _, err := WorkTree(g.work, Limits{MaxFiles: 3}); err == nil || !strings.Contains(err.Error(), "MaxFiles") {
		t.Errorf("the file count is bounded: %v", err)
	}
	if _, err := WorkTree(filepath.Join(g.work, "nothing"), Limits{}); err == nil || !strings.Contains(err.Error(), "nothing") {
		t.Errorf("a missing directory: %v", err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
