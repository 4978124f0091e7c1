package predict

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/internal/gittest"
)

// gitRepo makes a Git repository with base committed on main and head
// (files to write; an empty content removes the file) committed on branch
// change, and returns the two revisions as bot/gitrepo reads them.
func gitRepo(t *testing.T, base, head map[string]string) (Revision, Revision) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		gittest.Run(t, dir, nil, args...)
	}
	write := func(files map[string]string) {
		for name, content := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if content == "" {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	run("init", "-q", "-b", "main")
	write(base)
	run("add", ".")
	run("commit", "-q", "--allow-empty", "-m", "base")
	run("checkout", "-q", "-b", "change")
	write(head)
	run("add", "-A", ".")
	run("commit", "-q", "--allow-empty", "-m", "change")
	read := func(rev string) Revision {
		files, err := gitrepo.Files(context.Background(), "file://"+filepath.ToSlash(dir), rev, gitrepo.Limits{})
		if err != nil {
			t.Fatalf("read %s: %v", rev, err)
		}
		return Revision{Name: rev, Files: files}
	}
	return read("main"), read("change")
}

const webApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  source: {repoURL: https://git.example.com/shop.git, path: apps/web, targetRevision: main}
`

const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
%s  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources:
          requests:
            cpu: %s
`

const webHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
`

func deployment(spec, cpu string) string { return fmt.Sprintf(webDeployment, spec, cpu) }

const dbApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: db, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: data}
  source: {repoURL: https://git.example.com/infra.git, path: charts/db, targetRevision: main}
`

const dbChart = "apiVersion: v2\nname: db\nversion: 0.1.0\n"

const dbStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}
spec:
  serviceName: {{ .Release.Name }}
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - {name: db, image: "postgres:16"}
  volumeClaimTemplates:
  - metadata:
      name: data
      labels:
        app.kubernetes.io/instance: {{ .Release.Name }}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`

const labelTracking = `- apiVersion: v1
  kind: ConfigMap
  metadata: {name: argocd-cm, namespace: argocd}
  data: {application.resourceTrackingMethod: label}
`

const sidecarWebhook = `- apiVersion: admissionregistration.k8s.io/v1
  kind: MutatingWebhookConfiguration
  metadata: {name: sidecar}
  webhooks:
  - name: sidecar.example.com
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig: {service: {name: injector, namespace: mesh}}
    rules: [{apiGroups: ["apps"], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: ["deployments"]}]
`

const backupCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: schedules.backup.example.com}
spec:
  group: backup.example.com
  names: {kind: Schedule, plural: schedules}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cron: {type: string}
              retention: {type: integer, default: 3}
`

// TestPredictKinds runs predict on real Git repositories, one change per
// kind of prediction, and checks each predicted resource, path, cause, fix
// and the file and line that declare it; clean changes predict nothing.
func TestPredictKinds(t *testing.T) {
	tests := append(changeKindCases(), baseAndCleanCases()...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, head := gitRepo(t, tc.base, tc.head)
			opt := Options{All: tc.all}
			if tc.cluster != "" {
				objs, err := ParseCluster([]byte(tc.cluster))
				if err != nil {
					t.Fatalf("cluster: %v", err)
				}
				opt.Cluster = objs
			}
			res, err := Run(context.Background(), base, head, opt)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var got []kindWant
			for _, p := range res.Predictions {
				got = append(got, kindWant{p.Resource.String(), p.Path.String(), p.Cause, p.Fix, p.File, p.Line})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("predictions:\n got %v\nwant %v", got, tc.want)
				for _, p := range res.Predictions {
					t.Logf("%s: %v", p, p.Evidence)
				}
			}
		})
	}
}

// kindWant is one prediction TestPredictKinds expects: the resource, path,
// cause, fix and the file and line that declare it.
type kindWant struct {
	resource, path string
	cause          drift.Cause
	fix            drift.FixKind
	file           string
	line           int
}

// kindCase is one change of TestPredictKinds: the files at base, those
// head adds or replaces, the cluster context, and what it predicts.
type kindCase struct {
	name       string
	base, head map[string]string
	cluster    string
	all        bool
	want       []kindWant
}

// changeKindCases are the changes that bring one kind of prediction each
// (or that Argo CD hides), by source: plain manifests, schemas, charts,
// ignore rules, kustomizations and overlays.
func changeKindCases() []kindCase {
	type want = kindWant
	return []kindCase{
		{
			name: "an HPA added beside a Deployment that declares replicas",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("  replicas: 2\n", "500m")},
			head: map[string]string{"apps/web/hpa.yaml": webHPA},
			want: []want{{"Deployment shop/web", "/spec/replicas", drift.CauseHPAReplicas, drift.FixRemoveField, "apps/web/deploy.yaml", 6}},
		},
		{
			name: "replicas added to a workload the application's own HPA scales",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m"), "apps/web/hpa.yaml": webHPA},
			head: map[string]string{"apps/web/deploy.yaml": deployment("  replicas: 3\n", "500m")},
			want: []want{{"Deployment shop/web", "/spec/replicas", drift.CauseHPAReplicas, drift.FixRemoveField, "apps/web/deploy.yaml", 6}},
		},
		{
			// An HPA only the cluster holds is no proof the field is the
			// autoscaler's: anyone who may write to the namespace can make one.
			// The drift is predicted; what to do is a person's decision.
			name:    "replicas added to a workload an HPA only of the cluster context scales: predicted, no fix",
			base:    map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m")},
			head:    map[string]string{"apps/web/deploy.yaml": deployment("  replicas: 3\n", "500m")},
			cluster: "- " + strings.ReplaceAll(strings.Replace(strings.TrimSpace(webHPA), "name: web\n", "name: web\n  namespace: shop\n", 1), "\n", "\n  ") + "\n",
			want:    []want{{"Deployment shop/web", "/spec/replicas", drift.CauseHPAReplicas, drift.FixNone, "apps/web/deploy.yaml", 6}},
		},
		{
			name: "a quantity Argo CD re-encodes in a built-in kind is hidden",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m")},
			head: map[string]string{"apps/web/deploy.yaml": deployment("", "1000m")},
		},
		{
			name: "an unknown field makes the quantity's spelling show, and is dropped",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m")},
			head: map[string]string{"apps/web/deploy.yaml": deployment("  strategy2: {}\n", "1000m")},
			want: []want{
				{"Deployment shop/web", "/spec/strategy2", drift.CauseNormalized, drift.FixRemoveField, "apps/web/deploy.yaml", 6},
				{"Deployment shop/web", "/spec/template/spec/containers/0/resources/requests/cpu", drift.CauseNormalized, drift.FixSetValue, "apps/web/deploy.yaml", 18},
			},
		},
		{
			name: "a field a CRD's schema prunes",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/crd.yaml": backupCRD},
			head: map[string]string{"apps/web/schedule.yaml": "apiVersion: backup.example.com/v1\nkind: Schedule\nmetadata:\n  name: nightly\nspec:\n  cron: \"0 2 * * *\"\n  compress: true\n"},
			want: []want{{"Schedule shop/nightly", "/spec/compress", drift.CauseNormalized, drift.FixRemoveField, "apps/web/schedule.yaml", 7}},
		},
		{
			name: "a chart rendering a random value",
			base: map[string]string{"apps/db.yaml": dbApp, "charts/db/Chart.yaml": dbChart, "charts/db/values.yaml": "replicas: 1\n"},
			head: map[string]string{"charts/db/templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-pw\nstringData:\n  password: {{ randAlphaNum 16 | quote }}\n"},
			want: []want{{"Secret data/db-pw", "/data/password", drift.CauseNondeterministicRender, drift.FixPinHelmValue, "charts/db/templates/secret.yaml", 6}},
		},
		{
			name:    "a chart stamping the tracking label on a StatefulSet's claims",
			base:    map[string]string{"apps/db.yaml": dbApp, "charts/db/Chart.yaml": dbChart, "charts/db/values.yaml": "replicas: 1\n"},
			head:    map[string]string{"charts/db/templates/sts.yaml": dbStatefulSet},
			cluster: labelTracking,
			want:    []want{{"PersistentVolumeClaim data/data-db-0", "", drift.CauseTrackingClash, drift.FixTrackingMethod, "charts/db/templates/sts.yaml", 20}},
		},
		{
			name:    "a Deployment a mutating webhook of the cluster admits",
			base:    map[string]string{"apps/web.yaml": webApp, "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n"},
			head:    map[string]string{"apps/web/deploy.yaml": deployment("", "500m")},
			cluster: sidecarWebhook,
			want:    []want{{"Deployment shop/web", "", drift.CauseWebhookMutation, drift.FixNone, "apps/web/deploy.yaml", 1}},
		},
		{
			name: "an ignore rule for every kind added to the Application",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m")},
			head: map[string]string{"apps/web.yaml": webApp + "  ignoreDifferences:\n  - group: \"*\"\n    kind: \"*\"\n    jsonPointers: [/spec]\n"},
			want: []want{{"Application argocd/web", "/spec/ignoreDifferences/0", drift.CauseBroadIgnore, drift.FixNarrowIgnore, "apps/web.yaml", 9}},
		},
		{
			name: "a system-wide ignore rule added to the argocd-cm a platform repository deploys",
			base: map[string]string{"platform.yaml": strings.ReplaceAll(strings.ReplaceAll(webApp, "web", "platform"), "namespace: shop", "namespace: argocd"),
				"apps/platform/argocd-cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  application.resourceTrackingMethod: annotation\n"},
			head: map[string]string{"apps/platform/argocd-cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  application.resourceTrackingMethod: annotation\n  resource.customizations.ignoreDifferences.all: |\n    jsonPointers:\n    - /spec\n"},
			want: []want{{"ConfigMap argocd/argocd-cm", "/data/resource.customizations.ignoreDifferences.all", drift.CauseBroadIgnore, drift.FixNarrowIgnore, "apps/platform/argocd-cm.yaml", 7}},
		},
		{
			name: "replicas from a chart's values under the chart's own HPA",
			base: map[string]string{"apps/db.yaml": dbApp, "charts/db/Chart.yaml": dbChart, "charts/db/values.yaml": "replicas: 1\n",
				"charts/db/templates/sts.yaml": strings.ReplaceAll(dbStatefulSet, "app.kubernetes.io/instance", "team")},
			head: map[string]string{"charts/db/values.yaml": "replicas: 2\n", "charts/db/templates/hpa.yaml": "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: {{ .Release.Name }}}\n  minReplicas: 2\n  maxReplicas: 4\n"},
			want: []want{{"StatefulSet data/db", "/spec/replicas", drift.CauseHPAReplicas, drift.FixRemoveField, "charts/db/values.yaml", 1}},
		},
		{
			name: "a kustomization's Deployment under an HPA",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n", "apps/web/deploy.yaml": deployment("  replicas: 2\n", "500m")},
			head: map[string]string{"apps/web/kustomization.yaml": "resources: [deploy.yaml, hpa.yaml]\n", "apps/web/hpa.yaml": webHPA},
			want: []want{{"Deployment shop/web", "/spec/replicas", drift.CauseHPAReplicas, drift.FixRemoveField, "apps/web/deploy.yaml", 6}},
		},
		{
			name: "an overlay whose base outside its path gets an HPA",
			base: map[string]string{"apps/web.yaml": strings.Replace(webApp, "path: apps/web", "path: overlays/prod", 1),
				"overlays/prod/kustomization.yaml": "resources: [../../base]\n", "base/kustomization.yaml": "resources: [deploy.yaml]\n",
				"base/deploy.yaml": deployment("  replicas: 2\n", "500m")},
			head: map[string]string{"base/kustomization.yaml": "resources: [deploy.yaml, hpa.yaml]\n", "base/hpa.yaml": webHPA},
			want: []want{{"Deployment shop/web", "/spec/replicas", drift.CauseHPAReplicas, drift.FixRemoveField, "base/deploy.yaml", 6}},
		},
	}
}

// baseAndCleanCases are the changes that bring nothing new: drift base
// already has (reported with All), clean changes and changes outside every
// application's sources.
func baseAndCleanCases() []kindCase {
	type want = kindWant
	return []kindCase{
		{
			name: "drift base already has is not the change's",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("  replicas: 2\n", "500m"), "apps/web/hpa.yaml": webHPA},
			head: map[string]string{"apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n"},
		},
		{
			name: "with all, drift base already has",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("  replicas: 2\n", "500m"), "apps/web/hpa.yaml": webHPA},
			head: map[string]string{"apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n"},
			all:  true,
			want: []want{{"Deployment shop/web", "/spec/replicas", drift.CauseHPAReplicas, drift.FixRemoveField, "apps/web/deploy.yaml", 6}},
		},
		{
			name: "a clean change",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m")},
			head: map[string]string{"apps/web/deploy.yaml": strings.Replace(deployment("", "250m"), "nginx:1.27", "nginx:1.28", 1)},
		},
		{
			name: "a manifest with numbers, empty values and server-set fields Argo CD does not compare",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n"},
			head: map[string]string{"apps/web/all.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {}
  creationTimestamp: null
spec:
  selector:
    matchLabels: {app: web}
  strategy: {}
  template:
    metadata:
      creationTimestamp: null
      labels: {app: web}
    spec:
      securityContext: {}
      containers:
      - name: web
        image: nginx:1.27
        env: []
        resources: {}
        ports:
        - containerPort: 80
status: {}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 80, targetPort: 80}]
  selector: {app: web}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: t, image: busybox, resources: {limits: {cpu: "0.5", memory: 128974848}}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r}
rules: []
`},
		},
		{
			name: "a change outside every application's sources",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m"), "other/x.yaml": "a: 1\n"},
			head: map[string]string{"other/x.yaml": "a: 2\n"},
		},
	}
}

func TestSameRepository(t *testing.T) {
	repos := []string{"git@github.com:Acme/Apps.git"}
	for url, want := range map[string]bool{
		"https://github.com/acme/apps":         true,
		"https://github.com/acme/apps.git":     true,
		"ssh://git@github.com/acme/apps.git":   true,
		"https://token@github.com/acme/apps/":  true,
		"https://github.com/acme/apps-infra":   false,
		"https://gitlab.example.com/acme/apps": false,
	} {
		if got := SameRepository(url, repos...); got != want {
			t.Errorf("SameRepository(%s) = %v, want %v", url, got, want)
		}
	}
	head := Revision{Name: "head", Files: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("  replicas: 2\n", "500m"), "apps/web/hpa.yaml": webHPA}}
	res, err := Run(context.Background(), Revision{Name: "base"}, head, Options{Repositories: []string{"https://git.example.com/platform.git"}})
	if err != nil || len(res.Predictions) != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "is another repository") {
		t.Errorf("another repository's application: %v %+v", err, res)
	}
	res, err = Run(context.Background(), Revision{Name: "base"}, head, Options{Repositories: []string{"https://git.example.com/shop"}})
	if err != nil || len(res.Predictions) != 1 {
		t.Errorf("this repository's application: %v %+v", err, res)
	}
}

// TestRunStopped: a run whose context is done (its budget spent) renders
// nothing more: it returns what it has, each application it did not reach
// listed as not predicted with the budget and the setting that raises it,
// and an error that carries the budget.
func TestRunStopped(t *testing.T) {
	head := Revision{Name: "head", Files: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("  replicas: 2\n", "500m"), "apps/web/hpa.yaml": webHPA}}
	budget := &BudgetError{Of: "per pull request", Budget: time.Minute, Setting: "limits.predictPerPullRequest"}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(budget)
	res, err := Run(ctx, Revision{Name: "base"}, head, Options{})
	var got *BudgetError
	if !errors.As(err, &got) || got != budget || res == nil {
		t.Fatalf("err = %v, res %+v; want the budget and a result", err, res)
	}
	if len(res.Predictions) != 0 || len(res.NotPredicted) != 1 || res.NotPredicted[0].Application != "web" ||
		!strings.Contains(res.NotPredicted[0].Reason, "limits.predictPerPullRequest") || !strings.Contains(res.NotPredicted[0].Needs, "limits.predictPerPullRequest") {
		t.Errorf("not predicted %+v", res.NotPredicted)
	}
	if res, err := Run(context.Background(), Revision{Name: "base"}, head, Options{}); err != nil || len(res.Predictions) != 1 {
		t.Errorf("the same change with time left: %v %+v", err, res)
	}
}
