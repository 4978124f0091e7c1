package predict

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// appOfAppsChart is a Helm app-of-apps chart: one Application per entry of
// its values, as argocd-example-apps' apps/ chart and most platform
// repositories write it.
var appOfAppsChart = map[string]string{
	"apps/Chart.yaml":  "apiVersion: v2\nname: apps\nversion: 0.1.0\n",
	"apps/values.yaml": "repoURL: https://git.example.com/shop.git\napps:\n- name: web\n  path: ./services/web/\n- name: api\n  path: services/api\n",
	"apps/templates/apps.yaml": `{{- range .Values.apps }}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {{ .name }}
  namespace: argocd
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  source:
    repoURL: {{ $.Values.repoURL }}
    path: {{ .path }}
    targetRevision: HEAD
{{- end }}
`,
	"services/web/hpa.yaml": webHPA,
	"services/api/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\ndata: {a: b}\n",
}

// TestDiscoverApplications: applications are found as Argo CD has them,
// and drift in one of them is predicted at its file and line.
func TestDiscoverApplications(t *testing.T) {
	root := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: root, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
  source: {repoURL: https://git.example.com/shop.git, path: apps, targetRevision: HEAD}
`
	baseApp := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  source: {repoURL: https://git.example.com/shop.git, path: services/web, targetRevision: HEAD}
`
	for _, tc := range []struct {
		name  string
		base  map[string]string
		head  map[string]string // changed files
		app   string            // the application that must be predicted
		file  string            // where its drift is declared
		apps  []string          // every application predicted
		notOf string            // an application listed as not predicted
		why   string            // words of its reason
		note  string            // words of a note
	}{
		{name: "children of a Helm app-of-apps with a root Application",
			base: withFiles(appOfAppsChart, map[string]string{"root.yaml": root, "services/web/deploy.yaml": deployment("", "100m")}),
			head: map[string]string{"services/web/deploy.yaml": deployment("  replicas: 3\n", "100m")},
			app:  "web", file: "services/web/deploy.yaml", apps: []string{"web"}},
		{name: "children of a Helm app-of-apps chart no manifest points at",
			base: withFiles(appOfAppsChart, map[string]string{"services/web/deploy.yaml": deployment("", "100m")}),
			head: map[string]string{"services/web/deploy.yaml": deployment("  replicas: 3\n", "100m")},
			app:  "web", file: "services/web/deploy.yaml", apps: []string{"web"}},
		{name: "a child the parent's values add",
			base: withFiles(appOfAppsChart, map[string]string{"root.yaml": root}),
			head: map[string]string{
				"apps/values.yaml":          appOfAppsChart["apps/values.yaml"] + "- name: jobs\n  path: services/jobs\n",
				"services/jobs/deploy.yaml": strings.ReplaceAll(deployment("  replicas: 3\n", "100m"), "name: web", "name: jobs") + "---\n" + strings.ReplaceAll(webHPA, "name: web", "name: jobs"),
			},
			app: "jobs", file: "services/jobs/deploy.yaml", apps: []string{"root", "jobs"}},
		{name: "an overlay patches a base Application's path",
			base: map[string]string{
				"argocd/base/web.yaml":                baseApp,
				"argocd/base/kustomization.yaml":      "resources: [web.yaml]\n",
				"argocd/prod/kustomization.yaml":      "resources: [../base]\npatches:\n- path: web-path.yaml\n",
				"argocd/prod/web-path.yaml":           "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  source: {path: services/web-prod}\n",
				"services/web/deploy.yaml":            deployment("", "100m"),
				"services/web-prod/deploy.yaml":       deployment("", "100m"),
				"services/web-prod/hpa.yaml":          webHPA,
				"services/web-prod/kustomization.yml": "resources: [deploy.yaml, hpa.yaml]\n",
			},
			head: map[string]string{"services/web-prod/deploy.yaml": deployment("  replicas: 3\n", "100m")},
			app:  "web", file: "services/web-prod/deploy.yaml", apps: []string{"web"}},
		{name: "two different definitions of one application are named and each predicted",
			base: map[string]string{
				"a/web.yaml":               baseApp,
				"b/web.yaml":               strings.Replace(baseApp, "namespace: shop", "namespace: shop2", 1),
				"services/web/deploy.yaml": deployment("", "100m"),
				"services/web/hpa.yaml":    webHPA,
			},
			head: map[string]string{"services/web/deploy.yaml": deployment("  replicas: 3\n", "100m"), "b/web.yaml": strings.Replace(baseApp, "namespace: shop", "namespace: shop3", 1)},
			app:  "web", file: "services/web/deploy.yaml", apps: []string{"web", "web"}, note: "web is defined more than once, differently: a/web.yaml and b/web.yaml"},
		{name: "an application that does not render does not stop the others",
			base: map[string]string{
				"web.yaml":                      baseApp,
				"bad.yaml":                      strings.NewReplacer("name: web", "name: bad", "services/web", "services/bad").Replace(baseApp),
				"services/web/deploy.yaml":      deployment("", "100m"),
				"services/web/hpa.yaml":         webHPA,
				"services/bad/Chart.yaml":       "apiVersion: v2\nname: bad\nversion: 0.1.0\n",
				"services/bad/templates/x.yaml": "{{ fail \"not here\" }}\n",
			},
			head: map[string]string{"services/web/deploy.yaml": deployment("  replicas: 3\n", "100m"), "services/bad/templates/x.yaml": "{{ fail \"still not here\" }}\n"},
			app:  "web", file: "services/web/deploy.yaml", apps: []string{"web"}, notOf: "bad", why: "still not here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := gitRepo(t, tc.base, tc.head)
			res, err := Run(context.Background(), base, head, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(res.Applications, ",") != strings.Join(tc.apps, ",") {
				t.Errorf("applications predicted %q, want %q (not predicted %+v, notes %q)", res.Applications, tc.apps, res.NotPredicted, res.Notes)
			}
			if tc.app != "" {
				found := false
				for _, p := range res.Predictions {
					if p.Application == tc.app && p.File == tc.file && p.Line > 0 && p.Path.String() == "/spec/replicas" {
						found = true
					}
				}
				if !found {
					t.Errorf("no /spec/replicas prediction for %s at %s: %+v", tc.app, tc.file, res.Predictions)
				}
			}
			if tc.note != "" && !strings.Contains(strings.Join(res.Notes, "\n"), tc.note) {
				t.Errorf("notes %q, want one naming %q", res.Notes, tc.note)
			}
			if tc.notOf != "" {
				found := false
				for _, n := range res.NotPredicted {
					if n.Application == tc.notOf && strings.Contains(n.Reason, tc.why) {
						found = true
					}
				}
				if !found {
					t.Errorf("not predicted %+v, want %s with a reason naming %q", res.NotPredicted, tc.notOf, tc.why)
				}
			}
		})
	}
}

// TestPatchFilesAreNotApplications: a kustomization's patch of an
// Application is a patch, not an application of its own.
func TestPatchFilesAreNotApplications(t *testing.T) {
	files := map[string]string{
		"base/web.yaml":           webApp,
		"base/kustomization.yaml": "resources: [web.yaml]\n",
		"dev/kustomization.yaml":  "resources: [../base]\npatchesStrategicMerge: [rev.yaml]\n",
		"dev/rev.yaml":            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  source: {targetRevision: dev}\n",
	}
	d := discover(Revision{Name: "head", Files: files}, Options{}, newRenderer())
	if len(d.apps) != 1 || len(d.not) != 0 {
		t.Fatalf("applications %+v, not predicted %+v: want the overlay's one", d.apps, d.not)
	}
	a := d.apps[0]
	if got := a.obj["spec"].(map[string]any)["source"].(map[string]any)["targetRevision"]; got != "dev" || a.manifest != "base/web.yaml" || a.from != "overlay dev" {
		t.Errorf("application from %q in %s with targetRevision %v, want the overlay's dev from base/web.yaml", a.from, a.manifest, got)
	}
}

// TestChartTemplatesAreNotManifests: a chart's template that happens to
// parse as YAML is rendered, not read as an Application.
func TestChartTemplatesAreNotManifests(t *testing.T) {
	files := withFiles(appOfAppsChart, map[string]string{"apps/templates/one.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: 'x-{{ .Values.env }}', namespace: argocd}\nspec: {}\n",
		"apps/values.yaml": appOfAppsChart["apps/values.yaml"] + "env: prod\n"})
	d := discover(Revision{Name: "head", Files: files}, Options{}, newRenderer())
	var names []string
	for _, a := range d.apps {
		names = append(names, a.obj["metadata"].(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "web,api,x-prod" {
		t.Errorf("applications %q, want web, api and x-prod as the chart renders them", names)
	}
}

// TestCheckNamesWhatItDidNotPredict: a change whose applications were not
// all predicted never gets a clean check title; each is listed with why.
func TestCheckNamesWhatItDidNotPredict(t *testing.T) {
	res := &Result{Applications: []string{"web"}, NotPredicted: []NotPredicted{{Application: "cluster-addons", Kind: "ApplicationSet", File: "appsets/addons.yaml",
		Reason: "its clusters generator needs the cluster list", Needs: "--cluster FILE"}}}
	ck := Check(res)
	if !ck.Neutral || ck.Title != "1 application not predicted" {
		t.Errorf("check %q (neutral %v), want a neutral check titled 1 application not predicted", ck.Title, ck.Neutral)
	}
	for _, want := range []string{"ApplicationSet cluster-addons (appsets/addons.yaml)", "clusters generator needs the cluster list", "needs --cluster FILE"} {
		if !strings.Contains(ck.Text, want) {
			t.Errorf("check text %q lacks %q", ck.Text, want)
		}
	}
	if got := Check(&Result{Applications: []string{"web"}}).Title; got != "No field will stay OutOfSync after sync" {
		t.Errorf("clean check title %q", got)
	}
}

// TestRemoteRender: an application whose chart comes from a Helm
// repository, with a value file in this one, is predicted from Argo CD's
// own render of it where Argo CD is at hand, and listed as not predicted,
// with what it needs, where not or where the change edits the Application
// Argo CD would render.
func TestRemoteRender(t *testing.T) {
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: cache, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: cache}
  sources:
  - {repoURL: https://charts.example.com, chart: redis, targetRevision: 1.2.3, helm: {valueFiles: [$values/values/cache.yaml]}}
  - {repoURL: https://git.example.com/shop.git, targetRevision: HEAD, ref: values}
`
	base := Revision{Name: "main", Commit: "main", Files: map[string]string{"apps/cache.yaml": app, "values/cache.yaml": "replicas: 1\n"}}
	head := Revision{Name: "change", Commit: "c0ffee", Files: map[string]string{"apps/cache.yaml": app, "values/cache.yaml": "replicas: 3\n"}}
	known := argoObjects(app)
	var asked []string
	remote := func(a drift.Object, rev Revision) ([]drift.Object, error) {
		asked = append(asked, rev.Commit)
		replicas := "" // Argo CD renders the values file of the commit it is asked for
		if rev.Commit == "c0ffee" {
			replicas = "  replicas: 3\n"
		}
		var out []drift.Object
		for _, doc := range []string{strings.ReplaceAll(deployment(replicas, "100m"), "name: web", "name: cache"), strings.ReplaceAll(webHPA, "name: web", "name: cache")} {
			docs, err := yamledit.Documents([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, drift.NormalizeNumbers(docs[0]).(map[string]any))
		}
		return out, nil
	}
	opt := Options{Applications: known, Remote: remote, Repositories: []string{"https://git.example.com/shop.git"}}
	res, err := Run(context.Background(), base, head, opt)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, ",") != "c0ffee,main" || strings.Join(res.Applications, ",") != "cache" || len(res.NotPredicted) != 0 {
		t.Errorf("asked Argo CD for %q, predicted %q, not predicted %+v: want head and base rendered", asked, res.Applications, res.NotPredicted)
	}
	if len(res.Predictions) != 1 || res.Predictions[0].Path.String() != "/spec/replicas" || res.Predictions[0].Application != "cache" {
		t.Errorf("predictions %+v, want cache's /spec/replicas from Argo CD's render", res.Predictions)
	}

	for _, tc := range []struct {
		name        string
		head        Revision
		why, needed string
	}{
		{"a work tree Argo CD cannot fetch", Revision{Name: "the work tree", Files: head.Files}, "charts.example.com", "Argo CD at hand"},
		{"the change edits the Application", Revision{Name: "change", Commit: "c0ffee", Files: map[string]string{"apps/cache.yaml": strings.Replace(app, "1.2.3", "1.2.4", 1), "values/cache.yaml": "replicas: 3\n"}},
			"this change edits it", "merged first"},
	} {
		asked = nil
		res, err = Run(context.Background(), base, tc.head, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(asked) != 0 || len(res.NotPredicted) != 1 || res.NotPredicted[0].Application != "cache" || !strings.Contains(res.NotPredicted[0].Needs, tc.needed) ||
			!strings.Contains(res.NotPredicted[0].Reason, tc.why) || len(res.Applications) != 0 {
			t.Errorf("%s: asked Argo CD for %q, not predicted %+v, want cache for %q, needing %q", tc.name, asked, res.NotPredicted, tc.why, tc.needed)
		}
	}
}

// TestApplicationSetsPredicted: the Applications an ApplicationSet's git
// directory generator makes are found and predicted, each at its own file;
// a generator that needs the cluster (a clusters generator whose selector
// no cluster Secret of the repository matches) is listed with what it needs.
func TestApplicationSetsPredicted(t *testing.T) {
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: services, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: https://git.example.com/shop.git
      revision: HEAD
      directories:
      - path: services/*
      - path: services/legacy
        exclude: true
  template:
    metadata: {name: '{{.path.basename}}'}
    spec:
      project: default
      destination: {server: https://kubernetes.default.svc, namespace: '{{.path.basename}}'}
      source: {repoURL: https://git.example.com/shop.git, targetRevision: HEAD, path: '{{.path.path}}'}
`
	clusters := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: addons, namespace: argocd}
spec:
  generators: [{clusters: {selector: {matchLabels: {env: prod}}}}]
  template:
    metadata: {name: 'addons-{{name}}'}
    spec:
      project: default
      destination: {server: '{{server}}', namespace: addons}
      source: {repoURL: https://git.example.com/shop.git, targetRevision: HEAD, path: addons}
`
	base, head := gitRepo(t, map[string]string{
		"appsets/services.yaml":       set,
		"appsets/addons.yaml":         clusters,
		"addons/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: addons}\n",
		"services/web/deploy.yaml":    deployment("", "100m"),
		"services/web/hpa.yaml":       webHPA,
		"services/api/cm.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\n",
		"services/legacy/deploy.yaml": strings.ReplaceAll(deployment("", "100m"), "name: web", "name: legacy"),
	}, map[string]string{
		"services/web/deploy.yaml":    deployment("  replicas: 3\n", "100m"),
		"services/legacy/deploy.yaml": strings.ReplaceAll(deployment("  replicas: 3\n", "100m"), "name: web", "name: legacy"),
		"addons/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: addons}\ndata: {a: b}\n",
	})
	res, err := Run(context.Background(), base, head, Options{Repositories: []string{"git@git.example.com:shop.git"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Applications, ",") != "web" {
		t.Errorf("applications %q, want web only (api untouched, legacy excluded)", res.Applications)
	}
	if len(res.Predictions) != 1 || res.Predictions[0].Application != "web" || res.Predictions[0].File != "services/web/deploy.yaml" || res.Predictions[0].Line == 0 {
		t.Errorf("predictions %+v, want web's replicas at services/web/deploy.yaml", res.Predictions)
	}
	if len(res.NotPredicted) != 1 || res.NotPredicted[0].Application != "addons" || res.NotPredicted[0].Kind != "ApplicationSet" ||
		!strings.Contains(res.NotPredicted[0].Needs, "--cluster") || res.NotPredicted[0].File != "appsets/addons.yaml" {
		t.Errorf("not predicted %+v, want the addons ApplicationSet, needing --cluster", res.NotPredicted)
	}
}

// TestDiscoveryIsBounded: a repository of more overlays holding
// Applications than discovery may render is named in a note, and the
// Applications past the bound are taken as written, not rendered.
func TestDiscoveryIsBounded(t *testing.T) {
	was := maxDiscoveryRenders
	maxDiscoveryRenders = 6
	t.Cleanup(func() { maxDiscoveryRenders = was })
	files := map[string]string{}
	for i := range maxDiscoveryRenders + 5 {
		dir := fmt.Sprintf("envs/e%03d", i)
		files[dir+"/kustomization.yaml"] = "resources: [app.yaml]\n"
		files[dir+"/app.yaml"] = strings.Replace(webApp, "name: web", fmt.Sprintf("name: web-%03d", i), 1)
	}
	d := discover(Revision{Name: "head", Files: files}, Options{}, newRenderer())
	if d.renders != maxDiscoveryRenders || len(d.apps) != maxDiscoveryRenders+5 || !strings.Contains(strings.Join(d.notes, "\n"), "stopped after") {
		t.Errorf("%d renders, %d applications, notes %q: want the bound, every application, a note", d.renders, len(d.apps), d.notes)
	}
}

// TestClustersGeneratorFromGit: without --cluster, a clusters generator
// makes the local cluster's application (Argo CD lists in-cluster without
// a Secret when the generator has no selector) and one per cluster Secret
// an Application of the repository deploys into Argo CD's namespace on the
// local cluster; a selector only those Secrets match keeps the local
// cluster out; a Secret elsewhere (another namespace) is not Argo CD's. The
// drift a change brings to the generated applications is predicted, and a
// note says the list of clusters is what Git tells.
func TestClustersGeneratorFromGit(t *testing.T) {
	set := func(name, gen string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: ` + name + `, namespace: argocd}
spec:
  generators:
  - ` + gen + `
  template:
    metadata: {name: '` + name + `-{{name}}'}
    spec:
      project: default
      destination: {server: '{{server}}', namespace: shop}
      source: {repoURL: https://git.example.com/shop.git, path: apps/web, targetRevision: main}
`
	}
	secret := func(name, ns string) string {
		return `apiVersion: v1
kind: Secret
metadata:
  name: cluster-` + name + `
  namespace: ` + ns + `
  labels: {argocd.argoproj.io/secret-type: cluster, env: prod}
stringData: {name: ` + name + `, server: https://` + name + `.example.com}
`
	}
	base := map[string]string{
		"sets/web.yaml":  set("web", "clusters: {}"),
		"sets/edge.yaml": set("edge", "clusters: {selector: {matchLabels: {env: prod}}}"),
		"argocd.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: argocd-config, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
  source: {repoURL: https://git.example.com/shop.git, path: config, targetRevision: main}
`,
		"config/prod.yaml":     secret("prod", "argocd"),
		"config/other.yaml":    secret("other", "team-a"),
		"config/sops.yaml":     strings.ReplaceAll(secret("sops", "argocd"), "server: https://sops.example.com", "server: 'ENC[AES256_GCM,data:abc=,type:str]'"),
		"apps/web/deploy.yaml": deployment("  replicas: 2\n", "100m"),
	}
	head := map[string]string{"apps/web/hpa.yaml": webHPA}
	b, h := gitRepo(t, base, head)
	res, err := Run(context.Background(), b, h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range res.Predictions {
		if p.Path.String() == "/spec/replicas" && p.Cause == drift.CauseHPAReplicas {
			got[p.Application] = true
			if p.File != "apps/web/deploy.yaml" || p.Line != 6 {
				t.Errorf("%s: at %s:%d, want apps/web/deploy.yaml:6", p.Application, p.File, p.Line)
			}
		}
	}
	want := map[string]bool{"web-in-cluster": true, "web-prod": true, "edge-prod": true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("replicas predicted for %v, want %v (predictions %+v, not predicted %+v)", got, want, res.Predictions, res.NotPredicted)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "cluster Secret cluster-sops that application argocd-config deploys is encrypted") {
		t.Errorf("notes do not name the encrypted cluster Secret left out:\n%s", notes)
	}
	if !strings.Contains(notes, "ApplicationSet web: generator generators[0].clusters") || !strings.Contains(notes, "--cluster") {
		t.Errorf("notes do not say the clusters are what Git tells:\n%s", notes)
	}
	// With a selector no declared Secret matches, the set is not predicted,
	// and says it needs --cluster.
	base["sets/edge.yaml"] = set("edge", "clusters: {selector: {matchLabels: {env: qa}}}")
	b, h = gitRepo(t, base, head)
	res, err = Run(context.Background(), b, h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range res.NotPredicted {
		if n.Application == "edge" && n.Kind == "ApplicationSet" && strings.Contains(n.Needs, "--cluster") {
			found = true
		}
	}
	if !found {
		t.Errorf("the set whose selector matches no declared Secret is not listed as needing --cluster: %+v", res.NotPredicted)
	}
}

// TestJsonnetApplicationSetOfAParent: a parent Application whose directory
// source is Jsonnet renders an ApplicationSet with the parent's extVars
// and tlas, as Argo CD's repo-server does; the set's git generator then
// makes the applications, and drift in one is predicted.
func TestJsonnetApplicationSetOfAParent(t *testing.T) {
	base := map[string]string{
		"root.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: root, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
  source:
    repoURL: https://git.example.com/shop.git
    path: sets
    targetRevision: main
    directory:
      jsonnet:
        extVars: [{name: repoURL, value: https://git.example.com/shop.git}]
        tlas: [{name: prefix, value: shop}]
`,
		"sets/appset.jsonnet": `function(prefix) {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'ApplicationSet',
  metadata: { name: prefix + '-apps', namespace: 'argocd' },
  spec: {
    generators: [{ git: { repoURL: std.extVar('repoURL'), revision: 'HEAD', directories: [{ path: 'apps/*' }] } }],
    template: {
      metadata: { name: prefix + '-{{path.basename}}' },
      spec: {
        project: 'default',
        source: { repoURL: std.extVar('repoURL'), targetRevision: 'HEAD', path: '{{path}}' },
        destination: { server: 'https://kubernetes.default.svc', namespace: '{{path.basename}}' },
      },
    },
  },
}
`,
		"apps/web/deploy.yaml": deployment("  replicas: 2\n", "100m"),
	}
	b, h := gitRepo(t, base, map[string]string{"apps/web/hpa.yaml": webHPA})
	res, err := Run(context.Background(), b, h, Options{Repositories: []string{"https://git.example.com/shop.git"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Predictions {
		if p.Application == "shop-web" && p.Path.String() == "/spec/replicas" && p.File == "apps/web/deploy.yaml" && p.Line == 6 {
			return
		}
	}
	t.Errorf("no replicas prediction for shop-web at apps/web/deploy.yaml:6: predictions %+v, not predicted %+v, notes %v", res.Predictions, res.NotPredicted, res.Notes)
}

// TestJsonnetRoots: a Jsonnet folder of ApplicationSets that no Application
// points at (a root applied by hand) is rendered on its own: its sets are
// resolved when it needs nothing, and it is listed as not predicted, with
// what would let it be, when it reads an external variable only the
// Application applying it would give.
func TestJsonnetRoots(t *testing.T) {
	appset := func(repo string) string {
		return `{
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'ApplicationSet',
  metadata: { name: 'apps', namespace: 'argocd' },
  spec: {
    generators: [{ git: { repoURL: ` + repo + `, revision: 'HEAD', directories: [{ path: 'apps/*' }] } }],
    template: {
      metadata: { name: '{{path.basename}}' },
      spec: {
        project: 'default',
        source: { repoURL: ` + repo + `, targetRevision: 'HEAD', path: '{{path}}' },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' },
      },
    },
  },
}
`
	}
	for _, tc := range []struct {
		name, repo string
		predicted  bool
	}{
		{"needs nothing", "'https://git.example.com/shop.git'", true},
		{"reads an external variable", "std.extVar('repoURL')", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := map[string]string{"sets/appset.jsonnet": appset(tc.repo), "apps/web/deploy.yaml": deployment("  replicas: 2\n", "100m")}
			b, h := gitRepo(t, base, map[string]string{"apps/web/hpa.yaml": webHPA})
			res, err := Run(context.Background(), b, h, Options{Repositories: []string{"https://git.example.com/shop.git"}})
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, p := range res.Predictions {
				got = got || (p.Application == "web" && p.Path.String() == "/spec/replicas" && p.File == "apps/web/deploy.yaml")
			}
			if got != tc.predicted {
				t.Errorf("replicas of web predicted %v, want %v: %+v", got, tc.predicted, res.Predictions)
			}
			listed := false
			for _, n := range res.NotPredicted {
				// one line, naming the variable and where it is read
				listed = listed || (n.File == "sets/appset.jsonnet" && strings.Contains(n.Reason, "repoURL") && strings.Contains(n.Reason, "sets/appset.jsonnet:") &&
					!strings.Contains(n.Reason, "\n") && strings.Contains(n.Needs, "extVars"))
			}
			if listed == tc.predicted {
				t.Errorf("the root listed as not predicted: %v, want %v: %+v", listed, !tc.predicted, res.NotPredicted)
			}
		})
	}
}
