package render

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// tgz packs files (name -> content, names under the chart's directory as
// helm package writes them, e.g. "common/Chart.yaml") as a chart archive.
func tgz(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func byteFiles(m map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

// cmChart is a chart whose one ConfigMap shows the values a test looks at.
func cmChart(dir string, extra map[string]string) map[string]string {
	files := map[string]string{
		dir + "/Chart.yaml":  "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		dir + "/values.yaml": "a: chart\nb: chart\n",
		dir + "/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
data:
  revision: {{ .Release.Revision | quote }}
  a: {{ .Values.a | quote }}
  b: {{ .Values.b | quote }}
  {{- with .Values.c }}
  c: {{ . | toJson | quote }}
  {{- end }}
`,
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

func cmData(t *testing.T, objs []drift.Object) map[string]any {
	t.Helper()
	for _, o := range objs {
		if drift.RefOf(o).Kind == "ConfigMap" {
			d, _ := o["data"].(map[string]any)
			return d
		}
	}
	t.Fatalf("no ConfigMap rendered in %v", objs)
	return nil
}

func renderedNames(objs []drift.Object) string {
	var out []string
	for _, o := range objs {
		out = append(out, drift.RefOf(o).Kind+"/"+drift.Str(o, "metadata", "name"))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestHelmValuesAsArgoCD(t *testing.T) {
	refs := func(local bool) map[string]HelmRef {
		return map[string]HelmRef{"values": {Repository: "https://git.example/org/values.git", Local: local}}
	}
	cases := []struct {
		name  string
		files map[string]string
		opts  HelmOptions
		want  map[string]any // ConfigMap data entries checked
		err   string         // error wanted, by a part of its text
		errAs any            // and by type
	}{
		{name: "a $ref value file of the same repository is read from its root",
			files: cmChart("charts/app", map[string]string{"envs/prod/values.yaml": "a: prod\n"}),
			opts:  HelmOptions{ValueFiles: []string{"$values/envs/prod/values.yaml"}, Refs: refs(true)},
			want:  map[string]any{"a": "prod", "b": "chart"}},
		{name: "a $ref value file of another repository is not fetched",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValueFiles: []string{"$values/envs/prod/values.yaml"}, Refs: refs(false)},
			err:   "https://git.example/org/values.git", errAs: new(*NotLocalError)},
		{name: "a $ref to a chart source is not fetched",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValueFiles: []string{"$values/values.yaml"}, Refs: map[string]HelmRef{"values": {Repository: "oci://registry.example/charts", Chart: "base", Local: true}}},
			err:   "chart base", errAs: new(*NotLocalError)},
		{name: "a $ref value file may not leave its repository",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValueFiles: []string{"$values/../../etc/passwd"}, Refs: refs(true)},
			err:   "outside"},
		{name: "a $name that is no ref is an environment variable, empty, so the path is from the root",
			files: cmChart("charts/app", map[string]string{"envs/x.yaml": "a: root\n"}),
			opts:  HelmOptions{ValueFiles: []string{"$nothing/envs/x.yaml"}},
			want:  map[string]any{"a": "root"}},
		{name: "value files relative to the chart, then from the root, later wins",
			files: cmChart("charts/app", map[string]string{"charts/app/values-prod.yaml": "a: prod\nb: prod\n", "common/values.yaml": "b: common\n"}),
			opts:  HelmOptions{ValueFiles: []string{"values-prod.yaml", "/common/values.yaml"}},
			want:  map[string]any{"a": "prod", "b": "common"}},
		{name: "../ within the repository is allowed",
			files: cmChart("charts/app", map[string]string{"shared/v.yaml": "a: shared\n"}),
			opts:  HelmOptions{ValueFiles: []string{"../../shared/v.yaml"}},
			want:  map[string]any{"a": "shared"}},
		{name: "a value file that leaves the repository is refused",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValueFiles: []string{"../../../secrets.yaml"}},
			err:   "outside the repository"},
		{name: "an https value file is not fetched",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValueFiles: []string{"https://raw.example/values.yaml"}},
			err:   "not fetched", errAs: new(*RemoteError)},
		{name: "a scheme Argo CD does not allow is refused",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValueFiles: []string{"s3://bucket/values.yaml"}},
			err:   `scheme "s3" is not allowed`},
		{name: "a missing value file fails",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValueFiles: []string{"missing.yaml"}},
			err:   "charts/app/missing.yaml"},
		{name: "ignoreMissingValueFiles skips a missing value file and an empty glob",
			files: cmChart("charts/app", map[string]string{"charts/app/v.yaml": "a: v\n"}),
			opts:  HelmOptions{ValueFiles: []string{"missing.yaml", "v.yaml", "none/*.yaml"}, IgnoreMissingValueFiles: true},
			want:  map[string]any{"a": "v"}},
		{name: "a glob expands in walk order, a file listed on its own keeps its own place",
			files: cmChart("charts/app", map[string]string{"charts/app/env/1.yaml": "a: one\nb: one\n", "charts/app/env/2.yaml": "a: two\n", "charts/app/env/3.yaml": "b: three\n"}),
			opts:  HelmOptions{ValueFiles: []string{"env/2.yaml", "env/*.yaml"}},
			want:  map[string]any{"a": "one", "b": "three"}},
		{name: "a glob without a match fails",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValueFiles: []string{"env/*.yaml"}},
			err:   "matched no files"},
		{name: "valuesObject wins over values",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{Values: "a: string\nb: string\n", ValuesObject: map[string]any{"a": "object"}},
			want:  map[string]any{"a": "object", "b": "chart"}},
		{name: "values is read when there is no valuesObject, after the value files",
			files: cmChart("charts/app", map[string]string{"charts/app/v.yaml": "a: file\nb: file\n"}),
			opts:  HelmOptions{ValueFiles: []string{"v.yaml"}, Values: "a: string\n"},
			want:  map[string]any{"a": "string", "b": "file"}},
		{name: "--set-string wins over --set, a comma is part of a value, braces are a list",
			files: cmChart("charts/app", nil),
			opts: HelmOptions{Parameters: []Parameter{{Name: "a", Value: "x,y"}, {Name: "b", Value: "1", ForceString: true},
				{Name: "b", Value: "2"}, {Name: "c", Value: "{p,q}"}}},
			want: map[string]any{"a": "x,y", "b": "1", "c": `["p","q"]`}},
		{name: "fileParameters set a value to a file's content",
			files: cmChart("charts/app", map[string]string{"charts/app/files/motd": "hello"}),
			opts:  HelmOptions{FileParameters: []FileParameter{{Name: "a", Path: "files/motd"}}},
			want:  map[string]any{"a": "hello"}},
		{name: "a file parameter from a ref source",
			files: cmChart("charts/app", map[string]string{"motd": "from ref"}),
			opts:  HelmOptions{FileParameters: []FileParameter{{Name: "a", Path: "$values/motd"}}, Refs: refs(true)},
			want:  map[string]any{"a": "from ref"}},
		{name: "the build environment is substituted in value files and parameters",
			files: cmChart("charts/app", map[string]string{"charts/app/values-web.yaml": "a: web\n"}),
			opts: HelmOptions{ValueFiles: []string{"values-$ARGOCD_APP_NAME.yaml"}, Env: map[string]string{"ARGOCD_APP_NAME": "web"},
				Parameters: []Parameter{{Name: "b", Value: "${ARGOCD_APP_NAME}-x"}}},
			want: map[string]any{"a": "web", "b": "web-x"}},
		{name: "a revision the render is not given is named, not taken as empty",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{Parameters: []Parameter{{Name: "b", Value: "$ARGOCD_APP_REVISION"}}},
			err:   "ARGOCD_APP_REVISION"},
		{name: "a ref name Argo CD refuses",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{Refs: map[string]HelmRef{"a.b": {Local: true}}},
			err:   "cannot contain"},
		{name: "more value files than a source can have",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValueFiles: strings.Split(strings.Repeat("**/*.yaml,", 300), ",")},
			err:   "over the render limit value files", errAs: new(*LimitError)},
		{name: "namespace defaults to default, revision is 1",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{},
			want:  map[string]any{"revision": "1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.ChartDir, opts.ReleaseName = "charts/app", "rel"
			objs, err := Helm(byteFiles(c.files), opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one saying %q", err, c.err)
				}
				if c.errAs != nil && !errors.As(err, c.errAs) {
					t.Fatalf("err = %T %v, want %T", err, err, c.errAs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data := cmData(t, objs)
			for k, v := range c.want {
				if data[k] != v {
					t.Errorf("%s = %#v, want %#v (data %v)", k, data[k], v, data)
				}
			}
			if ns := drift.Str(objs[0], "metadata", "namespace"); c.opts.Namespace == "" && ns != "default" {
				t.Errorf("namespace %q, want default as helm template without --namespace", ns)
			}
		})
	}
}

func TestHelmCapabilitiesAndOutput(t *testing.T) {
	chart := map[string]string{
		"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"c/templates/gated.yaml": `{{- if semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version }}
apiVersion: v1
kind: ConfigMap
metadata: {name: new-kube}
{{- end }}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: mon}
{{- end }}
`,
		"c/templates/test.yaml":      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: test\n  annotations: {helm.sh/hook: test}\n",
		"c/templates/NOTES.txt":      "not a manifest",
		"c/templates/_h.tpl":         "{{ define \"x\" }}kind: Secret{{ end }}",
		"c/crds/crd.yaml":            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.example.com}\n",
		"c/.helmignore":              "templates/ignored-*.yaml\n",
		"c/templates/ignored-x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored}\n",
		"c/templates/.hidden.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n",
	}
	cases := []struct {
		name string
		opts HelmOptions
		want string
		err  string
	}{
		{name: "defaults: crds and hooks printed, the client libraries' Kubernetes, no extra API",
			want: "ConfigMap/new-kube CustomResourceDefinition/things.example.com Pod/test"},
		{name: "kubeVersion and apiVersions gate templates",
			opts: HelmOptions{KubeVersion: "1.31.2", APIVersions: []string{"monitoring.coreos.com/v1"}},
			want: "ConfigMap/new-kube CustomResourceDefinition/things.example.com Pod/test ServiceMonitor/mon"},
		{name: "a provider's kubeVersion is read as Argo CD reads it",
			opts: HelmOptions{KubeVersion: "v1.30.3-eks-a18cd3a"},
			want: "ConfigMap/new-kube CustomResourceDefinition/things.example.com Pod/test"},
		{name: "an older kubeVersion",
			opts: HelmOptions{KubeVersion: "1.29"},
			want: "CustomResourceDefinition/things.example.com Pod/test"},
		{name: "skipCrds and skipTests",
			opts: HelmOptions{SkipCrds: true, SkipTests: true, KubeVersion: "1.29.0"},
			want: ""},
		{name: "a kubeVersion that is none",
			opts: HelmOptions{KubeVersion: "latest"},
			err:  "could not parse kubernetes version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.ChartDir, opts.ReleaseName = "c", "r"
			objs, err := Helm(byteFiles(chart), opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := renderedNames(objs); got != c.want {
				t.Errorf("rendered %q, want %q", got, c.want)
			}
		})
	}
	withKube := byteFiles(chart)
	withKube["c/Chart.yaml"] = []byte("apiVersion: v2\nname: c\nversion: 0.1.0\nkubeVersion: '>=1.32.0-0'\n")
	if _, err := Helm(withKube, HelmOptions{ChartDir: "c", KubeVersion: "1.30.0"}); err == nil || !strings.Contains(err.Error(), "incompatible with Kubernetes v1.30.0") {
		t.Errorf("a chart's kubeVersion must gate it as helm does, got %v", err)
	}
	lib := byteFiles(chart)
	lib["c/Chart.yaml"] = []byte("apiVersion: v2\nname: c\nversion: 0.1.0\ntype: library\n")
	if _, err := Helm(lib, HelmOptions{ChartDir: "c"}); err == nil || !strings.Contains(err.Error(), "library charts are not installable") {
		t.Errorf("a library chart renders nothing in Argo CD, got %v", err)
	}
}

func TestHelmDependencies(t *testing.T) {
	sub := func(name, version, cm string) map[string]string {
		return map[string]string{
			name + "/Chart.yaml":        "apiVersion: v2\nname: " + name + "\nversion: " + version + "\n",
			name + "/values.yaml":       "greeting: " + name + "\n",
			name + "/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + cm + "\ndata:\n  greeting: {{ .Values.greeting }}\n",
		}
	}
	under := func(dir string, files map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range files {
			out[dir+"/"+k] = v
		}
		return out
	}
	parent := func(deps, values string) map[string]string {
		return map[string]string{
			"apps/web/Chart.yaml":          "apiVersion: v2\nname: web\nversion: 1.0.0\ndependencies:\n" + deps,
			"apps/web/values.yaml":         values,
			"apps/web/templates/main.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: main}\n",
		}
	}
	merge := func(ms ...map[string]string) map[string][]byte {
		out := map[string][]byte{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = []byte(v)
			}
		}
		return out
	}
	withArchive := func(files map[string][]byte, name string, data []byte) map[string][]byte {
		files[name] = data
		return files
	}
	cases := []struct {
		name  string
		files map[string][]byte
		want  string
		err   string
		errAs any
	}{
		{name: "a vendored archive in charts/ is rendered with its values",
			files: withArchive(merge(parent("  - {name: redis, version: 1.2.3, repository: https://charts.example}\n", "redis:\n  greeting: hi\n")),
				"apps/web/charts/redis-1.2.3.tgz", tgz(t, sub("redis", "1.2.3", "redis"))),
			want: "ConfigMap/main ConfigMap/redis"},
		{name: "an archive disabled by its condition is not rendered",
			files: withArchive(merge(parent("  - {name: redis, version: 1.2.3, repository: https://charts.example, condition: redis.enabled}\n", "redis:\n  enabled: false\n")),
				"apps/web/charts/redis-1.2.3.tgz", tgz(t, sub("redis", "1.2.3", "redis"))),
			want: "ConfigMap/main"},
		{name: "tags decide as helm does",
			files: withArchive(merge(parent("  - {name: redis, version: 1.2.3, repository: https://charts.example, tags: [cache]}\n", "tags:\n  cache: false\n")),
				"apps/web/charts/redis-1.2.3.tgz", tgz(t, sub("redis", "1.2.3", "redis"))),
			want: "ConfigMap/main"},
		{name: "an alias renders the chart under its name",
			files: withArchive(merge(parent("  - {name: redis, alias: cache, version: 1.2.3, repository: https://charts.example}\n", "cache:\n  greeting: aliased\n")),
				"apps/web/charts/redis-1.2.3.tgz", tgz(t, sub("redis", "1.2.3", "redis"))),
			want: "ConfigMap/main ConfigMap/redis"},
		{name: "a file:// dependency is loaded from the repository",
			files: merge(parent("  - {name: common, version: ^0.1.0, repository: file://../../lib/common}\n", ""), under("lib", sub("common", "0.1.4", "common"))),
			want:  "ConfigMap/common ConfigMap/main"},
		{name: "a file:// dependency whose version does not fit",
			files: merge(parent("  - {name: common, version: ^0.2.0, repository: file://../../lib/common}\n", ""), under("lib", sub("common", "0.1.4", "common"))),
			err:   "can't get a valid version for 1 subchart(s)"},
		{name: "a file:// dependency may not leave the repository",
			files: merge(parent("  - {name: common, version: 0.1.0, repository: file://../../../outside}\n", "")),
			err:   "outside the repository"},
		{name: "an absolute file:// dependency is outside the repository",
			files: merge(parent("  - {name: common, version: 0.1.0, repository: file:///etc}\n", "")),
			err:   "outside the repository"},
		{name: "a file:// dependency whose directory is not in the repository",
			files: merge(parent("  - {name: common, version: 0.1.0, repository: file://../common}\n", "")),
			err:   "directory apps/common (file://../common) not found"},
		{name: "a file:// dependency without Chart.yaml",
			files: merge(parent("  - {name: common, version: 0.1.0, repository: file://../common}\n", ""), map[string]string{"apps/common/values.yaml": ""}),
			err:   "Chart.yaml file is missing"},
		{name: "a file:// dependency without a version constraint fails the build",
			files: merge(parent("  - {name: common, repository: file://../../lib/common}\n", ""), under("lib", sub("common", "0.1.4", "common"))),
			err:   "invalid version/constraint format"},
		{name: "a Chart.lock out of sync with Chart.yaml fails the build",
			files: merge(parent("  - {name: common, version: ^0.1.0, repository: file://../../lib/common}\n", ""), under("lib", sub("common", "0.1.4", "common")),
				map[string]string{"apps/web/Chart.lock": "dependencies:\n- {name: common, repository: file://../../lib/common, version: 0.1.4}\ndigest: sha256:00\n"}),
			err: "out of sync"},
		{name: "a dependency from a chart repository that is not vendored",
			files: merge(parent("  - {name: redis, version: 1.2.3, repository: https://charts.example}\n", "")),
			err:   "not vendored under charts/", errAs: new(*RemoteError)},
		{name: "an OCI dependency that is not vendored",
			files: merge(parent("  - {name: redis, version: 1.2.3, repository: oci://registry.example/charts}\n", "")),
			err:   "oci://registry.example/charts", errAs: new(*RemoteError)},
		{name: "a missing file:// dependency makes the build fetch the others too",
			files: withArchive(merge(parent("  - {name: redis, version: 1.2.3, repository: https://charts.example}\n  - {name: common, version: 0.1.0, repository: file://../../lib/common}\n", ""), under("lib", sub("common", "0.1.0", "common"))),
				"apps/web/charts/redis-1.2.3.tgz", tgz(t, sub("redis", "1.2.3", "redis"))),
			err: "fetches dependency redis", errAs: new(*RemoteError)},
		{name: "a vendored directory in charts/ is rendered",
			files: merge(parent("  - {name: common, version: 0.1.0}\n", ""), under("apps/web/charts", sub("common", "0.1.0", "common"))),
			want:  "ConfigMap/common ConfigMap/main"},
		{name: "a dependency without repository that charts/ lacks",
			files: merge(parent("  - {name: common, version: 0.1.0}\n", "")),
			err:   "has no repository"},
		{name: "a dependency without repository must be a directory of charts/ when the build runs",
			files: withArchive(merge(parent("  - {name: redis, version: 1.2.3}\n  - {name: common, version: 0.1.0, repository: file://../../lib/common}\n", ""), under("lib", sub("common", "0.1.0", "common"))),
				"apps/web/charts/redis-1.2.3.tgz", tgz(t, sub("redis", "1.2.3", "redis"))),
			err: "directory apps/web/charts/redis is not in the repository"},
		{name: "a subchart's own missing dependency is left out, as helm template does",
			files: withArchive(merge(parent("  - {name: redis, version: 1.2.3, repository: https://charts.example}\n", "")),
				"apps/web/charts/redis-1.2.3.tgz", tgz(t, map[string]string{
					"redis/Chart.yaml":        "apiVersion: v2\nname: redis\nversion: 1.2.3\ndependencies:\n  - {name: metrics, version: 1.0.0, repository: https://charts.example}\n",
					"redis/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: redis}\n"})),
			want: "ConfigMap/main ConfigMap/redis"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := Helm(c.files, HelmOptions{ChartDir: "apps/web", ReleaseName: "web"})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				if c.errAs != nil && !errors.As(err, c.errAs) {
					t.Fatalf("err = %T %v, want %T", err, err, c.errAs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := renderedNames(objs); got != c.want {
				t.Errorf("rendered %q, want %q", got, c.want)
			}
		})
	}
}

func TestHelmDependencyValues(t *testing.T) {
	files := map[string][]byte{
		"web/Chart.yaml":  []byte("apiVersion: v2\nname: web\nversion: 1.0.0\ndependencies:\n  - {name: redis, version: 1.x, repository: https://charts.example}\n"),
		"web/values.yaml": []byte("redis:\n  greeting: from-parent\n"),
		"web/charts/redis-1.2.3.tgz": tgz(t, map[string]string{
			"redis/Chart.yaml":        "apiVersion: v2\nname: redis\nversion: 1.2.3\n",
			"redis/values.yaml":       "greeting: default\n",
			"redis/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: redis}\ndata:\n  greeting: {{ .Values.greeting }}\n",
		}),
	}
	objs, err := Helm(files, HelmOptions{ChartDir: "web", Parameters: []Parameter{{Name: "redis.greeting", Value: "from-parameter"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cmData(t, objs)["greeting"]; got != "from-parameter" {
		t.Errorf("greeting = %v: a parameter must reach the archived subchart's values", got)
	}
}

func TestHelmLimitsCountArchives(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	files := map[string][]byte{
		"web/Chart.yaml": []byte("apiVersion: v2\nname: web\nversion: 1.0.0\ndependencies:\n  - {name: redis, version: 1.2.3, repository: https://charts.example}\n"),
		"web/charts/redis-1.2.3.tgz": tgz(t, map[string]string{
			"redis/Chart.yaml":         "apiVersion: v2\nname: redis\nversion: 1.2.3\n",
			"redis/templates/big.yaml": "# " + big + "\n",
		}),
	}
	_, err := Helm(files, HelmOptions{ChartDir: "web", Limits: Limits{MaxTemplateBytes: 32 << 10}})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxTemplateBytes" || !strings.Contains(le.What, "charts/redis/templates/big.yaml") {
		t.Fatalf("err = %v, want MaxTemplateBytes naming the archived template", err)
	}
}

func TestHelmOptionsForTheExactSource(t *testing.T) {
	app := drift.Object{"metadata": map[string]any{"name": "web"}, "spec": map[string]any{
		"project":     "team",
		"destination": map[string]any{"namespace": "prod"},
		"sources": []any{
			map[string]any{"repoURL": "https://git.example/org/repo.git", "path": "./charts/web", "helm": map[string]any{"releaseName": "first"}},
			map[string]any{"repoURL": "https://git.example/org/repo.git", "path": "charts/web/", "targetRevision": "main", "helm": map[string]any{
				"releaseName": "second", "namespace": "other", "valueFiles": []any{"$vals/prod.yaml"}, "ignoreMissingValueFiles": true,
				"kubeVersion": "1.30", "apiVersions": []any{"a/v1"}, "skipCrds": true, "skipSchemaValidation": true, "skipTests": true,
				"fileParameters": []any{map[string]any{"name": "motd", "path": "motd.txt"}}}},
			map[string]any{"repoURL": "https://git.example/org/repo.git", "ref": "vals", "targetRevision": "main"},
			map[string]any{"repoURL": "https://git.example/org/other.git", "ref": "elsewhere"},
		}}}
	srcs := drift.Sources(app)
	o := HelmOptionsFor(app, srcs[1])
	if o.ReleaseName != "second" || o.Namespace != "other" || !o.IgnoreMissingValueFiles || o.KubeVersion != "1.30" ||
		len(o.APIVersions) != 1 || !o.SkipCrds || !o.SkipSchemaValidation || !o.SkipTests || len(o.FileParameters) != 1 {
		t.Errorf("options of the second source = %+v", o)
	}
	if !o.Refs["vals"].Local || o.Refs["elsewhere"].Local {
		t.Errorf("refs = %+v: the same repoURL is local, another is not", o.Refs)
	}
	if o.Env["ARGOCD_APP_SOURCE_TARGET_REVISION"] != "main" || o.Env["ARGOCD_APP_PROJECT_NAME"] != "team" || o.Env["ARGOCD_APP_NAMESPACE"] != "prod" {
		t.Errorf("env = %v", o.Env)
	}
	if first := HelmOptionsFor(app, srcs[0]); first.ReleaseName != "first" || first.Namespace != "prod" {
		t.Errorf("the first source sharing the path must keep its own options, got %+v", first)
	}
}

// FuzzResolveValuePath: whatever an Application writes as a value file, a
// path it resolves to is inside the repository: relative, clean, never
// above the root.
func FuzzResolveValuePath(f *testing.F) {
	for _, s := range [][2]string{{"charts/app", "values.yaml"}, {"charts/app", "../../x.yaml"}, {"charts/app", "../../../x"},
		{"", "/etc/passwd"}, {"a", "$values/../x"}, {"a", "$values/b/../../c"}, {"../a", "b"}, {"a", "https://x/y"},
		{"a", "$ARGOCD_APP_NAME/../../x"}, {"a", "$$values/x"}, {"a", "${values}/x"}, {"a/./b", "./../../.."}} {
		f.Add(s[0], s[1])
	}
	refs := map[string]HelmRef{"values": {Local: true}}
	env := map[string]string{"ARGOCD_APP_NAME": "..", "ARGOCD_APP_SOURCE_PATH": "../.."}
	f.Fuzz(func(t *testing.T, dir, raw string) {
		in, err := resolveValuePath(dir, raw, "value file", refs, env)
		if err != nil || in.url != "" {
			return
		}
		p := in.path
		if p == "" || strings.HasPrefix(p, "/") || p != strings.Trim(p, "/") {
			t.Fatalf("%q from %q resolved to %q: not a repository path", raw, dir, p)
		}
		for _, s := range strings.Split(p, "/") {
			if s == ".." || s == "." || s == "" {
				t.Fatalf("%q from %q resolved to %q: leaves or is not clean", raw, dir, p)
			}
		}
	})
}

// TestDefaultKubeVersionFollowsClientGo: the Kubernetes version a render
// assumes is the one of the client libraries in go.mod, as a helm binary
// built with them reports it.
func TestDefaultKubeVersionFollowsClientGo(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s.io/client-go v0\.(\d+)\.`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/client-go")
	}
	if want := "v1." + string(m[1]) + ".0"; DefaultKubeVersion != want {
		t.Errorf("DefaultKubeVersion = %s, want %s for the k8s.io/client-go of go.mod", DefaultKubeVersion, want)
	}
}

func TestGlobFiles(t *testing.T) {
	files := map[string]string{"a.yaml": "", "a/b.yaml": "", "a/c/d.yaml": "", "b/x.yaml": "", "a/b.json": ""}
	deep := strings.Repeat("d/", 60) + "y.yaml"
	files[deep] = ""
	for _, c := range []struct{ pattern, want string }{
		{"*.yaml", "a.yaml"},
		{"a/*.yaml", "a/b.yaml"},
		{"a/**/*.yaml", "a/b.yaml a/c/d.yaml"},
		{"**/*.yaml", "a/b.yaml a/c/d.yaml a.yaml b/x.yaml " + deep}, // a walk meets a/ before a.yaml
		{"?/x.yaml", "b/x.yaml"},
		{"[ab]/b.*", "a/b.json a/b.yaml"},
		// Many ** against a deep path: no backtracking blow-up.
		{strings.Repeat("**/", 40) + "z.yaml", ""},
	} {
		got, err := globFiles(files, c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s matched %q, want %q", c.pattern, strings.Join(got, " "), c.want)
		}
	}
	if _, err := globFiles(files, "a/[x.yaml"); err == nil {
		t.Error("a malformed pattern must be an error")
	}
}

// TestRenderFilesSendsWhatTheChartReads: a render process gets the chart's
// files and what its options name, not the rest of the repository.
func TestRenderFilesSendsWhatTheChartReads(t *testing.T) {
	files := byteFiles(map[string]string{
		"charts/app/Chart.yaml":  "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - {name: lib, version: 0.1.0, repository: file://../../lib}\n",
		"charts/app/values.yaml": "", "lib/Chart.yaml": "", "lib/templates/x.yaml": "", "envs/prod.yaml": "", "envs/a/1.yaml": "",
		"motd": "", "other/secret.yaml": "", "charts/application.yaml": "",
	})
	opts := HelmOptions{ChartDir: "charts/app", ValueFiles: []string{"$v/envs/prod.yaml", "/envs/*/1.yaml"},
		FileParameters: []FileParameter{{Name: "m", Path: "../../motd"}}, Refs: map[string]HelmRef{"v": {Local: true}}}
	got := sortedKeys(renderFiles(files, opts))
	want := "charts/app/Chart.yaml charts/app/values.yaml envs/a/1.yaml envs/prod.yaml lib/Chart.yaml lib/templates/x.yaml motd"
	if strings.Join(got, " ") != want {
		t.Errorf("sent %v, want %s", got, want)
	}
}

// TestHelmObjectsAsArgoCDReadsThem: a rendered list is its items, a list
// of null items is nothing, and a document without a kind fails the
// render, as Argo CD reads manifests.
func TestHelmObjectsAsArgoCDReadsThem(t *testing.T) {
	chart := func(tpl string) map[string][]byte {
		return byteFiles(map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n", "c/templates/t.yaml": tpl})
	}
	objs, err := Helm(chart("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n---\napiVersion: v1\nkind: ConfigMapList\nitems: null\n"), HelmOptions{ChartDir: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := renderedNames(objs); got != "ConfigMap/a Secret/b" {
		t.Errorf("rendered %q, want the list's items only", got)
	}
	objs, err = Helm(chart("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  f: |\n    line\n"), HelmOptions{ChartDir: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if f := drift.Str(objs[0], "data", "f"); f != "line\n" {
		t.Errorf("a block scalar ending the document is %q, want its line break as helm template prints it", f)
	}
	if _, err := Helm(chart("apiVersion: v1\nmetadata: {name: a}\n"), HelmOptions{ChartDir: "c"}); err == nil || !strings.Contains(err.Error(), "Kind' is missing") {
		t.Errorf("a manifest without kind must fail as in Argo CD, got %v", err)
	}
}

// FuzzLoadChartDependencies: whatever a Chart.yaml lists as dependencies
// (file:// paths, versions, aliases, a Chart.lock), loading the chart as
// helm dependency build leaves it never panics and never takes a chart
// from outside the repository's files.
func FuzzLoadChartDependencies(f *testing.F) {
	f.Add("dependencies:\n  - {name: lib, version: ^0.1.0, repository: file://../lib}\n", "")
	f.Add("dependencies:\n  - {name: lib, version: 0.1.0, repository: file://../../../../etc}\n", "")
	f.Add("dependencies:\n  - {name: lib, repository: file:///lib}\n", "")
	f.Add("dependencies:\n  - {name: redis, version: 1.x, repository: https://charts.example}\n", "")
	f.Add("dependencies:\n  - {name: lib, version: ^0.1.0, repository: file://../lib, alias: x, condition: x.on}\n", "dependencies:\n- {name: lib, repository: file://../lib, version: 0.1.0}\ndigest: sha256:00\n")
	f.Add("dependencies: [null, {name: ''}]\n", "dependencies: null\n")
	f.Fuzz(func(t *testing.T, deps, lock string) {
		files := map[string][]byte{
			"app/Chart.yaml":        []byte("apiVersion: v2\nname: app\nversion: 1.0.0\n" + deps),
			"lib/Chart.yaml":        []byte("apiVersion: v2\nname: lib\nversion: 0.1.0\n"),
			"lib/templates/cm.yaml": []byte("kind: ConfigMap\n"),
		}
		if lock != "" {
			files["app/Chart.lock"] = []byte(lock)
		}
		c, err := loadChart(files, "app")
		if err != nil {
			return
		}
		for _, d := range c.Dependencies() {
			if d.Name() != "lib" && d.Name() != "app" {
				t.Fatalf("loaded dependency %q, which is no chart of the repository", d.Name())
			}
		}
	})
}
