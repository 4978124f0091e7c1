package predict

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/helmrepo"
	"github.com/driftfix/driftfix/bot/helmrepo/helmrepotest"
	"github.com/driftfix/driftfix/remediations/render"
)

// scaledChart is a chart whose Deployment declares replicas under an HPA
// of the chart: a prediction (hpa-replicas) names the Deployment, whose
// name carries the chart's version.
func scaledChart(t *testing.T, name, version string) []byte {
	return helmrepotest.Package(t, name, version, map[string]string{
		"values.yaml":      "replicas: 2\n",
		"values-prod.yaml": "minReplicas: 1\n",
		"templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Chart.Name }}-{{ .Chart.Version | replace "." "-" }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Chart.Name }}}
  template:
    metadata:
      labels: {app: {{ .Chart.Name }}}
    spec:
      containers:
      - {name: app, image: "nginx:1.27"}
`,
		"templates/hpa.yaml": `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ .Chart.Name }}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: {{ .Chart.Name }}-{{ .Chart.Version | replace "." "-" }}}
  minReplicas: {{ .Values.minReplicas | default 3 }}
  maxReplicas: 5
`})
}

func chartApp(name, source string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: %s}
%s`, name, name, source)
}

// fetcherFor is the fetch function of a real Fetcher without a cache.
func fetcherFor(t *testing.T) FetchCharts {
	t.Helper()
	f, err := helmrepo.New(helmrepo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return func(ref render.ChartRef) (string, []byte, error) { return f.Fetch(context.Background(), ref) }
}

// predictedNames are the Deployments the predictions name, sorted.
func predictedNames(res *Result) []string {
	var out []string
	for _, p := range res.Predictions {
		out = append(out, p.Application+":"+p.Resource.Name)
	}
	sort.Strings(out)
	return out
}

// TestPredictRemoteCharts predicts applications whose charts are in a chart
// repository and an OCI registry on loopback, fetched by the caller: the
// version a range resolves to, $ref values from the repository, a chart of
// the repository whose dependency is not vendored; a dead repository is
// one application not predicted, named with the chart and the URL, and
// never stops the others. Without a fetcher, each is listed as not fetched.
func TestPredictRemoteCharts(t *testing.T) {
	repo := helmrepotest.NewRepo(t, scaledChart(t, "web", "1.2.0"), scaledChart(t, "web", "1.2.9"), scaledChart(t, "web", "1.3.0"), scaledChart(t, "db", "0.4.1"))
	reg := helmrepotest.NewRegistry(t)
	reg.Push(t, "charts", scaledChart(t, "api", "2.0.0"))
	reg.Push(t, "charts", scaledChart(t, "api", "2.1.0"))
	dead := helmrepotest.NewRepo(t, scaledChart(t, "gone", "1.0.0"))
	dead.Close()
	files := map[string]string{
		"apps/web.yaml": chartApp("web", `  sources:
  - {repoURL: "`+repo.URL+`", chart: web, targetRevision: "1.2.*", helm: {valueFiles: [values-prod.yaml, $values/values/web.yaml]}}
  - {repoURL: https://git.example.com/shop.git, targetRevision: main, ref: values}
`),
		"values/web.yaml": "replicas: 4\n",
		"apps/api.yaml": chartApp("api", `  source: {repoURL: "`+reg.Host+`/charts", chart: api, targetRevision: ">=2 <3"}
`),
		"apps/oci.yaml": chartApp("oci", `  source: {repoURL: "oci://`+reg.Host+`/charts/api", targetRevision: 2.0.0, path: .}
`),
		"apps/umbrella.yaml": chartApp("umbrella", `  source: {repoURL: https://git.example.com/shop.git, path: charts/umbrella, targetRevision: main}
`),
		"charts/umbrella/Chart.yaml":  "apiVersion: v2\nname: umbrella\nversion: 0.1.0\ndependencies:\n- {name: db, version: ~0.4.0, repository: \"" + repo.URL + "\"}\n",
		"charts/umbrella/values.yaml": "db: {replicas: 3}\n",
		"apps/gone.yaml": chartApp("gone", `  source: {repoURL: "`+dead.URL+`", chart: gone, targetRevision: 1.0.0}
`),
	}
	rev := Revision{Name: "main", Files: files}
	opt := Options{All: true, Repositories: []string{"https://git.example.com/shop.git"}, Charts: fetcherFor(t)}
	res, err := Run(context.Background(), rev, rev, opt)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(predictedNames(res), " ")
	want := "api:api-2-1-0 oci:api-2-0-0 umbrella:db-0-4-1 web:web-1-2-9"
	if got != want {
		t.Errorf("predicted %s\nwant      %s\nnot predicted: %+v", got, want, res.NotPredicted)
	}
	for _, p := range res.Predictions {
		if p.Application != "web" {
			continue
		}
		if fmt.Sprint(p.Git) != "4" {
			t.Errorf("web: replicas %v in Git, want 4 from the repository's $values file", p.Git)
		}
		if !strings.Contains(fmt.Sprint(p.Evidence), "minReplicas 1") {
			t.Errorf("web: evidence %v, want the HPA's minReplicas 1 from the chart's own values-prod.yaml", p.Evidence)
		}
	}
	if len(res.NotPredicted) != 1 || res.NotPredicted[0].Application != "gone" ||
		!strings.Contains(res.NotPredicted[0].Reason, "fetching chart gone 1.0.0 from "+dead.URL+": ") ||
		!strings.Contains(res.NotPredicted[0].Needs, "reachable") {
		t.Errorf("not predicted: %+v, want gone alone, naming the chart and its repository", res.NotPredicted)
	}

	t.Run("offline", func(t *testing.T) {
		before := repo.Requests.Load()
		opt := Options{All: true, Repositories: []string{"https://git.example.com/shop.git"}, NotFetched: "--offline"}
		res, err := Run(context.Background(), rev, rev, opt)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, n := range res.NotPredicted {
			names = append(names, n.Application)
			if !strings.Contains(n.Reason, "not fetched (--offline") || !strings.Contains(n.Needs, "without --offline") {
				t.Errorf("%s: %q (needs %q), want it not fetched because of --offline", n.Application, n.Reason, n.Needs)
			}
		}
		if strings.Join(names, " ") != "api gone oci umbrella web" || len(res.Predictions) != 0 {
			t.Errorf("not predicted %v, predictions %v", names, predictedNames(res))
		}
		if repo.Requests.Load() != before {
			t.Errorf("--offline sent %d requests", repo.Requests.Load()-before)
		}
	})
}

// TestForkHeadFetchesOnlyWhatBaseNames: with ChartsFromBase (the bot), a
// head that adds an Application of a new chart repository, or a chart
// dependency of one, sends that repository nothing; a repository the base
// names is fetched from.
func TestForkHeadFetchesOnlyWhatBaseNames(t *testing.T) {
	trusted := helmrepotest.NewRepo(t, scaledChart(t, "web", "1.0.0"), scaledChart(t, "web", "1.1.0"))
	other := helmrepotest.NewRepo(t, scaledChart(t, "evil", "1.0.0"))
	web := chartApp("web", `  source: {repoURL: "`+trusted.URL+`", chart: web, targetRevision: 1.0.0}
`)
	base := Revision{Name: "main", Files: map[string]string{"apps/web.yaml": web}}
	head := Revision{Name: "fork", Files: map[string]string{
		"apps/web.yaml": strings.Replace(web, "1.0.0", "1.1.0", 1),
		"apps/evil.yaml": chartApp("evil", `  source: {repoURL: "`+other.URL+`/", chart: evil, targetRevision: 1.0.0}
`),
		"apps/dep.yaml":          chartApp("dep", "  source: {repoURL: https://git.example.com/shop.git, path: charts/dep, targetRevision: main}\n"),
		"charts/dep/Chart.yaml":  "apiVersion: v2\nname: dep\nversion: 0.1.0\ndependencies:\n- {name: evil, version: 1.0.0, repository: \"" + other.URL + "\"}\n",
		"charts/dep/values.yaml": "{}\n",
	}}
	opt := Options{Repositories: []string{"https://git.example.com/shop.git"}, Charts: fetcherFor(t), ChartsFromBase: true}
	res, err := Run(context.Background(), base, head, opt)
	if err != nil {
		t.Fatal(err)
	}
	if n := other.Requests.Load(); n != 0 {
		t.Fatalf("the repository only the head names got %d requests", n)
	}
	if trusted.Requests.Load() == 0 || strings.Join(res.Applications, " ") != "web" {
		t.Errorf("applications %v (trusted repository: %d requests), want web predicted from the base's repository", res.Applications, trusted.Requests.Load())
	}
	var names []string
	for _, n := range res.NotPredicted {
		names = append(names, n.Application)
		if !strings.Contains(n.Reason, "is not named at main") || !strings.Contains(n.Needs, "base branch") {
			t.Errorf("%s: %q (needs %q)", n.Application, n.Reason, n.Needs)
		}
	}
	if strings.Join(names, " ") != "dep evil" {
		t.Errorf("not predicted %v, want dep and evil", names)
	}
}
