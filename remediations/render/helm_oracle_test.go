package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"

	"github.com/driftfix/driftfix/bot/drift"
)

// helmTemplateArgs are the arguments Argo CD's repo-server gives `helm
// template` for opts (util/helm's template command, in its order), with
// value files and file parameters as the absolute paths it resolves them
// to under root.
func helmTemplateArgs(t *testing.T, root string, files map[string][]byte, opts HelmOptions) []string {
	t.Helper()
	args := []string{"template", ".", "--name-template", opts.ReleaseName}
	if opts.Namespace != "" {
		args = append(args, "--namespace", opts.Namespace)
	}
	if opts.KubeVersion != "" {
		kv, err := capabilities(opts)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, "--kube-version", strings.TrimPrefix(kv.KubeVersion.Version, "v"))
	}
	set, setString := map[string]string{}, map[string]string{}
	for _, p := range opts.Parameters {
		if p.ForceString {
			setString[p.Name] = p.Value
		} else {
			set[p.Name] = p.Value
		}
	}
	for _, k := range sortedKeys(set) {
		args = append(args, "--set", k+"="+cleanSetValue(set[k]))
	}
	for _, k := range sortedKeys(setString) {
		args = append(args, "--set-string", k+"="+cleanSetValue(setString[k]))
	}
	fps, err := resolveFileParameters(files, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range sortedKeys(fps) {
		args = append(args, "--set-file", k+"="+cleanSetValue(filepath.Join(root, fps[k])))
	}
	vfs, err := resolveValueFiles(files, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, vf := range vfs {
		args = append(args, "--values", filepath.Join(root, vf))
	}
	extra := []byte(opts.Values)
	if opts.ValuesObject != nil {
		b, err := yaml.Marshal(opts.ValuesObject)
		if err != nil {
			t.Fatal(err)
		}
		extra = b
	}
	if len(extra) > 0 {
		p := filepath.Join(t.TempDir(), "extra-values")
		if err := os.WriteFile(p, extra, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--values", p)
	}
	for _, v := range opts.APIVersions {
		args = append(args, "--api-versions", v)
	}
	if !opts.SkipCrds {
		args = append(args, "--include-crds")
	}
	if opts.SkipSchemaValidation {
		args = append(args, "--skip-schema-validation")
	}
	if opts.SkipTests {
		args = append(args, "--skip-tests")
	}
	return args
}

// TestHelmAgainstHelmTemplate renders charts both ways, with Helm and with
// the helm binary DRIFTFIX_HELM names (Argo CD 3.6 runs helm 4.2), given
// the arguments Argo CD gives it (and `helm dependency build` where it
// reports a missing dependency, as Argo CD does), and compares the objects.
func TestHelmAgainstHelmTemplate(t *testing.T) {
	bin := os.Getenv("DRIFTFIX_HELM")
	if bin == "" {
		t.Skip("DRIFTFIX_HELM names no helm binary to compare with")
	}
	var cases []helmOracleCase
	for _, group := range [][]helmOracleCase{helmOptionCases(), helmDependencyCases(t), helmTemplateCases()} {
		cases = append(cases, group...)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := byteFiles(c.files)
			for k, v := range c.bin {
				files[k] = v
			}
			opts := c.opts
			opts.ChartDir, opts.ReleaseName = "charts/app", "rel"
			if opts.KubeVersion == "" {
				opts.KubeVersion = DefaultKubeVersion // the binary's own default differs by build
			}
			ours, oursErr := Helm(files, opts)
			if oursErr != nil && !c.fails {
				t.Fatal(oursErr)
			}
			root := t.TempDir()
			for name, data := range files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			home := t.TempDir()
			run := func(args ...string) (string, error) {
				cmd := exec.Command(bin, args...)
				cmd.Dir = filepath.Join(root, "charts/app")
				cmd.Env = []string{"HOME=" + home, "HELM_CACHE_HOME=" + home + "/c", "HELM_CONFIG_HOME=" + home + "/f", "HELM_DATA_HOME=" + home + "/d", "KUBECONFIG=" + home + "/none"}
				var out, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &stderr
				if err := cmd.Run(); err != nil {
					return "", errors.New(err.Error() + ": " + stderr.String())
				}
				return out.String(), nil
			}
			args := helmTemplateArgs(t, root, files, opts)
			out, err := run(args...)
			if err != nil && strings.Contains(err.Error(), "found in Chart.yaml, but missing in charts/ directory") {
				if _, err = run("dependency", "build"); err == nil {
					out, err = run(args...)
				}
			}
			if c.fails {
				if err == nil || oursErr == nil {
					t.Fatalf("want both to fail: ours %v, helm's %v", oursErr, err)
				}
				t.Logf("ours: %v\nhelm: %v", oursErr, err)
				return
			}
			if err != nil {
				t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
			}
			theirs := decodeAll(t, out)
			if a, b := canonical(t, ours), canonical(t, theirs); a != b {
				t.Errorf("objects differ from helm template's\nours:\n%s\nhelm:\n%s", a, b)
			}
		})
	}
}

// helmOracleCase is one chart of TestHelmAgainstHelmTemplate: its files as
// text and as bytes, the Application's Helm options, and whether both
// refuse it.
type helmOracleCase struct {
	name  string
	files map[string]string
	bin   map[string][]byte
	opts  HelmOptions
	fails bool // both refuse it
}

// helmOptionCases vary the Application's options: values, value files,
// parameters, capabilities, skips and the values schema.
func helmOptionCases() []helmOracleCase {
	return []helmOracleCase{
		{name: "values and value files and parameters and set-file and commas and lists",
			files: cmChart("charts/app", map[string]string{"charts/app/v1.yaml": "a: one\nc: {x: 1, y: [1, 2]}\n", "envs/v2.yaml": "c: {x: 1000000}\n", "charts/app/motd": "hi, there"}),
			opts: HelmOptions{ValueFiles: []string{"v1.yaml", "/envs/v2.yaml"}, Values: "b: from-values\n",
				Parameters:     []Parameter{{Name: "a", Value: "x,y"}, {Name: "c.z", Value: "{p,q}"}, {Name: "b", Value: "007", ForceString: true}},
				FileParameters: []FileParameter{{Name: "c.motd", Path: "motd"}}}},
		{name: "valuesObject with numbers",
			files: cmChart("charts/app", nil),
			opts:  HelmOptions{ValuesObject: map[string]any{"a": int64(1000000), "b": 1.5, "c": map[string]any{"n": nil, "t": true}}}},
		{name: "globs and a $ref and a namespace",
			files: cmChart("charts/app", map[string]string{"charts/app/env/1.yaml": "a: one\nb: one\n", "charts/app/env/2.yaml": "a: two\n", "vals/prod.yaml": "b: ref\n"}),
			opts:  HelmOptions{ValueFiles: []string{"env/2.yaml", "env/*.yaml", "$v/vals/prod.yaml"}, Refs: map[string]HelmRef{"v": {Local: true}}, Namespace: "shop"}},
		{name: "capabilities, crds, hooks, tests, notes and .helmignore",
			files: map[string]string{
				"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
				"charts/app/templates/gated.yaml": "{{- if semverCompare \">=1.30-0\" .Capabilities.KubeVersion.Version }}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\ndata: {v: {{ .Capabilities.KubeVersion.Version | quote }}}\n{{- end }}\n" +
					"{{- if .Capabilities.APIVersions.Has \"x.example.com/v1\" }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\n{{- end }}\n",
				"charts/app/templates/test.yaml":     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations: {helm.sh/hook: test}\nspec: {containers: [{name: t, image: x}]}\n",
				"charts/app/templates/hook.yaml":     "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations: {helm.sh/hook: pre-install}\n",
				"charts/app/templates/NOTES.txt":     "notes",
				"charts/app/crds/c.yaml":             "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: cs.example.com}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ds.example.com}\n",
				"charts/app/.helmignore":             "templates/skip-*\n",
				"charts/app/templates/skip-me.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped}\n",
				"charts/app/templates/.hidden.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n",
				"charts/app/templates/empty.yaml":    "{{- /* nothing */ -}}\n",
				"charts/app/templates/_partial.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: partial}\n",
				"charts/app/templates/multidoc.yaml": "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: m1}\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: m2}\n",
				"charts/app/templates/sub/deep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\n",
				"charts/app/templates/notyaml.txt":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: txt}\n",
			},
			opts: HelmOptions{KubeVersion: "v1.31.2-eks-1", APIVersions: []string{"x.example.com/v1"}}},
		{name: "skipCrds and skipTests",
			files: map[string]string{
				"charts/app/Chart.yaml":          "apiVersion: v2\nname: app\nversion: 0.1.0\n",
				"charts/app/templates/test.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations: {helm.sh/hook: \"test-success, test\"}\n",
				"charts/app/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
				"charts/app/crds/c.yaml":         "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: cs.example.com}\n",
			},
			opts: HelmOptions{SkipCrds: true, SkipTests: true}},
		{name: "null removes a chart default and indexes in parameters",
			files: cmChart("charts/app", map[string]string{"charts/app/values.yaml": "a: chart\nb: chart\nc: {list: [x, y], keep: 1, drop: 2}\n", "charts/app/v.yaml": "b: null\nc: {drop: null}\n"}),
			opts:  HelmOptions{ValueFiles: []string{"v.yaml"}, Parameters: []Parameter{{Name: "c.list[1]", Value: "z"}, {Name: "a", Value: "first"}, {Name: "a", Value: "last"}}}},
		{name: "a values.schema.json the values break", fails: true,
			files: cmChart("charts/app", map[string]string{"charts/app/values.schema.json": `{"type": "object", "properties": {"a": {"type": "integer"}}}`})},
		{name: "a values.schema.json skipped",
			files: cmChart("charts/app", map[string]string{"charts/app/values.schema.json": `{"type": "object", "properties": {"a": {"type": "integer"}}}`}),
			opts:  HelmOptions{SkipSchemaValidation: true}},
	}
}

// helmDependencyCases are charts with dependencies: vendored archives,
// file:// dependencies built as Argo CD runs helm dependency build, locks.
func helmDependencyCases(t *testing.T) []helmOracleCase {
	deps := func(d string) string {
		return "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n" + d
	}
	sub := tgz(t, map[string]string{
		"redis/Chart.yaml":        "apiVersion: v2\nname: redis\nversion: 1.2.3\n",
		"redis/values.yaml":       "greeting: default\nport: 6379\n",
		"redis/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Chart.Name }}-{{ .Release.Name }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  port: {{ .Values.port | quote }}\n  global: {{ .Values.global.env | default \"none\" | quote }}\n",
	})
	return []helmOracleCase{
		{name: "a vendored archive with an alias, a condition, globals and import-values",
			files: map[string]string{
				"charts/app/Chart.yaml":  deps("  - {name: redis, version: 1.x, repository: https://charts.example, alias: cache}\n  - {name: redis, version: 1.2.3, repository: https://charts.example, condition: second.enabled}\n"),
				"charts/app/values.yaml": "global: {env: prod}\ncache: {greeting: aliased}\nsecond: {enabled: false}\n",
			},
			bin: map[string][]byte{"charts/app/charts/redis-1.2.3.tgz": sub}},
		{name: "a file:// dependency, built as Argo CD runs helm dependency build",
			files: map[string]string{
				"charts/app/Chart.yaml":        deps("  - {name: lib, version: ^0.1.0, repository: file://../../lib}\n"),
				"charts/app/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: main}\ndata: {v: {{ .Values.lib.v | quote }}}\n",
				"charts/app/values.yaml":       "lib: {v: parent}\n",
				"lib/Chart.yaml":               "apiVersion: v2\nname: lib\nversion: 0.1.2\n",
				"lib/values.yaml":              "v: child\n",
				"lib/templates/cm.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lib}\ndata: {v: {{ .Values.v | quote }}}\n",
				"lib/.helmignore":              "templates/ignored.yaml\n",
				"lib/templates/ignored.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored}\n",
			}},
		{name: "a subchart's own missing dependency and a library subchart",
			files: map[string]string{
				"charts/app/Chart.yaml":                      deps("  - {name: redis, version: 1.2.3, repository: https://charts.example}\n  - {name: common, version: 0.1.0}\n"),
				"charts/app/templates/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ include \"common.name\" . }}}\n",
				"charts/app/charts/common/Chart.yaml":        "apiVersion: v2\nname: common\nversion: 0.1.0\ntype: library\n",
				"charts/app/charts/common/templates/_n.tpl":  "{{- define \"common.name\" -}}lib-{{ .Release.Name }}{{- end -}}\n",
				"charts/app/charts/common/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: library-renders-nothing}\n",
			},
			bin: map[string][]byte{"charts/app/charts/redis-1.2.3.tgz": tgz(t, map[string]string{
				"redis/Chart.yaml":        "apiVersion: v2\nname: redis\nversion: 1.2.3\ndependencies:\n  - {name: metrics, version: 1.0.0, repository: https://charts.example}\n",
				"redis/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: redis}\n"})}},
		{name: "a build replaces a stale archive of a file:// dependency and keeps a directory without repository",
			files: withSub(map[string]string{
				"charts/app/Chart.yaml":   deps("  - {name: lib, version: '>=0.1.0', repository: file://../../lib}\n  - {name: redis, version: 1.2.3}\n  - {name: extra, version: 1.0.0, repository: file://../../extra}\n"),
				"lib/Chart.yaml":          "apiVersion: v2\nname: lib\nversion: 0.2.0\n",
				"lib/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lib-new}\n",
				"extra/Chart.yaml":        "apiVersion: v2\nname: extra\nversion: 1.0.0\n",
				"extra/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
			}, "charts/app/charts/redis"),
			bin: map[string][]byte{
				"charts/app/charts/lib-0.1.0.tgz": tgz(t, map[string]string{"lib/Chart.yaml": "apiVersion: v2\nname: lib\nversion: 0.1.0\n",
					"lib/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lib-stale}\n"}),
			}},
		{name: "with a Chart.lock, file:// dependencies at their locked version and a directory without repository",
			files: withSub(map[string]string{
				"charts/app/Chart.yaml": deps(lockedDeps),
				"charts/app/Chart.lock": chartLock(t, lockedDeps, "- {name: lib, repository: file://../../lib, version: 0.1.2}\n- {name: redis, repository: '', version: 1.2.3}\n"),
				"lib/Chart.yaml":        "apiVersion: v2\nname: lib\nversion: 0.1.2\n",
				"lib/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lib}\n",
			}, "charts/app/charts/redis")},
		{name: "a Chart.lock out of sync", fails: true,
			files: map[string]string{
				"charts/app/Chart.yaml": deps("  - {name: lib, version: ^0.1.0, repository: file://../../lib}\n"),
				"charts/app/Chart.lock": chartLock(t, "  - {name: lib, version: ^0.1.1, repository: file://../../lib}\n", "- {name: lib, repository: file://../../lib, version: 0.1.2}\n"),
				"lib/Chart.yaml":        "apiVersion: v2\nname: lib\nversion: 0.1.2\n",
			}},
		{name: "a locked version the directory does not have", fails: true,
			files: map[string]string{
				"charts/app/Chart.yaml": deps("  - {name: lib, version: ^0.1.0, repository: file://../../lib}\n"),
				"charts/app/Chart.lock": chartLock(t, "  - {name: lib, version: ^0.1.0, repository: file://../../lib}\n", "- {name: lib, repository: file://../../lib, version: 0.1.1}\n"),
				"lib/Chart.yaml":        "apiVersion: v2\nname: lib\nversion: 0.1.2\n",
			}},
		{name: "a file:// dependency without a version", fails: true,
			files: map[string]string{
				"charts/app/Chart.yaml": deps("  - {name: lib, repository: file://../../lib}\n"),
				"lib/Chart.yaml":        "apiVersion: v2\nname: lib\nversion: 0.1.2\n",
			}},
		{name: "a dependency without repository as an archive when the build runs", fails: true,
			files: map[string]string{
				"charts/app/Chart.yaml": deps("  - {name: lib, version: ^0.1.0, repository: file://../../lib}\n  - {name: redis, version: 1.2.3}\n"),
				"lib/Chart.yaml":        "apiVersion: v2\nname: lib\nversion: 0.1.2\n",
			},
			bin: map[string][]byte{"charts/app/charts/redis-1.2.3.tgz": sub}},
	}
}

// helmTemplateCases are templates using the functions and built-in objects
// charts use, and block scalars ending documents.
func helmTemplateCases() []helmOracleCase {
	return []helmOracleCase{
		{name: "template functions and built-in objects charts use",
			files: cmChart("charts/app", map[string]string{
				"charts/app/values.yaml":            "a: chart\nb: chart\nres: {limits: {cpu: 1, memory: 1Gi}, list: [1, two, {x: y}]}\nbig: 1000000\nf: 1.50\nt: '{{ .Release.Name }}-tpl'\n",
				"charts/app/files/conf.ini":         "[main]\nkey = value\n",
				"charts/app/files/other.ini":        "x\n",
				"charts/app/templates/_helpers.tpl": "{{- define \"app.labels\" -}}\napp: {{ .Chart.Name }}\nversion: {{ .Chart.Version | quote }}\n{{- end -}}\n",
				"charts/app/templates/funcs.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: funcs
  labels:
    {{- include "app.labels" . | nindent 4 }}
data:
  yaml: |
    {{- toYaml .Values.res | nindent 4 }}
  json: {{ toJson .Values.res | quote }}
  big: {{ .Values.big | quote }}
  f: {{ .Values.f | quote }}
  tpl: {{ tpl .Values.t . | quote }}
  file: {{ .Files.Get "files/conf.ini" | quote }}
  globs: {{ range $p, $_ := .Files.Glob "files/*.ini" }}{{ $p }} {{ end }}
  b64: {{ "hello" | b64enc }}
  lookup: {{ lookup "v1" "Secret" "ns" "x" | toJson | quote }}
  template: {{ .Template.Name | quote }}
  root: {{ .Chart.IsRoot | quote }}
  ternary: {{ ternary "yes" "no" (eq .Values.a "chart") }}
  dict: {{ dict "k" "v" "n" 1 | toJson | quote }}
  semver: {{ semverCompare "^1.2" "1.2.3" | quote }}
  kube: {{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }}
  hasApps: {{ .Capabilities.APIVersions.Has "apps/v1/Deployment" | quote }}
  revision: {{ .Release.Revision | quote }}
  install: {{ .Release.IsInstall | quote }}
  service: {{ .Release.Service | quote }}
`})},
		{name: "block scalars ending documents",
			files: map[string]string{
				"charts/app/Chart.yaml":       "apiVersion: v2\nname: app\nversion: 0.1.0\n",
				"charts/app/templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  clip: |\n    x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  keep: |+\n    y\n\n",
				"charts/app/crds/c.yaml":      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: cs.example.com\n  annotations:\n    note: |\n      z",
			}},
	}
}

func decodeAll(t *testing.T, s string) []drift.Object {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(s))
	var out []drift.Object
	for {
		var o map[string]any
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("parse helm's output: %v\n%s", err, s)
		}
		if o != nil {
			out = append(out, drift.NormalizeNumbers(o).(map[string]any))
		}
	}
}

// canonical writes objects sorted, as one YAML text to compare.
func canonical(t *testing.T, objs []drift.Object) string {
	t.Helper()
	var docs []string
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	sort.Strings(docs)
	return strings.Join(docs, "---\n")
}

const lockedDeps = "  - {name: lib, version: ^0.1.0, repository: file://../../lib}\n  - {name: redis, version: 1.2.3}\n"

// chartLock is a Chart.lock of the dependencies lock (YAML list items) for
// Chart.yaml's deps, with the digest helm writes (the binary checks it).
func chartLock(t *testing.T, deps, lock string) string {
	t.Helper()
	var req, locked []*chart.Dependency
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(deps, "\n  - ", "\n- ")[2:]), &req); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(lock), &locked); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal([2][]*chart.Dependency{req, locked})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return "dependencies:\n" + lock + "digest: sha256:" + hex.EncodeToString(sum[:]) + "\ngenerated: \"2026-01-01T00:00:00Z\"\n"
}

// withSub adds a minimal chart directory named like its last element.
func withSub(files map[string]string, dir string) map[string]string {
	name := filepath.Base(dir)
	files[dir+"/Chart.yaml"] = "apiVersion: v2\nname: " + name + "\nversion: 1.2.3\n"
	files[dir+"/templates/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "-dir}\n"
	return files
}
