//go:build e2e

// Package e2e runs driftfix against the real stack in e2e/stack (kube-apiserver,
// kube-controller-manager and Argo CD 3.6.1): each scenario deploys an
// Application from a local Git repository, makes it drift the real way, waits
// for Argo CD to report it, and checks what driftfix diagnoses. Run inside the
// stack's network namespace:
//
//	e2e/stack/up.sh && ip netns exec driftfix-e2e go test -tags e2e ./e2e/
package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/kube"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

var updateReal = flag.Bool("update-real", false, "save each scenario's snapshot under testdata/real/")

const argoURL = "http://127.0.0.1:8080"

type stack struct {
	root, kubeconfig, token string
	argo                    *argocd.Client
	last                    *drift.Snapshot // the last snapshot diagnosed
}

func newStack(t *testing.T) *stack {
	t.Helper()
	root, _ := filepath.Abs("stack")
	s := &stack{root: root, kubeconfig: filepath.Join(root, "run", "kubeconfig")}
	tok, err := os.ReadFile(filepath.Join(root, "run", "argocd-token"))
	if err != nil {
		t.Fatalf("the stack is not up (run e2e/stack/up.sh): %v", err)
	}
	s.token = string(tok)
	if s.argo, err = argocd.New(argocd.Config{BaseURL: argoURL, Token: s.token, Timeout: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitEstablished waits for a CRD to be served; kubectl wait fails rather
// than waits while a new CRD has no status yet, so it is retried.
func (s *stack) waitEstablished(t *testing.T, crd string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		cmd := exec.Command(filepath.Join(s.root, "bin", "kubectl"), "--kubeconfig", s.kubeconfig, "wait", "--for=condition=Established", "--timeout=20s", "crd/"+crd)
		if cmd.Run() == nil {
			return
		}
	}
	t.Fatalf("CustomResourceDefinition %s was never Established", crd)
}

func (s *stack) kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(s.root, "bin", "kubectl"), append([]string{"--kubeconfig", s.kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// gitRepo makes a bare repository served to Argo CD as file://, with files committed on main.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	work, bare := filepath.Join(dir, "work"), filepath.Join(dir, "repo.git")
	run := func(d string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = d
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(work, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(work, "init", "-q", "-b", "main")
	run(work, "add", ".")
	run(work, "commit", "-q", "-m", "scenario")
	run(dir, "clone", "-q", "--bare", work, bare)
	return "file://" + bare
}

// application creates a namespace and an auto-syncing Application in it, and
// waits until Argo CD reports it Synced after a successful sync.
func (s *stack) application(t *testing.T, name, repo, path, namespace, extraSpec string) {
	t.Helper()
	s.kubectl(t, "", "-n", "argocd", "delete", "application", name, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "delete", "namespace", namespace, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "create", "namespace", namespace)
	s.applicationIn(t, name, repo, path, namespace, extraSpec, true)
}

// applicationIn creates the Application in an existing namespace; with
// waitSynced it waits for Synced after a successful sync.
func (s *stack) applicationIn(t *testing.T, name, repo, path, namespace, extraSpec string, waitSynced bool) {
	t.Helper()
	s.kubectl(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s, namespace: argocd}
spec:
  project: default
  source: {repoURL: %q, path: %s, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy: {automated: {prune: true}}
%s`, name, repo, path, namespace, extraSpec), "apply", "-f", "-")
	t.Cleanup(func() {
		s.kubectl(t, "", "-n", "argocd", "delete", "application", name, "--ignore-not-found", "--timeout=60s")
		s.kubectl(t, "", "delete", "namespace", namespace, "--ignore-not-found", "--timeout=60s")
	})
	if waitSynced {
		s.waitFor(t, name, func(a argocd.AppSummary) bool { return a.SyncStatus == "Synced" && a.OperationPhase == "Succeeded" }, "Synced after a successful sync")
	}
}

func (s *stack) waitFor(t *testing.T, name string, ok func(argocd.AppSummary) bool, what string) argocd.AppSummary {
	t.Helper()
	var last argocd.AppSummary
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		apps, err := s.argo.ListApplications(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range apps {
			if a.Name == name {
				last = a
				if ok(a) {
					return a
				}
			}
		}
	}
	t.Fatalf("Argo CD never reported %s as %s (last: sync %s, operation %s)", name, what, last.SyncStatus, last.OperationPhase)
	return last
}

// diagnose snapshots the application through argocd-server and the API server,
// saves it when asked, and returns driftfix's findings.
func (s *stack) diagnose(t *testing.T, name string) *drift.Report {
	t.Helper()
	return s.diagnoseWith(t, name, false)
}

func (s *stack) diagnoseWith(t *testing.T, name string, renders bool) *drift.Report {
	t.Helper()
	ctx := context.Background()
	settings, err := s.argo.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.argo.Snapshot(ctx, "argocd", name, argocd.SnapshotOptions{Settings: &settings, Renders: renders})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := kube.RESTConfig(kube.Config{Kubeconfig: s.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kube.Read(ctx, rc, kube.Config{})
	if err != nil {
		t.Fatal(err)
	}
	collect.AddClusterContext(snap, cl.For(snap))
	src := drift.Sources(snap.Application)[0]
	if snap.Repo.Files, err = gitrepo.Files(ctx, src.RepoURL, drift.Str(snap.Application, "status", "sync", "revision"), gitrepo.Limits{}); err != nil {
		t.Fatal(err)
	}
	s.last = snap
	if *updateReal {
		raw, err := json.MarshalIndent(snap, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "testdata", "real", name+".json"), append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := pipeline.Diagnose(snap, drift.Sensitivity{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// diagnoseUntil diagnoses until at least n findings show (Argo CD reconciles
// each change on its own), for up to a minute.
func (s *stack) diagnoseUntil(t *testing.T, name string, n int) *drift.Report {
	t.Helper()
	var rep *drift.Report
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if rep = s.diagnose(t, name); len(rep.Findings) >= n {
			break
		}
	}
	return rep
}

func expectFinding(t *testing.T, rep *drift.Report, kind, path string, cause drift.Cause) {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Resource.Kind == kind && f.Path.String() == path {
			if f.Cause != cause {
				t.Errorf("%s %s: cause %s, want %s; evidence %q", kind, path, f.Cause, cause, f.Evidence)
			}
			return
		}
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Resource.Kind+" "+f.Path.String()+" "+string(f.Cause))
	}
	t.Errorf("no finding at %s %s; findings: %q", kind, path, got)
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1.0.0
          resources:
            requests: {cpu: 100m}
`

func TestManualScale(t *testing.T) {
	s := newStack(t)
	repo := gitRepo(t, map[string]string{"app/deployment.yaml": deployment})
	s.application(t, "e2e-manual", repo, "app", "e2e-manual", "")
	s.kubectl(t, "", "-n", "e2e-manual", "scale", "deployment/web", "--replicas=5")
	// What kubectl edit sends: a patch under the kubectl-edit field manager.
	s.kubectl(t, "", "-n", "e2e-manual", "patch", "deployment", "web", "--field-manager=kubectl-edit", "--type=strategic",
		"-p", `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.example.com/web:1.0.1-hotfix"}]}}}}`)
	s.waitFor(t, "e2e-manual", func(a argocd.AppSummary) bool { return a.SyncStatus == "OutOfSync" }, "OutOfSync after kubectl scale and edit")
	rep := s.diagnoseUntil(t, "e2e-manual", 2) // Argo CD may not have seen the second change yet
	expectFinding(t, rep, "Deployment", "/spec/replicas", drift.CauseManualChange)
	expectFinding(t, rep, "Deployment", "/spec/template/spec/containers/0/image", drift.CauseManualChange)
}

func TestHPAReplicas(t *testing.T) {
	s := newStack(t)
	s.hpaDrift(t, "e2e-hpa", gitRepo(t, hpaApp))
	rep := s.diagnose(t, "e2e-hpa")
	expectFinding(t, rep, "Deployment", "/spec/replicas", drift.CauseHPAReplicas)
	// The fix, planned from the repository Argo CD reads, removes replicas and verifies.
	_, plans, err := pipeline.Fix(s.last, remediations.RepoFromSnapshot(s.last), drift.Sensitivity{}, time.Now(), render.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || plans[0].Kind != drift.FixRemoveField || plans[0].Verification == "" || len(plans[0].Edits) != 1 ||
		plans[0].Edits[0].File != "app/deployment.yaml" || strings.Contains(string(plans[0].Edits[0].After), "replicas") {
		t.Fatalf("plans: %+v", plans)
	}
}

func (s *stack) caBundle(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.root, "run", "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func (s *stack) mutatingWebhook(t *testing.T, name, url, namespaceLabel string) {
	t.Helper()
	s.kubectl(t, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: %s}
webhooks:
- name: %s.e2e.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  clientConfig: {url: %q, caBundle: %s}
  namespaceSelector: {matchLabels: {%s: enabled}}
  rules:
  - {apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments"], operations: ["CREATE", "UPDATE"]}
`, name, name, url, s.caBundle(t), namespaceLabel), "apply", "-f", "-")
	t.Cleanup(func() { s.kubectl(t, "", "delete", "mutatingwebhookconfiguration", name, "--ignore-not-found") })
}

// webhookNamespace makes namespace ns afresh, labelled label=enabled, and a
// mutating webhook at url that admits Deployments there.
func (s *stack) webhookNamespace(t *testing.T, ns, label, webhook, url string) {
	t.Helper()
	s.kubectl(t, "", "delete", "namespace", ns, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "create", "namespace", ns)
	s.kubectl(t, "", "label", "namespace", ns, label+"=enabled")
	s.mutatingWebhook(t, webhook, url, label)
}

// TestWebhookOverwritesGitField: a webhook replaces the cpu limit Git sets.
// Argo CD reports OutOfSync; the field stays owned by argocd-controller.
func TestWebhookOverwritesGitField(t *testing.T) {
	s := newStack(t)
	startWebhook(t, s, "127.0.0.1:9444", "2")
	ns := "e2e-webhook-cpu"
	s.webhookNamespace(t, ns, "cpu-policy", "e2e-cpu", "https://127.0.0.1:9444/mutate")
	dep := strings.Replace(deployment, "            requests: {cpu: 100m}\n", "            requests: {cpu: 100m}\n            limits: {cpu: 500m}\n", 1)
	repo := gitRepo(t, map[string]string{"app/deployment.yaml": dep})
	s.applicationIn(t, "e2e-webhook-cpu", repo, "app", ns, "", false)
	s.waitFor(t, "e2e-webhook-cpu", func(a argocd.AppSummary) bool { return a.SyncStatus == "OutOfSync" && a.OperationPhase == "Succeeded" }, "OutOfSync after a successful sync")
	rep := s.diagnose(t, "e2e-webhook-cpu")
	expectFinding(t, rep, "Deployment", "/spec/template/spec/containers/0/resources/limits/cpu", drift.CauseWebhookMutation)
}

// TestWebhookInjection: a webhook adds a label and a sidecar Git does not
// declare. Argo CD's diff keeps fields only live has, so it reports Synced,
// and driftfix reports nothing either.
func TestWebhookInjection(t *testing.T) {
	s := newStack(t)
	startWebhook(t, s, "127.0.0.1:9443", "")
	ns := "e2e-webhook-sidecar"
	s.webhookNamespace(t, ns, "sidecars", "e2e-sidecar", "https://127.0.0.1:9443/mutate")
	repo := gitRepo(t, map[string]string{"app/deployment.yaml": deployment})
	s.applicationIn(t, "e2e-webhook-sidecar", repo, "app", ns, "", true)
	live := s.kubectl(t, "", "-n", ns, "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[*].name}")
	if !strings.Contains(live, "injected-sidecar") {
		t.Fatalf("the webhook did not inject its sidecar: containers %q", live)
	}
	rep := s.diagnose(t, "e2e-webhook-sidecar")
	if len(rep.Findings) != 0 {
		t.Errorf("Argo CD reports Synced, but driftfix found %d differences: %+v", len(rep.Findings), rep.Findings)
	}
}
