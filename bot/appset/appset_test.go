package appset

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/drift"
)

const repoURL = "https://github.com/example/gitops.git"

// repo is a GitOps repository of the cluster-addons shape in Argo CD's
// documentation: add-ons by directory, environments by config file.
var repo = map[string]string{
	"cluster-addons/argo-workflows/kustomization.yaml": "resources: []\n",
	"cluster-addons/prometheus-operator/Chart.yaml":    "name: p\n",
	"cluster-addons/prometheus-operator/values.yaml":   "a: 1\n",
	"cluster-addons/excluded/kustomization.yaml":       "resources: []\n",
	".github/workflows/ci.yaml":                        "on: push\n",
	"apps/guestbook/config.json":                       `{"app": {"name": "guestbook", "replicas": 2}, "env": "prod"}`,
	"apps/blog/config.json":                            `{"app": {"name": "blog", "replicas": 1}, "env": "staging"}`,
	"apps/regions.yaml":                                "- region: eu\n  zone: a\n- region: us\n  zone: b\n",
}

func files(repo map[string]string) Files {
	return func(url, _ string) (map[string]string, bool) {
		if url != repoURL {
			return nil, false
		}
		return repo, true
	}
}

func parse(t testing.TB, y string) drift.Object {
	t.Helper()
	var o drift.Object
	if err := yaml.Unmarshal([]byte(y), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func names(r Result) []string {
	var out []string
	for _, g := range r.Applications {
		out = append(out, drift.Str(g.Application, "metadata", "name"))
	}
	return out
}

// TestResolve resolves ApplicationSets over the files of repo and checks
// the Applications made, in order, and fields of some.
func TestResolve(t *testing.T) {
	var tests []resolveCase
	for _, group := range [][]resolveCase{generatorCases(), combinedCases(), filesAndPatchCases()} {
		tests = append(tests, group...)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Resolve(parse(t, tt.set), Options{Files: files(repo)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Unresolved) > 0 {
				t.Fatalf("unresolved: %+v", res.Unresolved)
			}
			if got := names(res); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("applications %q, want %q", got, tt.want)
			}
			for _, g := range res.Applications {
				n := drift.Str(g.Application, "metadata", "name")
				if c, ok := tt.check[n]; ok {
					k, v, _ := strings.Cut(c, "=")
					if got := drift.Lookup(g.Application, strings.Split(k, "/")...); got != v && !(v == "true" && got == true) {
						t.Errorf("%s: %s is %v, want %s", n, k, got, v)
					}
				}
				if drift.Str(g.Application, "kind") != "Application" || drift.Str(g.Application, "apiVersion") != "argoproj.io/v1alpha1" {
					t.Errorf("%s: not an Application: %v", n, g.Application)
				}
			}
		})
	}
}

// resolveCase is one ApplicationSet of TestResolve, the names of the
// Applications it makes, in order, and "path=value" checks by name.
type resolveCase struct {
	name  string
	set   string
	want  []string          // Application names in order
	check map[string]string // name -> "path=value" checks, "/"-separated keys
}

// generatorCases are single generators: git directories and a list.
func generatorCases() []resolveCase {
	return []resolveCase{
		{
			name: "cluster addons from git directories with exclude",
			set: `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: addons, namespace: argocd}
spec:
  generators:
  - git:
      repoURL: ` + repoURL + `
      revision: HEAD
      directories:
      - path: cluster-addons/*
      - path: cluster-addons/excluded
        exclude: true
  template:
    metadata: {name: '{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: ` + repoURL + `, targetRevision: HEAD, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{path[1]}}'}`,
			want:  []string{"argo-workflows", "prometheus-operator"},
			check: map[string]string{"argo-workflows": "spec/source/path=cluster-addons/argo-workflows", "prometheus-operator": "spec/destination/namespace=prometheus-operator"},
		},
		{
			name: "a list of environments",
			set: `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: guestbook}
spec:
  generators:
  - list:
      elements:
      - {cluster: engineering-dev, url: https://1.2.3.4}
      - {cluster: engineering-prod, url: https://2.4.6.8, values: {tier: gold}}
  template:
    metadata: {name: '{{cluster}}-guestbook', labels: {tier: '{{values.tier}}'}}
    spec:
      project: default
      source: {repoURL: ` + repoURL + `, path: 'guestbook/{{cluster}}'}
      destination: {server: '{{url}}', namespace: guestbook}`,
			want:  []string{"engineering-dev-guestbook", "engineering-prod-guestbook"},
			check: map[string]string{"engineering-dev-guestbook": "metadata/labels/tier={{values.tier}}", "engineering-prod-guestbook": "metadata/labels/tier=gold"},
		},
	}
}

// combinedCases combine generators: a matrix and a merge.
func combinedCases() []resolveCase {
	return []resolveCase{
		{
			name: "matrix of git directories and a list",
			set: `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: matrix}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - matrix:
      generators:
      - git:
          repoURL: ` + repoURL + `
          revision: HEAD
          directories: [{path: cluster-addons/*}]
      - list:
          elements:
          - {env: dev}
          - {env: prod}
  template:
    metadata: {name: '{{.path.basenameNormalized}}-{{.env}}'}
    spec:
      project: default
      source: {repoURL: ` + repoURL + `, path: '{{.path.path}}', targetRevision: '{{ if eq .env "prod" }}v1{{ else }}HEAD{{ end }}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{index .path.segments 1}}'}`,
			want:  []string{"argo-workflows-dev", "argo-workflows-prod", "excluded-dev", "excluded-prod", "prometheus-operator-dev", "prometheus-operator-prod"},
			check: map[string]string{"excluded-prod": "spec/source/targetRevision=v1", "excluded-dev": "spec/source/targetRevision=HEAD"},
		},
		{
			name: "merge with mergeKeys overrides the base's parameters",
			set: `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: merge}
spec:
  generators:
  - merge:
      mergeKeys: [cluster]
      generators:
      - list:
          elements:
          - {cluster: a, kafka: "true", redis: "false"}
          - {cluster: b, kafka: "true", redis: "false"}
      - list:
          elements:
          - {cluster: b, redis: "true"}
          - {cluster: c, redis: "true"}
  template:
    metadata: {name: '{{cluster}}'}
    spec:
      project: default
      source: {repoURL: ` + repoURL + `, path: 'kafka-{{kafka}}/redis-{{redis}}'}
      destination: {server: https://kubernetes.default.svc}`,
			want:  []string{"a", "b"},
			check: map[string]string{"a": "spec/source/path=kafka-true/redis-false", "b": "spec/source/path=kafka-true/redis-true"},
		},
	}
}

// filesAndPatchCases are git files generators and a goTemplate set with a
// templatePatch and a per-generator template.
func filesAndPatchCases() []resolveCase {
	return []resolveCase{
		{
			name: "git files flattened, a YAML list one element per item",
			set: `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: files}
spec:
  generators:
  - git:
      repoURL: ` + repoURL + `
      revision: HEAD
      files: [{path: "apps/**.json"}]
  - git:
      repoURL: ` + repoURL + `
      revision: HEAD
      files: [{path: apps/regions.yaml}]
  template:
    metadata: {name: '{{app.name}}{{region}}'}
    spec:
      project: default
      source: {repoURL: ` + repoURL + `, path: '{{path}}', helm: {parameters: [{name: replicas, value: '{{app.replicas}}'}]}}
      destination: {server: https://kubernetes.default.svc, namespace: '{{path.basename}}'}`,
			want:  []string{"blog{{region}}", "guestbook{{region}}", "{{app.name}}eu", "{{app.name}}us"},
			check: map[string]string{"guestbook{{region}}": "spec/destination/namespace=guestbook", "{{app.name}}eu": "spec/source/path=apps"},
		},
		{
			name: "goTemplate with templatePatch and a per-generator template",
			set: `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: patch, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - list:
      elements:
      - {name: a, autoSync: true, prune: true}
      - {name: b, autoSync: false}
      template:
        metadata: {labels: {from: generator}}
        spec: {project: default}
  template:
    metadata: {name: 'app-{{.name}}', namespace: ignored}
    spec:
      project: '{{.name}}-project'
      source: {repoURL: ` + repoURL + `, path: 'apps/{{.name}}'}
      destination: {server: https://kubernetes.default.svc}
  templatePatch: |
    {{- if .autoSync }}
    spec:
      project: patched
      syncPolicy:
        automated:
          prune: {{ .prune }}
    {{- end }}`,
			want:  []string{"app-a", "app-b"},
			check: map[string]string{"app-a": "spec/syncPolicy/automated/prune=true", "app-b": "metadata/labels/from=generator"},
		},
	}
}

func TestResolveDetails(t *testing.T) {
	set := parse(t, `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: patch, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - list:
      elements: [{name: a}]
  template:
    metadata: {name: 'app-{{.name}}', namespace: ignored}
    spec:
      project: keep
      source: {repoURL: x, path: 'apps/{{.name}}'}
      destination: {server: https://kubernetes.default.svc}
  templatePatch: |
    spec:
      project: patched
`)
	res, err := Resolve(set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	app := res.Applications[0].Application
	// Argo CD puts every Application in the set's namespace, adds the
	// resources finalizer, and keeps the template's project over a patch.
	if ns := drift.Str(app, "metadata", "namespace"); ns != "argocd" {
		t.Errorf("namespace %q, want the set's", ns)
	}
	if f := drift.List(app, "metadata", "finalizers"); len(f) != 1 || f[0] != "resources-finalizer.argocd.argoproj.io" {
		t.Errorf("finalizers %v", f)
	}
	if p := drift.Str(app, "spec", "project"); p != "keep" {
		t.Errorf("project %q: a templatePatch does not change the project", p)
	}
	if g := res.Applications[0].Generator; g != "generators[0].list" {
		t.Errorf("generator %q", g)
	}
	if p := res.Applications[0].Params["name"]; p != "a" {
		t.Errorf("params %v", res.Applications[0].Params)
	}
}

func TestResolveUnresolved(t *testing.T) {
	set := parse(t, `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: mixed}
spec:
  generators:
  - clusters: {selector: {matchLabels: {env: prod}}}
  - pullRequest: {github: {owner: o, repo: r}}
  - git: {repoURL: https://github.com/other/repo.git, revision: main, directories: [{path: '*'}]}
  - matrix:
      generators:
      - list: {elements: [{a: x}]}
      - scmProvider: {github: {organization: o}}
  - list: {elements: [{name: kept}]}
  template:
    metadata: {name: '{{name}}'}
    spec: {project: default, destination: {server: https://kubernetes.default.svc}}
`)
	res, err := Resolve(set, Options{Files: files(repo)})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); !reflect.DeepEqual(got, []string{"kept"}) {
		t.Errorf("applications %v", got)
	}
	want := []Unresolved{
		{Generator: "generators[0].clusters", Needs: NeedsCluster},
		{Generator: "generators[1].pullRequest", Needs: NeedsArgoCD},
		{Generator: "generators[2].git", Needs: "a checkout of https://github.com/other/repo.git at main"},
		{Generator: "generators[3].matrix.generators[1].scmProvider", Needs: NeedsArgoCD},
	}
	if len(res.Unresolved) != len(want) {
		t.Fatalf("unresolved %+v", res.Unresolved)
	}
	for i, w := range want {
		u := res.Unresolved[i]
		if u.Generator != w.Generator || u.Needs != w.Needs || u.Reason == "" {
			t.Errorf("unresolved[%d] = %+v, want %+v", i, u, w)
		}
	}

	// With cluster Secrets, the clusters generator resolves, with the local
	// cluster Argo CD adds.
	secret := parse(t, `
apiVersion: v1
kind: Secret
metadata: {name: prod, labels: {argocd.argoproj.io/secret-type: cluster, env: prod}}
data: {name: cHJvZA==, server: aHR0cHM6Ly9wcm9kLmV4YW1wbGU=}
`)
	res, err = Resolve(parse(t, `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: clusters}
spec:
  generators:
  - clusters: {}
  template:
    metadata: {name: 'guestbook-{{name}}'}
    spec: {project: default, destination: {server: '{{server}}'}}
`), Options{Cluster: []drift.Object{secret}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); !reflect.DeepEqual(got, []string{"guestbook-prod", "guestbook-in-cluster"}) {
		t.Errorf("applications %v", got)
	}
	if len(res.Partial) != 0 {
		t.Errorf("a cluster context is the whole list of clusters, yet partial: %+v", res.Partial)
	}
}

// TestResolveClustersFromGit: without a cluster context, a clusters
// generator makes what Git tells of Argo CD's clusters: the local cluster,
// which Argo CD lists without a Secret unless a selector is set or a
// Secret names its server, and the cluster Secrets the repository
// declares; it is named as partial. A selector that no declared Secret
// matches leaves it unresolved.
func TestResolveClustersFromGit(t *testing.T) {
	secret := func(name, server, env string) drift.Object {
		enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
		return drift.Object{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "cluster-" + name, "labels": map[string]any{"argocd.argoproj.io/secret-type": "cluster", "env": env}},
			"data":     map[string]any{"name": enc(name), "server": enc(server)}}
	}
	prod := secret("prod", "https://prod.example.com", "prod")
	local := secret("local", "https://kubernetes.default.svc", "dev")
	set := func(gen string) drift.Object {
		return parse(t, `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: clusters}
spec:
  generators:
  - `+gen+`
  template:
    metadata: {name: 'web-{{name}}'}
    spec: {project: default, destination: {server: '{{server}}'}}
`)
	}
	tests := []struct {
		name                string
		gen                 string
		opt                 Options
		want                []string
		partial, unresolved bool
	}{
		{name: "no selector, nothing declared: the local cluster", gen: "clusters: {}", want: []string{"web-in-cluster"}, partial: true},
		{name: "no selector, a declared Secret: it and the local cluster", gen: "clusters: {}", opt: Options{Declared: []drift.Object{prod}}, want: []string{"web-prod", "web-in-cluster"}, partial: true},
		{name: "a declared Secret for the local server replaces in-cluster", gen: "clusters: {}", opt: Options{Declared: []drift.Object{local}}, want: []string{"web-local"}, partial: true},
		{name: "a selector a declared Secret matches", gen: "clusters: {selector: {matchLabels: {env: prod}}}", opt: Options{Declared: []drift.Object{prod, local}}, want: []string{"web-prod"}, partial: true},
		{name: "a selector no declared Secret matches", gen: "clusters: {selector: {matchLabels: {env: qa}}}", opt: Options{Declared: []drift.Object{prod}}, unresolved: true},
		{name: "in a matrix with a list", gen: "matrix: {generators: [{list: {elements: [{app: a}]}}, {clusters: {}}]}", want: []string{"web-in-cluster"}, partial: true},
		{name: "a cluster context and a declared Secret", gen: "clusters: {}", opt: Options{Cluster: []drift.Object{local}, Declared: []drift.Object{prod}}, want: []string{"web-local", "web-prod"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Resolve(set(tc.gen), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res); !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("applications %v, want %v", got, tc.want)
			}
			if (len(res.Unresolved) > 0) != tc.unresolved {
				t.Errorf("unresolved %+v, want unresolved %v", res.Unresolved, tc.unresolved)
			}
			if (len(res.Partial) > 0) != tc.partial {
				t.Errorf("partial %+v, want partial %v", res.Partial, tc.partial)
			}
			for _, p := range res.Partial {
				if p.Needs != NeedsCluster || !strings.HasSuffix(p.Generator, "clusters") || p.Reason == "" {
					t.Errorf("partial %+v: want the clusters generator, a reason and --cluster", p)
				}
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	head := `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: bad}
spec:
`
	tmpl := `
  template:
    metadata: {name: '{{name}}'}
    spec: {project: default, destination: {server: https://kubernetes.default.svc}}
`
	tests := []struct{ name, spec, want string }{
		{"duplicate names", `  generators: [{list: {elements: [{name: a}, {name: a}]}}]` + tmpl, `both make an Application named "a"`},
		{"matrix of three", `  generators: [{matrix: {generators: [{list: {elements: [{a: x}]}}, {list: {elements: [{b: x}]}}, {list: {elements: [{c: x}]}}]}}]` + tmpl, "a matrix takes exactly two"},
		{"unknown generator", `  generators: [{lists: {elements: []}}]` + tmpl, `"lists" is not a generator`},
		{"merge without keys", `  generators: [{merge: {generators: [{list: {elements: [{a: x}]}}, {list: {elements: [{b: x}]}}]}}]` + tmpl, "no mergeKeys"},
		{"non-string element without goTemplate", `  generators: [{list: {elements: [{name: 1}]}}]` + tmpl, "elements[0].name is a number, not a string"},
		{"a template that does not parse", `  goTemplate: true
  generators: [{list: {elements: [{name: a}]}}]
  template:
    metadata: {name: '{{ .name '}
    spec: {project: default}
`, "generators[0].list, parameters 1"},
		{"missingkey=error", `  goTemplate: true
  goTemplateOptions: [missingkey=error]
  generators: [{list: {elements: [{name: a}]}}]
  template:
    metadata: {name: '{{ .nope }}'}
    spec: {project: default}
`, "map has no entry for key"},
		{"unknown option", `  goTemplate: true
  goTemplateOptions: [strict]
  generators: [{list: {elements: [{name: a}]}}]` + tmpl, `"strict" is not an option`},
		{"no name", `  generators: [{list: {elements: [{name: a}]}}]
  template:
    metadata: {name: ''}
    spec: {project: default}
`, "has no name"},
		{"selector with a bad operator", `  generators: [{list: {elements: [{name: a}]}, selector: {matchExpressions: [{key: name, operator: Like}]}}]` + tmpl, `"Like" is not an operator`},
		{"bad templatePatch", `  generators: [{list: {elements: [{name: a}]}}]
  templatePatch: 'spec: [1'` + tmpl, "templatePatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resolve(parse(t, head+tt.spec), Options{Files: files(repo)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestMaxApplications(t *testing.T) {
	set := parse(t, `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: big}
spec:
  goTemplate: true
  generators:
  - list:
      elementsYaml: '{{ range until 50 }}- {n: "{{ . }}"}{{ "\n" }}{{ end }}'
  template:
    metadata: {name: 'a{{.n}}'}
    spec: {project: default}
`)
	// elementsYaml is not rendered outside a matrix: one element, literal.
	if _, err := Resolve(set, Options{}); err == nil {
		t.Fatal("a literal template is no YAML list; want an error")
	}
	var elems []any
	for i := range 30 {
		elems = append(elems, map[string]any{"n": string(rune('a'+i%26)) + string(rune('a'+i/26))})
	}
	set = parse(t, `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: big}
spec:
  generators: [{list: {elements: []}}]
  template:
    metadata: {name: 'a{{n}}'}
    spec: {project: default}
`)
	set["spec"].(map[string]any)["generators"].([]any)[0].(map[string]any)["list"].(map[string]any)["elements"] = elems
	if _, err := Resolve(set, Options{MaxApplications: 10}); err == nil || !strings.Contains(err.Error(), "more than 10 Applications") {
		t.Fatalf("error %v, want the limit", err)
	}
	if res, err := Resolve(set, Options{MaxApplications: 30}); err != nil || len(res.Applications) != 30 {
		t.Fatalf("%d applications, error %v", len(res.Applications), err)
	}
}

func TestPathspec(t *testing.T) {
	tree := map[string]string{"a/b/c.json": "", "a/c.json": "", "a/b/d.yaml": "", "x.json": "", "a*/e": ""}
	tests := []struct {
		pattern string
		want    []string
	}{
		{"a/*.json", []string{"a/b/c.json", "a/c.json"}}, // * crosses /
		{"a/*/c.json", []string{"a/b/c.json"}},
		{"a/b", []string{"a/b/c.json", "a/b/d.yaml"}}, // a directory
		{"*.json", []string{"a/b/c.json", "a/c.json", "x.json"}},
		{"a/?/c.json", []string{"a/b/c.json"}},
		{"a/[bc]/*", []string{"a/b/c.json", "a/b/d.yaml"}},
		{"./x.json", []string{"x.json"}},
		{"a*", []string{"a*/e", "a/b/c.json", "a/b/d.yaml", "a/c.json"}},
		{"../x.json", nil},
	}
	for _, tt := range tests {
		if got := lsFiles(tree, tt.pattern); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.pattern, got, tt.want)
		}
	}
	if got := directories(map[string]string{"a-c/x": "", "a/b/x": "", ".git/x/y": "", "z": ""}); !reflect.DeepEqual(got, []string{"a", "a/b", "a-c"}) {
		t.Errorf("directories %v: depth first by name, hidden left out", got)
	}
}

// TestHostileTemplates: templates written to run for hours or fill memory
// stop with an error naming the bound, quickly.
func TestHostileTemplates(t *testing.T) {
	for _, name := range []string{
		`{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`,
		`{{ range until 1000000000 }}{{ end }}`,
		`{{ repeat 1000000000 "x" }}`,
		`{{ define "a" }}{{ template "a" . }}{{ template "a" . }}{{ end }}{{ template "a" . }}`,
		`{{ tpl "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}" . }}`,
		`{{ range $i := until 3000 }}{{ range until 3000 }}{{ $i }}{{ end }}{{ end }}`,
	} {
		set := parse(t, `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: hostile}
spec:
  goTemplate: true
  generators: [{list: {elements: [{a: b}]}}]
  template:
    metadata: {name: x}
    spec: {project: default}
`)
		set["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["name"] = name
		start := time.Now()
		_, err := Resolve(set, Options{})
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		// The bounds are counts (output bytes, range length, depth), not
		// time; a minute only catches a template that ran to its end (the
		// first of them, unbounded, would take hours). Under -race on a
		// loaded 2-core machine the bounded ones take up to about 13 s.
		if d := time.Since(start); d > time.Minute {
			t.Errorf("%s: took %v", name, d)
		}
	}
}

// TestMergeOverride: with goTemplate, a matrix's and a merge's parameter
// sets combine as Argo CD's mergo.Merge(WithOverride) combines them.
func TestMergeOverride(t *testing.T) {
	shared := map[string]any{"a": "1"}
	dst := map[string]any{"keep": "x", "m": map[string]any{"a": "0", "b": "0"}, "l": []any{"x"}, "s": "old", "empty": map[string]any{}, "shared": shared}
	src := map[string]any{"m": map[string]any{"a": "1"}, "l": []any{"y", "z"}, "s": "", "n": nil, "empty": map[string]any{"c": "2"}, "shared": map[string]any{"b": "2"}}
	if err := mergeOverride(dst, src); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"keep": "x", "m": map[string]any{"a": "1", "b": "0"}, "l": []any{"y", "z"}, "s": "", "n": nil, "empty": map[string]any{"c": "2"}, "shared": map[string]any{"a": "1", "b": "2"}}
	if !reflect.DeepEqual(dst, want) {
		t.Errorf("merged %v, want %v", dst, want)
	}
	// Maps merge in place, as mergo merges them: a map two sets share
	// changes in both.
	if shared["b"] != "2" {
		t.Errorf("a shared map was copied, not merged in place: %v", shared)
	}
	if err := mergeOverride(map[string]any{"values": map[string]string{"a": "b"}}, map[string]any{"values": map[string]any{"c": 1}}); err == nil {
		t.Error("a map of any values merged into a generator's map of strings: Argo CD's controller fails on it")
	}
}
