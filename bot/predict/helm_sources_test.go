package predict

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
)

// chartArchive packs files (names under the chart's directory, as helm
// package writes them) as a chart archive, as a repository vendors it
// under charts/.
func chartArchive(t *testing.T, files map[string]string) string {
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
	return buf.String()
}

const multiSourceApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: db, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: data}
  sources:
  - repoURL: https://git.example.com/infra.git
    path: charts/db
    targetRevision: main
    helm:
      valueFiles: [$values/envs/prod/values.yaml]
  - repoURL: git@git.example.com:infra
    targetRevision: main
    ref: values
`

// cacheChart is a chart of one Deployment whose replicas its values set.
func cacheChart(dir, version string) map[string]string {
	return map[string]string{
		dir + "/Chart.yaml":  "apiVersion: v2\nname: cache\nversion: " + version + "\n",
		dir + "/values.yaml": "replicas: 2\n",
		dir + "/templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: cache}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers: [{name: cache, image: "redis:7"}]
`,
	}
}

const cacheHPA = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: cache}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: cache}\n  minReplicas: 2\n  maxReplicas: 4\n"

func withFiles(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func dbAppWith(helm string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: db, namespace: argocd}\nspec:\n  project: default\n" +
		"  destination: {server: https://kubernetes.default.svc, namespace: data}\n" +
		"  source:\n    repoURL: https://git.example.com/infra.git\n    path: charts/db\n    targetRevision: main\n" + helm
}

// TestPredictHelmSourcesAsArgoCD predicts applications whose charts only
// render as Argo CD renders them: a $ref values file of the same repository,
// vendored and file:// dependencies, ignoreMissingValueFiles, and templates
// the Application's kubeVersion and apiVersions gate.
func TestPredictHelmSourcesAsArgoCD(t *testing.T) {
	db := map[string]string{
		"charts/db/Chart.yaml":             "apiVersion: v2\nname: db\nversion: 0.1.0\n",
		"charts/db/values.yaml":            "replicas: 1\n",
		"charts/db/templates/sts.yaml":     strings.ReplaceAll(dbStatefulSet, "app.kubernetes.io/instance", "team"),
		"charts/db/templates/hpa.yaml":     "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: {{ .Release.Name }}}\n  minReplicas: 2\n  maxReplicas: 4\n",
		"envs/prod/values.yaml":            "# production\nreplicas: 3\n",
		"charts/db/templates/_helpers.tpl": "{{/* none */}}\n",
	}
	gatedHPA := func(cond string) string {
		return "{{- if " + cond + " }}\n" + cacheHPA + "{{- end }}\n"
	}
	withDeps := func(deps string, extra ...map[string]string) map[string]string {
		return withFiles(append([]map[string]string{{
			"apps/db.yaml":                 dbAppWith(""),
			"charts/db/Chart.yaml":         "apiVersion: v2\nname: db\nversion: 0.1.0\ndependencies:\n" + deps,
			"charts/db/templates/hpa.yaml": cacheHPA,
		}}, extra...)...)
	}
	type want struct {
		resource, path string
		file           string
		line           int
	}
	cases := []struct {
		name  string
		files map[string]string
		want  []want
	}{
		{name: "a multi-source application's $ref values file of the same repository",
			files: withFiles(db, map[string]string{"apps/db.yaml": multiSourceApp}),
			want:  []want{{"StatefulSet data/db", "/spec/replicas", "envs/prod/values.yaml", 2}}},
		{name: "a dependency vendored as charts/*.tgz",
			files: withDeps("  - {name: cache, version: 1.0.0, repository: https://charts.example.com}\n",
				map[string]string{"charts/db/charts/cache-1.0.0.tgz": chartArchive(t, cacheChart("cache", "1.0.0"))}),
			want: []want{{"Deployment data/cache", "/spec/replicas", "", 0}}},
		{name: "a file:// dependency in the repository",
			files: withDeps("  - {name: cache, version: ~1.0.0, repository: file://../../lib/cache}\n", cacheChart("lib/cache", "1.0.3")),
			want:  []want{{"Deployment data/cache", "/spec/replicas", "", 0}}},
		{name: "a file:// dependency disabled by its condition",
			files: withDeps("  - {name: cache, version: ~1.0.0, repository: file://../../lib/cache, condition: cache.enabled}\n", cacheChart("lib/cache", "1.0.3"),
				map[string]string{"charts/db/values.yaml": "cache:\n  enabled: false\n"})},
		{name: "ignoreMissingValueFiles",
			files: withFiles(db, map[string]string{"apps/db.yaml": dbAppWith("    helm:\n      valueFiles: [values-missing.yaml, /envs/prod/values.yaml]\n      ignoreMissingValueFiles: true\n")}),
			want:  []want{{"StatefulSet data/db", "/spec/replicas", "envs/prod/values.yaml", 2}}},
		{name: "apiVersions gate a template",
			files: withFiles(cacheChart("charts/db", "0.1.0"), map[string]string{
				"apps/db.yaml":                 dbAppWith("    helm:\n      apiVersions: [autoscaling.example.com/v1]\n"),
				"charts/db/templates/hpa.yaml": gatedHPA(`.Capabilities.APIVersions.Has "autoscaling.example.com/v1"`)}),
			want: []want{{"Deployment data/cache", "/spec/replicas", "charts/db/values.yaml", 1}}},
		{name: "without the apiVersion, the template renders nothing",
			files: withFiles(cacheChart("charts/db", "0.1.0"), map[string]string{
				"apps/db.yaml":                 dbAppWith(""),
				"charts/db/templates/hpa.yaml": gatedHPA(`.Capabilities.APIVersions.Has "autoscaling.example.com/v1"`)})},
		{name: "kubeVersion gates a template",
			files: withFiles(cacheChart("charts/db", "0.1.0"), map[string]string{
				"apps/db.yaml":                 dbAppWith("    helm:\n      kubeVersion: 1.31.0\n"),
				"charts/db/templates/hpa.yaml": gatedHPA(`semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version`)}),
			want: []want{{"Deployment data/cache", "/spec/replicas", "charts/db/values.yaml", 1}}},
		{name: "an older kubeVersion renders without it",
			files: withFiles(cacheChart("charts/db", "0.1.0"), map[string]string{
				"apps/db.yaml":                 dbAppWith("    helm:\n      kubeVersion: v1.29.4-gke.100\n"),
				"charts/db/templates/hpa.yaml": gatedHPA(`semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version`)})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head := Revision{Name: "head", Files: c.files}
			res, err := Run(context.Background(), Revision{Name: "base", Files: map[string]string{}}, head,
				Options{All: true, Repositories: []string{"https://git.example.com/infra"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, p := range res.Predictions {
				if p.Cause != drift.CauseHPAReplicas {
					continue
				}
				w := want{p.Resource.String(), p.Path.String(), p.File, p.Line}
				if c.want != nil && c.want[0].file == "" {
					w.file, w.line = "", 0 // a vendored template is not located in the repository
				}
				got = append(got, w)
			}
			if len(got) != len(c.want) {
				t.Fatalf("predictions %+v, want %+v (notes %v)", got, c.want, res.Notes)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("prediction %+v, want %+v", got[i], c.want[i])
				}
			}
		})
	}
}

// TestHelmSourcesNotRendered: what Argo CD renders from elsewhere is named
// with a typed error that says Argo CD is needed, and nothing else is
// rendered in its place.
func TestHelmSourcesNotRendered(t *testing.T) {
	chart := withFiles(cacheChart("charts/db", "0.1.0"), map[string]string{"web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: root}\n"})
	app := func(sources string) drift.Object {
		var o map[string]any
		docs := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: db}\nspec:\n  destination: {namespace: data}\n  sources:\n" + sources
		apps := applicationsIn("a.yaml", docs)
		if len(apps) != 1 {
			t.Fatalf("no application in %s", docs)
		}
		o = apps[0].obj
		return o
	}
	repos := []string{"https://git.example.com/infra.git"}

	t.Run("a ref-only source renders nothing, not the repository root", func(t *testing.T) {
		a := app("  - {repoURL: https://git.example.com/infra.git, path: charts/db}\n  - {repoURL: https://git.example.com/infra.git, ref: values}\n")
		srcs, errs := planSources(a, chart, repos)
		if len(srcs) != 1 || srcs[0].Path != "charts/db" || len(errs) != 0 {
			t.Fatalf("sources %+v, errors %v: want the chart only", srcs, errs)
		}
	})
	t.Run("a $ref values file of another repository", func(t *testing.T) {
		a := app("  - {repoURL: https://git.example.com/infra.git, path: charts/db, helm: {valueFiles: [$values/prod.yaml]}}\n  - {repoURL: https://git.example.com/values.git, ref: values}\n")
		srcs, errs := planSources(a, chart, repos)
		if len(srcs) != 1 || len(errs) != 0 {
			t.Fatalf("sources %+v, errors %v", srcs, errs)
		}
		_, err := renderSourceIn(a, srcs[0], toBytes(chart), Revision{Files: chart}, nil, Options{Repositories: repos})
		var nl *render.NotLocalError
		if !errors.As(err, &nl) || nl.Repository != "https://git.example.com/values.git" ||
			!strings.Contains(err.Error(), "https://git.example.com/values.git") || !strings.Contains(err.Error(), "needs Argo CD at hand") {
			t.Fatalf("err = %v, want a NotLocalError naming the values repository and Argo CD", err)
		}
	})
	t.Run("a remote chart with $ref values", func(t *testing.T) {
		a := app("  - {repoURL: https://charts.example.com, chart: redis, targetRevision: 19.0.0, helm: {valueFiles: [$values/redis.yaml]}}\n  - {repoURL: https://git.example.com/infra.git, ref: values}\n")
		srcs, errs := planSources(a, chart, repos)
		var nl *render.NotLocalError
		if len(srcs) != 0 || len(errs) != 1 || !errors.As(errs[0], &nl) || nl.Chart != "redis" || nl.Repository != "https://charts.example.com" ||
			!strings.Contains(errs[0].Error(), "Argo CD at hand") {
			t.Fatalf("sources %+v, errors %v: want one NotLocalError naming chart redis and its repository", srcs, errs)
		}
	})
	t.Run("two sources with one ref", func(t *testing.T) {
		a := app("  - {repoURL: https://git.example.com/infra.git, ref: v}\n  - {repoURL: https://git.example.com/infra.git, ref: v}\n")
		if srcs, errs := planSources(a, chart, repos); len(srcs) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "multiple sources have ref v") {
			t.Fatalf("sources %+v, errors %v", srcs, errs)
		}
	})
	t.Run("a dependency from a chart repository that is not vendored", func(t *testing.T) {
		files := withFiles(chart, map[string]string{"charts/db/Chart.yaml": "apiVersion: v2\nname: db\nversion: 0.1.0\ndependencies:\n  - {name: redis, version: 19.0.0, repository: oci://registry.example.com/charts}\n"})
		a := app("  - {repoURL: https://git.example.com/infra.git, path: charts/db}\n")
		srcs, _ := planSources(a, files, repos)
		_, err := renderSourceIn(a, srcs[0], toBytes(files), Revision{Files: files}, nil, Options{Repositories: repos})
		var nl *render.NotLocalError
		if !errors.As(err, &nl) || nl.Repository != "oci://registry.example.com/charts" || !strings.Contains(err.Error(), "not fetched") || !strings.Contains(err.Error(), "Argo CD") {
			t.Fatalf("err = %v, want a NotLocalError naming the registry", err)
		}
	})
	t.Run("two sources of one path keep their own options", func(t *testing.T) {
		a := app("  - {repoURL: https://git.example.com/infra.git, path: charts/db, helm: {releaseName: one, parameters: [{name: replicas, value: '5'}]}}\n" +
			"  - {repoURL: https://git.example.com/infra.git, path: ./charts/db/, helm: {releaseName: two}}\n")
		srcs, _ := planSources(a, chart, repos)
		if len(srcs) != 2 {
			t.Fatalf("sources %+v", srcs)
		}
		var replicas []any
		for _, s := range srcs {
			objs, err := renderSourceIn(a, s, toBytes(chart), Revision{Files: chart}, nil, Options{Repositories: repos})
			if err != nil {
				t.Fatal(err)
			}
			replicas = append(replicas, drift.Lookup(objs[0], "spec", "replicas"))
		}
		if replicas[0] != int64(5) || replicas[1] != int64(2) {
			t.Errorf("replicas %v, want 5 from the first source's parameter and 2 from the chart for the second", replicas)
		}
	})
}

func TestSourceReads(t *testing.T) {
	files := withFiles(cacheChart("lib/cache", "1.0.0"), map[string]string{
		"charts/db/Chart.yaml":  "apiVersion: v2\nname: db\nversion: 0.1.0\ndependencies:\n  - {name: cache, version: 1.0.0, repository: file://../../lib/cache}\n",
		"envs/prod/values.yaml": "replicas: 3\n",
		"envs/prod/extra.yaml":  "a: b\n",
	})
	apps := applicationsIn("db.yaml", multiSourceApp)
	a := apps[0].obj
	spec := a["spec"].(map[string]any)["sources"].([]any)[0].(map[string]any)
	spec["helm"].(map[string]any)["valueFiles"] = []any{"$values/envs/prod/values.yaml", "/envs/*/extra.yaml"}
	srcs, _ := planSources(a, files, []string{"https://git.example.com/infra"})
	got := strings.Join(sourceReads(a, srcs[0], files, []string{"https://git.example.com/infra"}), " ")
	if want := "envs/prod/extra.yaml envs/prod/values.yaml lib/cache/"; got != want {
		t.Errorf("reads %q, want %q", got, want)
	}
}

func toBytes(m map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

// TestHelmAPIVersionsFromTheClusterContext: a chart that renders a kind
// only where the cluster serves it renders it when the cluster context
// holds its CRD, as Argo CD passes the cluster's APIs; the Application's
// own apiVersions replace them.
func TestHelmAPIVersionsFromTheClusterContext(t *testing.T) {
	files := map[string]string{
		"charts/db/Chart.yaml": "apiVersion: v2\nname: db\nversion: 0.1.0\n",
		"charts/db/templates/mon.yaml": "{{- if .Capabilities.APIVersions.Has \"monitoring.coreos.com/v1/ServiceMonitor\" }}\n" +
			"apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: db}\n{{- end }}\n",
	}
	crd := drift.Object{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "servicemonitors.monitoring.coreos.com"},
		"spec": map[string]any{"group": "monitoring.coreos.com", "names": map[string]any{"kind": "ServiceMonitor"},
			"versions": []any{map[string]any{"name": "v1", "served": true}, map[string]any{"name": "v1alpha1", "served": false}}}}
	if got := strings.Join(clusterAPIVersions([]drift.Object{crd}), " "); got != "monitoring.coreos.com/v1 monitoring.coreos.com/v1/ServiceMonitor" {
		t.Errorf("API versions %q", got)
	}
	for _, c := range []struct {
		name    string
		helm    string
		cluster []drift.Object
		want    int
	}{
		{"no CRD in the cluster context", "", nil, 0},
		{"the CRD in the cluster context", "", []drift.Object{crd}, 1},
		{"the Application's apiVersions replace the cluster's", "    helm: {apiVersions: [other.example.com/v1]}\n", []drift.Object{crd}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := applicationsIn("a.yaml", dbAppWith(c.helm))[0].obj
			src := drift.Sources(a)[0]
			objs, err := renderSourceWith(a, src, toBytes(files), files, c.cluster, render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != c.want {
				t.Errorf("rendered %d objects, want %d", len(objs), c.want)
			}
		})
	}
}
