package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKustomizePreflightReadsAsKustomizeDoes covers the ways a kustomization
// could name a URL that a hand-written reading of it missed: keys kustomize
// matches without regard to case, a key given twice (kustomize keeps the last),
// generator, transformer and validator configs (in files and inline), files
// named like the URL, and the openapi and crds fields. Each build must fail
// naming the file and the URL, and a server on 127.0.0.1 must see nothing.
func TestKustomizePreflightReadsAsKustomizeDoes(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n"
	cases := []struct {
		name  string
		files func(url string) map[string]string
		file  string // the file the error must name
		ref   string // the URL the error must name, after the server's URL
	}{
		{name: "resources key given twice", file: "app/kustomization.yaml", ref: "/cm.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\nresources:\n- " + url + "/cm.yaml\n", "app/cm.yaml": cm}
		}},
		{name: "Resources key capitalised", file: "app/kustomization.yaml", ref: "/cm.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "Resources:\n- " + url + "/cm.yaml\n"}
		}},
		{name: "RESOURCES key in capitals", file: "app/kustomization.yaml", ref: "/cm.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "RESOURCES:\n- " + url + "/cm.yaml\n"}
		}},
		{name: "a file named like the URL", file: "app/kustomization.yaml", ref: "/cm.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "resources:\n- " + url + "/cm.yaml\n",
				"app/" + strings.Replace(url, "://", ":/", 1) + "/cm.yaml": cm}
		}},
		{name: "generator config file", file: "app/gen.yaml", ref: "/data", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "generators:\n- gen.yaml\n",
				"app/gen.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\nfiles:\n- key=" + url + "/data\n"}
		}},
		{name: "generator config by absolute path", file: "app/gen.yaml", ref: "/data", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "generators:\n- /app/gen.yaml\n",
				"app/gen.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\nenvs:\n- " + url + "/data\n"}
		}},
		{name: "transformer config file", file: "app/t.yaml", ref: "/patch.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- t.yaml\n", "app/cm.yaml": cm,
				"app/t.yaml": "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\nPath: " + url + "/patch.yaml\n"}
		}},
		{name: "transformer configs from a directory", file: "app/tdir/t.yaml", ref: "/r.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- tdir\n", "app/cm.yaml": cm,
				"app/tdir/kustomization.yaml": "resources:\n- t.yaml\n",
				"app/tdir/t.yaml":             "apiVersion: builtin\nkind: ReplacementTransformer\nmetadata:\n  name: r\nreplacements:\n- path: " + url + "/r.yaml\n"}
		}},
		{name: "validator config file", file: "app/v.yaml", ref: "/patch.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\nvalidators:\n- v.yaml\n", "app/cm.yaml": cm,
				"app/v.yaml": "apiVersion: builtin\nkind: PatchJson6902Transformer\nmetadata:\n  name: p\ntarget:\n  kind: ConfigMap\n  name: local\npath: " + url + "/patch.yaml\n"}
		}},
		{name: "inline generator", file: "app/kustomization.yaml", ref: "/data", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "generators:\n- |\n  apiVersion: builtin\n  kind: SecretGenerator\n  metadata:\n    name: x\n  files:\n  - " + url + "/data\n"}
		}},
		{name: "inline transformer", file: "app/kustomization.yaml", ref: "/patch.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- |\n  apiVersion: builtin\n  kind: PatchStrategicMergeTransformer\n  metadata:\n    name: p\n  paths:\n  - " + url + "/patch.yaml\n", "app/cm.yaml": cm}
		}},
		{name: "chart repository in a generator config", file: "app/helm.yaml", ref: "/charts", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "generators:\n- helm.yaml\n",
				"app/helm.yaml": "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: h\nname: x\nversion: 1.0.0\nrepo: " + url + "/charts\n"}
		}},
		{name: "helmCharts key in capitals", file: "app/kustomization.yaml", ref: "/charts", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "HELMCHARTS:\n- name: x\n  repo: " + url + "/charts\n"}
		}},
		{name: "helmCharts values file", file: "app/kustomization.yaml", ref: "/values.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "helmCharts:\n- name: x\n  valuesFile: " + url + "/values.yaml\n"}
		}},
		{name: "openAPI path", file: "app/kustomization.yaml", ref: "/openapi.json", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\nopenAPI:\n  path: " + url + "/openapi.json\n", "app/cm.yaml": cm}
		}},
		{name: "CRDs key", file: "app/kustomization.yaml", ref: "/crd.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\nCRDs:\n- " + url + "/crd.yaml\n", "app/cm.yaml": cm}
		}},
		{name: "a duplicate key elsewhere hides crds", file: "app/kustomization.yaml", ref: "/crd.yaml", files: func(url string) map[string]string {
			return map[string]string{"app/kustomization.yaml": "namePrefix: a-\nnamePrefix: b-\nresources:\n- cm.yaml\ncrds:\n- " + url + "/crd.yaml\n", "app/cm.yaml": cm}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, hits := listener(t)
			files := map[string][]byte{}
			for k, v := range c.files(url) {
				files[k] = []byte(v)
			}
			_, err := Kustomize(files, "app")
			var re *RemoteError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a RemoteError", err)
			}
			if re.File != c.file || re.URL != url+c.ref || !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), url+c.ref) {
				t.Errorf("err = %v, want it to name %s and %s", err, c.file, url+c.ref)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the build sent %d requests to %s", n, url)
			}
		})
	}
}

// TestHelmSchemaRefsStayInTheChart: a values.schema.json may only refer
// within itself. Helm's validator would fetch an http $ref (or $schema) and
// read a file:// one, or a relative one resolved against file:///, from the
// bot's disk, and the file's content would come back in the validation error.
func TestHelmSchemaRefsStayInTheChart(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(secret, []byte(`{"const": "s3cr3t-on-the-bots-disk"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
	cases := []struct {
		name   string
		schema func(url string) string
		file   string // the schema the error must name
		ref    func(url string) string
	}{
		{name: "http $ref", file: "c/values.schema.json",
			schema: func(url string) string { return `{"properties": {"a": {"$ref": "` + url + `/s.json"}}}` },
			ref:    func(url string) string { return url + "/s.json" }},
		{name: "file $ref", file: "c/values.schema.json",
			schema: func(string) string { return `{"$ref": "file://` + secret + `"}` },
			ref:    func(string) string { return "file://" + secret }},
		{name: "relative $ref resolved against file:///", file: "c/values.schema.json",
			schema: func(string) string { return `{"allOf": [{"$ref": "` + strings.TrimPrefix(secret, "/") + `"}]}` },
			ref:    func(string) string { return strings.TrimPrefix(secret, "/") }},
		{name: "http $schema", file: "c/values.schema.json",
			schema: func(url string) string { return `{"$schema": "` + url + `/meta.json", "type": "object"}` },
			ref:    func(url string) string { return url + "/meta.json" }},
		{name: "$ref in a subchart's schema", file: "c/charts/sub/values.schema.json",
			schema: func(url string) string { return `{"$ref": "` + url + `/sub.json"}` },
			ref:    func(url string) string { return url + "/sub.json" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, hits := listener(t)
			files := chartFiles(map[string]string{"templates/cm.yaml": cm, "values.yaml": "a: 1\nsub:\n  b: 1\n",
				"charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n"})
			files[c.file] = []byte(c.schema(url))
			_, err := Helm(files, HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n"})
			var re *RemoteError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a RemoteError", err)
			}
			if re.File != c.file || re.URL != c.ref(url) || !strings.Contains(err.Error(), c.file) {
				t.Errorf("err = %v, want it to name %s and %s", err, c.file, c.ref(url))
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("err = %v: a file outside the chart was read", err)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the render sent %d requests to %s", n, url)
			}
		})
	}
	// A schema that refers only within itself still validates.
	files := chartFiles(map[string]string{"templates/cm.yaml": cm, "values.yaml": "a: 1\n",
		"values.schema.json": `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"n": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}`})
	if _, err := Helm(files, HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n"}); err == nil || !strings.Contains(err.Error(), "string") {
		t.Errorf("a value against a local $ref: err = %v, want the schema's type error", err)
	}
}

// TestKustomizePreflightAdmitsLocalConfigs: the same fields with local files
// still build.
func TestKustomizePreflightAdmitsLocalConfigs(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n"
	cases := []struct {
		name  string
		files map[string]string
		want  int
	}{
		{name: "capitalised keys", want: 1, files: map[string]string{"app/kustomization.yaml": "Resources:\n- cm.yaml\nNamePrefix: p-\n", "app/cm.yaml": cm}},
		{name: "generator config file", want: 1, files: map[string]string{"app/kustomization.yaml": "generators:\n- gen.yaml\n",
			"app/gen.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\nfiles:\n- key=data.txt\nliterals:\n- docs=https://example.com/docs\n", "app/data.txt": "v\n"}},
		{name: "inline transformer", want: 1, files: map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- |\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata:\n    name: p\n  path: patch.yaml\n",
			"app/cm.yaml": cm, "app/patch.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\ndata:\n  url: https://example.com\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range c.files {
				files[k] = []byte(v)
			}
			objs, err := Kustomize(files, "app")
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != c.want {
				t.Errorf("built %d objects, want %d", len(objs), c.want)
			}
		})
	}
}
