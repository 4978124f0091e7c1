package render

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

func jsonnetRepo(m map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

// TestJsonnet: a directory's Jsonnet files are evaluated as Argo CD's
// repo-server evaluates them: top-level arguments and external variables
// as strings or code, imports beside the file and in the library paths
// (the source's path first, then directory.jsonnet.libs from the root),
// an object or an array of objects as the output; and imports never leave
// the repository.
func TestJsonnet(t *testing.T) {
	repo := jsonnetRepo(map[string]string{
		"lib/k.libsonnet":         "{ cm(name, data):: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: name }, data: data } }\n",
		"apps/web/util.libsonnet": "{ replicas: 3 }\n",
		"apps/web/banner.txt":     "hello\n",
		"apps/web/main.jsonnet": `local k = import 'k.libsonnet';
local util = import 'util.libsonnet';
function(env, size=1) [
  k.cm('web-' + env, { size: std.toString(size), replicas: std.toString(util.replicas), banner: importstr 'banner.txt', region: std.extVar('region'), zones: std.toString(std.extVar('zones')) }),
]
`,
		"apps/web/one.jsonnet":    "{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'web' }, spec: { n: 1.5 } }\n",
		"apps/web/abs.jsonnet":    "import '/etc/passwd'\n",
		"apps/web/escape.jsonnet": "importstr '../../../etc/passwd'\n",
		"apps/web/nested.jsonnet": "[[{ kind: 'ConfigMap' }]]\n",
		"apps/web/nokind.jsonnet": "{ apiVersion: 'v1' }\n",
		"apps/web/string.jsonnet": "'text'\n",
		"apps/web/big.jsonnet":    "import 'huge.libsonnet'\n",
	})
	base := JsonnetOptions{Dir: "apps/web", Libs: []string{"/lib"},
		TLAs:    []JsonnetVar{{Name: "env", Value: "prod"}, {Name: "size", Value: "2 + 3", Code: true}},
		ExtVars: []JsonnetVar{{Name: "region", Value: "eu"}, {Name: "zones", Value: "[1, 2]", Code: true}},
		Unread:  Unread{"apps/web/huge.libsonnet": {Size: 5 << 20, Budget: "the per-file read budget of 4.0 MiB", Raise: "--max-file-bytes"}}}
	tests := []struct {
		name  string
		files []string
		libs  []string
		want  [][]drift.Object
		err   string
	}{
		{name: "tlas, extVars, libs, importstr", files: []string{"apps/web/main.jsonnet", "apps/web/one.jsonnet"}, want: [][]drift.Object{
			{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web-prod"},
				"data": map[string]any{"size": "5", "replicas": "3", "banner": "hello\n", "region": "eu", "zones": "[1, 2]"}}},
			{{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"n": 1.5}}},
		}},
		{name: "absolute import", files: []string{"apps/web/abs.jsonnet"}, err: "an absolute path is refused"},
		{name: "import out of the repository", files: []string{"apps/web/escape.jsonnet"}, err: "leaves the repository"},
		{name: "library out of the repository", files: []string{"apps/web/one.jsonnet"}, libs: []string{"../../etc"}, err: `the library path "../../etc" (directory.jsonnet.libs) leaves the repository`},
		{name: "library not found", files: []string{"apps/web/main.jsonnet"}, libs: []string{"nolib"}, err: `couldn't open import "k.libsonnet"`},
		{name: "array of arrays", files: []string{"apps/web/nested.jsonnet"}, err: "element 0 of the output is an array, not an object"},
		{name: "no kind", files: []string{"apps/web/nokind.jsonnet"}, err: "element 0 of the output has no kind"},
		{name: "a string", files: []string{"apps/web/string.jsonnet"}, err: "the output is a string"},
		{name: "import over the budget", files: []string{"apps/web/big.jsonnet"}, err: "apps/web/huge.libsonnet (5.0 MiB) is over the per-file read budget of 4.0 MiB, so it was not read; raise it with --max-file-bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := base
			opts.Files = tc.files
			if tc.libs != nil {
				opts.Libs = tc.libs
			}
			got, err := Jsonnet(repo, opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
	_, err := Jsonnet(repo, JsonnetOptions{Dir: "apps/web", Files: []string{"apps/web/big.jsonnet"}, Unread: base.Unread})
	var ue *UnreadError
	if !errors.As(err, &ue) || ue.File != "apps/web/huge.libsonnet" {
		t.Errorf("an unread import is an UnreadError naming it across the process boundary: %v", err)
	}
}

// TestJsonnetHostile: a Jsonnet file that recurses without end is stopped
// by Jsonnet's stack bound, and one that loops in constant stack by the
// render process's bounds (go-jsonnet allocates on each call, so memory
// runs out first, else time or CPU), each with an error that says so; the
// next render still works.
func TestJsonnetHostile(t *testing.T) {
	repo := jsonnetRepo(map[string]string{
		"j/deep.jsonnet": "local f(n) = 1 + f(n + 1); { kind: 'ConfigMap', n: f(0) }\n",
		"j/loop.jsonnet": "local f(n) = f(n + 1) tailstrict; { kind: 'ConfigMap', n: f(0) }\n",
		"j/ok.jsonnet":   "{ kind: 'ConfigMap' }\n",
	})
	_, err := Jsonnet(repo, JsonnetOptions{Dir: "j", Files: []string{"j/deep.jsonnet"}})
	if err == nil || !strings.Contains(err.Error(), "max stack frames exceeded") || strings.Count(err.Error(), "\n") > 8 {
		t.Errorf("endless recursion, said in a few lines: %v", err)
	}
	start := time.Now()
	_, err = Jsonnet(repo, JsonnetOptions{Dir: "j", Files: []string{"j/loop.jsonnet"}, Limits: Limits{Timeout: 2 * time.Second}})
	var le *LimitError
	if !errors.As(err, &le) || (le.Limit != "Timeout" && le.Limit != "MaxCPU" && le.Limit != "MaxMemory") {
		t.Errorf("an endless loop is stopped by a bound of the render process: %v", err)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("the loop was stopped after %s", took)
	}
	if got, err := Jsonnet(repo, JsonnetOptions{Dir: "j", Files: []string{"j/ok.jsonnet"}}); err != nil || len(got) != 1 || len(got[0]) != 1 {
		t.Errorf("the next render: %v %v", got, err)
	}
}

// TestJsonnetInputs: only the files a Jsonnet evaluation may import are
// sent to its render process, found through every import of every file
// reached.
func TestJsonnetInputs(t *testing.T) {
	repo := jsonnetRepo(map[string]string{
		"a/main.jsonnet":     "local x = import \"x.libsonnet\"; local y = import 'lib/y.libsonnet'; importbin 'logo.png'",
		"a/x.libsonnet":      "import '../shared/z.libsonnet'",
		"shared/z.libsonnet": "{}",
		"lib/y.libsonnet":    "{}",
		"a/logo.png":         "\x89PNG",
		"a/other.yaml":       "kind: ConfigMap\n",
		"docs/huge.bin":      strings.Repeat("x", 1000),
	})
	got, unread := jsonnetInputs(repo, Unread{"a/gone.libsonnet": {}}, []string{"a/main.jsonnet"}, []string{"a", ""})
	var names []string
	for f := range got {
		names = append(names, f)
	}
	want := []string{"a/logo.png", "a/main.jsonnet", "a/x.libsonnet", "lib/y.libsonnet", "shared/z.libsonnet"}
	if !sameSet(names, want) {
		t.Errorf("staged %v, want %v", names, want)
	}
	if len(unread) != 0 {
		t.Errorf("an unread file no import names is not sent: %v", unread)
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

// FuzzJsonnet: whatever a repository's Jsonnet file holds, its evaluation
// never panics the bot and ends within its bounds, with objects or an error.
func FuzzJsonnet(f *testing.F) {
	for _, s := range []string{
		"{ kind: 'ConfigMap' }",
		"[{ kind: 'A' }, { kind: 'B', x: [1, 2.5, 'x'] }]",
		"local f(n) = 1 + f(n); f(0)",
		"import '../../x'",
		"importstr '/etc/hostname'",
		"std.makeArray(1e6, function(i) { kind: 'K', i: i })",
		"error 'boom'",
		"{ a: std.extVar('nope') }",
		"function(x) x",
		"null",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		repo := map[string][]byte{"d/m.jsonnet": []byte(src), "d/l.libsonnet": []byte("{}")}
		start := time.Now()
		objs, err := Jsonnet(repo, JsonnetOptions{Dir: "d", Files: []string{"d/m.jsonnet"}, Limits: Limits{Timeout: 3 * time.Second, MaxRenderedBytes: 1 << 20}})
		if took := time.Since(start); took > 15*time.Second {
			t.Fatalf("took %s", took)
		}
		if err == nil {
			if len(objs) != 1 {
				t.Fatalf("one file, %d groups", len(objs))
			}
			for _, o := range objs[0] {
				if drift.Str(o, "kind") == "" {
					t.Fatalf("an object without kind: %v", o)
				}
			}
		}
	})
}

// FuzzJsonnetInputs: reading a file's imports never panics, whatever it
// holds, and stages only files of the repository.
func FuzzJsonnetInputs(f *testing.F) {
	f.Add("import 'a.libsonnet' importstr \"../b\" importbin @'c' import '\\u0041'")
	f.Add("import '/etc/passwd' import '../../../x'")
	f.Fuzz(func(t *testing.T, src string) {
		repo := map[string][]byte{"d/m.jsonnet": []byte(src), "d/a.libsonnet": []byte(src), "b": nil}
		got, _ := jsonnetInputs(repo, nil, []string{"d/m.jsonnet"}, []string{"d", "lib"})
		for f := range got {
			if _, ok := repo[f]; !ok {
				t.Fatalf("staged %q, not a file of the repository", f)
			}
		}
	})
}
