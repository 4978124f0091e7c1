package predict

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/internal/gittest"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// commitTree commits files to a new Git repository and reads its commit
// back through bot/gitrepo, as predict reads a revision.
func commitTree(t *testing.T, files map[string]string, lim gitrepo.Limits) gitrepo.Tree {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Run(t, dir, nil, "init", "-q", "-b", "main")
	gittest.Run(t, dir, nil, "add", ".")
	gittest.Run(t, dir, nil, "commit", "-q", "-m", "one")
	tree, err := gitrepo.NewCache(4, 64<<20).Tree(context.Background(), "file://"+filepath.ToSlash(dir), "main", lim)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// sourceApp is an Application whose one source is the given YAML object.
func sourceApp(t *testing.T, source string) (drift.Object, drift.Source) {
	t.Helper()
	docs, err := yamledit.Documents([]byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web}\nspec:\n  project: team-a\n  destination: {namespace: prod}\n  source: " + source + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	app := drift.NormalizeNumbers(docs[0]).(map[string]any)
	return app, drift.Sources(app)[0]
}

// names are the objects as kind/name, sorted.
func names(objs []drift.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, drift.Str(o, "kind")+"/"+drift.Str(o, "metadata", "name"))
	}
	sort.Strings(out)
	return out
}

func cm(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
}

// TestDirectorySource: a plain-directory source renders what Argo CD's
// repo-server renders for it: its options read from the source itself,
// recurse, include and exclude as Argo CD's glob (from the source's path,
// * across directories, {a,b} lists), the skip marker, Lists taken apart,
// Applications left to be their own, Jsonnet with tlas, extVars (string or
// code, $ARGOCD_APP_NAME substituted) and libs from the repository's root.
func TestDirectorySource(t *testing.T) {
	tree := commitTree(t, map[string]string{
		"apps/web/a.yaml":             cm("a"),
		"apps/web/b.yml":              cm("b") + "---\n" + cm("b2"),
		"apps/web/c.json":             `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`,
		"apps/web/skip.yaml":          "# +argocd:skip-file-rendering\n" + cm("skipped"),
		"apps/web/notes.txt":          cm("txt"),
		"apps/web/values.yaml":        "replicas: 3\n",
		"apps/web/list.yaml":          "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(cm("l1"), "\n", "\n  ") + "\n- " + strings.ReplaceAll(cm("l2"), "\n", "\n  "),
		"apps/web/child-app.yaml":     "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: child}\nspec: {}\n",
		"apps/web/sub/d.yaml":         cm("d"),
		"apps/web/sub/deep/e.yaml":    cm("e"),
		"apps/web/sub/deep/e.sealed":  cm("sealed"),
		"apps/other/x.yaml":           cm("other"),
		"lib/k.libsonnet":             "{ cm(name, data):: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: name }, data: data } }\n",
		"apps/jsonnet/util.libsonnet": "{ size: 2 }\n",
		"apps/jsonnet/main.jsonnet": `local k = import 'k.libsonnet';
local util = import 'util.libsonnet';
function(app, replicas) [
  k.cm(app + '-config', { replicas: std.toString(replicas), size: std.toString(util.size), env: std.extVar('env'), zones: std.toString(std.length(std.extVar('zones'))) }),
  { apiVersion: 'v1', kind: 'List', items: [k.cm('from-list', {})] },
]
`,
		"apps/jsonnet/plain.yaml": cm("beside-jsonnet"),
	}, gitrepo.Limits{})
	files := map[string][]byte{}
	for k, v := range tree.Files {
		files[k] = []byte(v)
	}
	tests := []struct {
		name, source string
		want         []string
	}{
		{"the path alone", `{repoURL: r, path: apps/web}`,
			[]string{"ConfigMap/a", "ConfigMap/b", "ConfigMap/b2", "ConfigMap/c", "ConfigMap/l1", "ConfigMap/l2"}},
		{"recurse", `{repoURL: r, path: ./apps/web/, directory: {recurse: true}}`,
			[]string{"ConfigMap/a", "ConfigMap/b", "ConfigMap/b2", "ConfigMap/c", "ConfigMap/d", "ConfigMap/e", "ConfigMap/l1", "ConfigMap/l2"}},
		{"include a brace list", `{repoURL: r, path: apps/web, directory: {recurse: true, include: "{a.yaml,sub/d.yaml}"}}`,
			[]string{"ConfigMap/a", "ConfigMap/d"}},
		{"include with * across directories", `{repoURL: r, path: apps/web, directory: {recurse: true, include: "sub*.yaml"}}`,
			[]string{"ConfigMap/d", "ConfigMap/e"}},
		{"exclude", `{repoURL: r, path: apps/web, directory: {recurse: true, exclude: "{*.json,sub/deep/*}"}}`,
			[]string{"ConfigMap/a", "ConfigMap/b", "ConfigMap/b2", "ConfigMap/d", "ConfigMap/l1", "ConfigMap/l2"}},
		{"exclude wins over include", `{repoURL: r, path: apps/web, directory: {include: "*.yaml", exclude: "a.yaml"}}`,
			[]string{"ConfigMap/l1", "ConfigMap/l2"}},
		{"no extension filter", `{repoURL: r, path: apps/web/sub/deep, directory: {disableExtensionFilter: true, include: "*.sealed"}}`,
			[]string{"ConfigMap/sealed"}},
		{"jsonnet with tlas, extVars and libs", `{repoURL: r, path: apps/jsonnet, directory: {jsonnet: {libs: [lib],
			tlas: [{name: app, value: $ARGOCD_APP_NAME}, {name: replicas, value: "1 + 2", code: true}],
			extVars: [{name: env, value: "$ARGOCD_APP_NAMESPACE-$$"}, {name: zones, value: "['a', 'b']", code: true}]}}}`,
			[]string{"ConfigMap/beside-jsonnet", "ConfigMap/from-list", "ConfigMap/web-config"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app, src := sourceApp(t, tc.source)
			objs, err := directoryWith(app, src, files, tree.Files, render.Limits{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(objs); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("rendered %v\nwant %v", got, tc.want)
			}
			for _, o := range objs {
				if drift.Str(o, "metadata", "name") == "web-config" {
					for k, want := range map[string]string{"replicas": "3", "size": "2", "env": "prod-$", "zones": "2"} {
						if got := drift.Str(o, "data", k); got != want {
							t.Errorf("web-config data.%s = %q, want %q", k, got, want)
						}
					}
				}
			}
		})
	}

	for _, tc := range []struct{ name, source, err string }{
		{"a pattern that does not compile", `{repoURL: r, path: apps/web, directory: {include: "[a"}}`, `directory.include: "[a" is not a glob pattern`},
		{"a recurse that is not a boolean", `{repoURL: r, path: apps/web, directory: {recurse: "yes"}}`, "directory.recurse: yes is not true or false"},
		{"a library out of the repository", `{repoURL: r, path: apps/jsonnet, directory: {jsonnet: {libs: [../..]}}}`, "leaves the repository"},
		{"a tla without a name", `{repoURL: r, path: apps/jsonnet, directory: {jsonnet: {tlas: [{value: x}]}}}`, "directory.jsonnet.tlas[0]: not an object with a name"},
		{"a missing tla", `{repoURL: r, path: apps/jsonnet}`, "Missing argument: app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, src := sourceApp(t, tc.source)
			if _, err := directoryWith(app, src, files, tree.Files, render.Limits{}, nil); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestKustomizeGeneratorInputsRead: a kustomization whose configMapGenerator
// reads a .conf and a .env file renders from a commit as bot/gitrepo reads
// it, the files' contents in the ConfigMap.
func TestKustomizeGeneratorInputsRead(t *testing.T) {
	tree := commitTree(t, map[string]string{
		"apps/web/kustomization.yaml": "configMapGenerator:\n- name: web\n  files: [nginx.conf]\n  envs: [web.env]\n  options: {disableNameSuffixHash: true}\n",
		"apps/web/nginx.conf":         "server { listen 80; }\n",
		"apps/web/web.env":            "MODE=prod\n",
	}, gitrepo.Limits{})
	files := map[string][]byte{}
	for k, v := range tree.Files {
		files[k] = []byte(v)
	}
	app, src := sourceApp(t, `{repoURL: r, path: apps/web}`)
	objs, err := renderSource(app, src, files, tree.Files, render.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || drift.Str(objs[0], "data", "nginx.conf") != "server { listen 80; }\n" || drift.Str(objs[0], "data", "MODE") != "prod" {
		t.Errorf("rendered %v", objs)
	}
}

// TestOverBudget: a file the read left out for its size is named as over
// the budget, with the flag that raises it, by the render that needs it (a
// directory's manifest, a Jsonnet import, a generator's input), never as
// missing; a render that does not need it is not affected.
func TestOverBudget(t *testing.T) {
	big := strings.Repeat("# padding\n", 300)
	tree := commitTree(t, map[string]string{
		"apps/dir/a.yaml":            cm("a"),
		"apps/dir/big.yaml":          cm("big") + big,
		"apps/dir/docs/big.yaml":     cm("docs") + big,
		"apps/j/main.jsonnet":        "import 'big.libsonnet'\n",
		"apps/j/big.libsonnet":       "{ kind: 'ConfigMap' }\n" + strings.ReplaceAll(big, "#", "//"),
		"apps/k/kustomization.yaml":  "configMapGenerator:\n- name: k\n  files: [big.conf]\n",
		"apps/k/big.conf":            big,
		"apps/ok/kustomization.yaml": "resources: [cm.yaml]\n",
		"apps/ok/cm.yaml":            cm("ok"),
	}, gitrepo.Limits{MaxFileBytes: 2048})
	if len(tree.Skipped) != 4 {
		t.Fatalf("skipped %v", tree.Skipped)
	}
	unread := Unread(tree.Skipped)
	files := map[string][]byte{}
	for k, v := range tree.Files {
		files[k] = []byte(v)
	}
	const budget = "is over the per-file read budget of 2 KiB, so it was not read; raise it with --max-file-bytes"
	render1 := func(source string) ([]drift.Object, error) {
		app, src := sourceApp(t, source)
		if strings.Contains(source, "apps/k") || strings.Contains(source, "apps/ok") {
			return render.KustomizeWithOptions(files, src.Path, render.KustomizeOptions{Unread: unread})
		}
		return directoryWith(app, src, files, tree.Files, render.Limits{}, unread)
	}
	tests := []struct {
		name, source, file string
	}{
		{"a directory's manifest", `{repoURL: r, path: apps/dir}`, "apps/dir/big.yaml"},
		{"a Jsonnet import", `{repoURL: r, path: apps/j}`, "apps/j/big.libsonnet"},
		{"a generator's input", `{repoURL: r, path: apps/k}`, "apps/k/big.conf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render1(tc.source)
			var ue *render.UnreadError
			if !errors.As(err, &ue) || ue.File != tc.file || !strings.Contains(err.Error(), tc.file+" (") || !strings.Contains(err.Error(), budget) {
				t.Errorf("err = %v, want %s named as over the budget", err, tc.file)
			}
			if err != nil && strings.Contains(err.Error(), "no such file") {
				t.Errorf("an unread file is not reported missing: %v", err)
			}
		})
	}
	for _, source := range []string{`{repoURL: r, path: apps/dir, directory: {exclude: big.yaml}}`, `{repoURL: r, path: apps/ok}`} {
		if objs, err := render1(source); err != nil || len(objs) != 1 {
			t.Errorf("%s does not need an unread file: %v %v", source, names(objs), err)
		}
	}
}

// FuzzDirectoryGlob: any include or exclude pattern compiles or is an
// error naming it, and matching never panics; a pattern without glob
// syntax matches exactly its own path.
func FuzzDirectoryGlob(f *testing.F) {
	for _, s := range [][2]string{{"*.yaml", "a/b.yaml"}, {"{a.yaml,b.yaml}", "b.yaml"}, {"[a-c]?.json", "b1.json"}, {"**/x", "a/b/x"}, {"[", "["}, {"{a,", "a"}, {`\*`, "*"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, p string) {
		g, err := DirectoryGlob(pattern)
		if err != nil {
			if !strings.Contains(err.Error(), "is not a glob pattern") {
				t.Fatalf("error %v does not name the pattern", err)
			}
			return
		}
		if g == nil {
			if pattern != "" {
				t.Fatal("a pattern compiled to nothing")
			}
			return
		}
		got := g.Match(p)
		if !strings.ContainsAny(pattern, `*?[]{}\,!-`) && got != (pattern == p) {
			t.Fatalf("literal %q matching %q: %v", pattern, p, got)
		}
	})
}

// TestSourceType: a source is rendered as the type its options name, else
// as the files directly in its path show, as Argo CD's repo-server decides.
func TestSourceType(t *testing.T) {
	files := map[string]string{
		"both/Chart.yaml": "", "both/kustomization.yaml": "", "both/templates/x.yaml": "",
		"chart/Chart.yaml": "", "chart/values.yaml": "",
		"odd/Kustomization": "", "odd/my-Chart.yaml": "",
		"plain/a.yaml": "", "plain/sub/Chart.yaml": "", "plain/sub/kustomization.yaml": "",
		"Chart.yaml": "",
	}
	for _, tc := range []struct{ source, want, err string }{
		{`{repoURL: r, path: both}`, typeKustomize, ""},
		{`{repoURL: r, path: chart}`, typeHelm, ""},
		{`{repoURL: r, path: odd}`, typeHelm, ""},
		{`{repoURL: r, path: plain}`, typeDirectory, ""},
		{`{repoURL: r, path: .}`, typeHelm, ""},
		{`{repoURL: r, path: chart, directory: {recurse: true}}`, typeDirectory, ""},
		{`{repoURL: r, path: plain, kustomize: {}}`, typeKustomize, ""},
		{`{repoURL: r, path: plain, plugin: {name: x}}`, typePlugin, ""},
		{`{repoURL: https://charts.example.com, chart: redis, targetRevision: 1.0.0}`, typeHelm, ""},
		{`{repoURL: r, path: chart, helm: {}, directory: {}}`, "", "the source names more than one type (Helm, Directory)"},
	} {
		_, src := sourceApp(t, tc.source)
		got, err := sourceType(src, files)
		if got != tc.want || (tc.err != "") != (err != nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %q, %v; want %q %q", tc.source, got, err, tc.want, tc.err)
		}
	}
}
