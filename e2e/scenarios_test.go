//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/drift"
)

func outOfSync(a argocd.AppSummary) bool {
	return a.SyncStatus == "OutOfSync" && a.OperationPhase == "Succeeded"
}

// TestControllerWrite: a controller server-side-applies caBundle as
// cert-manager-cainjector into a webhook configuration whose manifest declares it empty.
func TestControllerWrite(t *testing.T) {
	s := newStack(t)
	vwc := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: e2e-payments
  annotations:
    cert-manager.io/inject-ca-from: e2e-controller/payments-tls
webhooks:
  - name: validate.payments.example.com
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Ignore
    clientConfig:
      caBundle: Y2VydC1tYW5hZ2VyIGZpbGxzIHRoaXMgaW4K   # placeholder: cainjector fills it in
      url: https://127.0.0.1:9999/validate
    rules:
      - {apiGroups: ["payments.example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["payments"]}
`
	repo := gitRepo(t, map[string]string{"app/vwc.yaml": vwc})
	s.application(t, "e2e-controller", repo, "app", "e2e-controller", "")
	t.Cleanup(func() {
		s.kubectl(t, "", "delete", "validatingwebhookconfiguration", "e2e-payments", "--ignore-not-found")
	})
	// As cainjector does: a patch of caBundle alone, as its own field manager.
	s.cainjectorWrites(t, "e2e-payments", "validate.payments.example.com")
	s.waitFor(t, "e2e-controller", outOfSync, "OutOfSync after cainjector wrote caBundle")
	rep := s.diagnose(t, "e2e-controller")
	expectFinding(t, rep, "ValidatingWebhookConfiguration", "/webhooks/0/clientConfig/caBundle", drift.CauseControllerWrite)
}

// cainjectorWrites writes a webhook's caBundle as cert-manager-cainjector
// does: a patch of that field alone, under its own field manager.
func (s *stack) cainjectorWrites(t *testing.T, config, webhook string) {
	t.Helper()
	s.kubectl(t, "", "patch", "validatingwebhookconfiguration", config, "--type=strategic", "--field-manager=cert-manager-cainjector",
		"-p", fmt.Sprintf(`{"webhooks":[{"name":%q,"clientConfig":{"caBundle":%q}}]}`, webhook, s.caBundle(t)))
}

// TestNormalizedPruning: Git sets a field the CRD's structural schema does
// not declare (pruned) and an empty labels map (dropped); the API server also
// fills a schema default, which is not drift.
func TestNormalizedPruning(t *testing.T) {
	s := newStack(t)
	s.kubectl(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.e2e.example.com}
spec:
  group: e2e.example.com
  names: {kind: Widget, plural: widgets, singular: widget}
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
              mode: {type: string}
              size: {type: integer, default: 1}
              limits:
                type: object
                additionalProperties: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
`, "apply", "-f", "-")
	s.waitEstablished(t, "widgets.e2e.example.com")
	repo := gitRepo(t, map[string]string{"app/widget.yaml": "apiVersion: e2e.example.com/v1\nkind: Widget\nmetadata:\n  name: blue\n  labels: {}\nspec:\n  mode: fast\n  color: blue   # not in the schema\n  limits: {cpu: 1000m, memory: 1024Mi}\n"})
	s.kubectl(t, "", "delete", "namespace", "e2e-normalized", "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "create", "namespace", "e2e-normalized")
	s.applicationIn(t, "e2e-normalized", repo, "app", "e2e-normalized", "", false)
	s.waitFor(t, "e2e-normalized", outOfSync, "OutOfSync after the API server pruned spec.color")
	rep := s.diagnose(t, "e2e-normalized")
	expectFinding(t, rep, "Widget", "/spec/color", drift.CauseNormalized)
	expectFinding(t, rep, "Widget", "/metadata/labels", drift.CauseNormalized)
	// A custom resource keeps quantity strings as written: without a
	// conversion or mutating webhook nothing canonicalizes 1000m.
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Path.String(), "/spec/limits") {
			t.Errorf("the API server rewrote %s: %v -> %v", f.Path, f.Git, f.Live)
		}
	}
}

// TestNondeterministicRender: a chart renders a random token; a hard refresh
// re-renders it and the application goes OutOfSync on the same revision.
func TestNondeterministicRender(t *testing.T) {
	s := newStack(t)
	repo := gitRepo(t, map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: tokens\nversion: 0.1.0\n",
		"chart/values.yaml":       "{}\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tokens\ndata:\n  session-salt: {{ randAlphaNum 16 | quote }}\n",
	})
	s.application(t, "e2e-render", repo, "chart", "e2e-render", "")
	s.kubectl(t, "", "-n", "argocd", "annotate", "application", "e2e-render", "argocd.argoproj.io/refresh=hard", "--overwrite")
	s.waitFor(t, "e2e-render", outOfSync, "OutOfSync after a hard refresh re-rendered the chart")
	rep := s.diagnoseWith(t, "e2e-render", true)
	expectFinding(t, rep, "ConfigMap", "/data/session-salt", drift.CauseNondeterministicRender)
}

// TestTrackingClash: label tracking, and a legacy `helm upgrade` (manager helm)
// writes the chart's own instance label back.
func TestTrackingClash(t *testing.T) {
	s := newStack(t)
	s.kubectl(t, "", "-n", "argocd", "patch", "configmap", "argocd-cm", "--type", "merge", "-p", `{"data":{"application.resourceTrackingMethod":"label"}}`)
	t.Cleanup(func() {
		s.kubectl(t, "", "-n", "argocd", "patch", "configmap", "argocd-cm", "--type", "json", "-p", `[{"op":"remove","path":"/data/application.resourceTrackingMethod"}]`)
	})
	time.Sleep(2 * time.Second) // the controller watches argocd-cm
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: billing\n  labels:\n    app.kubernetes.io/instance: billing-prod\ndata:\n  currency: EUR\n"
	repo := gitRepo(t, map[string]string{"app/cm.yaml": cm})
	s.application(t, "e2e-tracking", repo, "app", "e2e-tracking", "")
	s.kubectl(t, "", "-n", "e2e-tracking", "label", "configmap", "billing", "app.kubernetes.io/instance=billing-prod", "--overwrite", "--field-manager=helm")
	s.waitFor(t, "e2e-tracking", outOfSync, "OutOfSync after helm wrote its instance label")
	rep := s.diagnose(t, "e2e-tracking")
	expectFinding(t, rep, "ConfigMap", "/metadata/labels/app.kubernetes.io~1instance", drift.CauseTrackingClash)
}

// TestBroadIgnore: a rule ignoring every container of every Deployment hides a
// kubectl edit that makes a container privileged. Argo CD stays Synced;
// driftfix reports the rule and the change it hides.
func TestBroadIgnore(t *testing.T) {
	s := newStack(t)
	dep := strings.Replace(deployment, "          resources:\n", "          securityContext:\n            privileged: false\n          resources:\n", 1)
	repo := gitRepo(t, map[string]string{"app/deployment.yaml": dep})
	s.application(t, "e2e-broad", repo, "app", "e2e-broad",
		"  ignoreDifferences: [{group: apps, kind: Deployment, jsonPointers: [/spec/template/spec/containers]}]\n")
	s.kubectl(t, "", "-n", "e2e-broad", "patch", "deployment", "web", "--field-manager=kubectl-edit", "--type", "strategic", "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"web","securityContext":{"privileged":true}}]}}}}`)
	time.Sleep(3 * time.Second)
	s.waitFor(t, "e2e-broad", func(a argocd.AppSummary) bool { return a.SyncStatus == "Synced" }, "Synced: the rule hides the edit")
	rep := s.diagnose(t, "e2e-broad")
	expectFinding(t, rep, "Application", "/spec/ignoreDifferences/0", drift.CauseBroadIgnore)
	expectFinding(t, rep, "Deployment", "/spec/template/spec/containers/0/securityContext/privileged", drift.CauseManualChange)
}

// TestEmptyCABundle: Git declares caBundle: "" and a controller fills it in
// (fixture 04's case). Argo CD reports OutOfSync; every sync blanks the bundle.
func TestEmptyCABundle(t *testing.T) {
	s := newStack(t)
	vwc := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: e2e-empty-ca
webhooks:
  - name: validate.empty.example.com
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Ignore
    clientConfig:
      caBundle: ""
      url: https://127.0.0.1:9999/validate
    rules:
      - {apiGroups: ["empty.example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["things"]}
`
	repo := gitRepo(t, map[string]string{"app/vwc.yaml": vwc})
	s.application(t, "e2e-empty-ca", repo, "app", "e2e-empty-ca", "")
	t.Cleanup(func() {
		s.kubectl(t, "", "delete", "validatingwebhookconfiguration", "e2e-empty-ca", "--ignore-not-found")
	})
	s.cainjectorWrites(t, "e2e-empty-ca", "validate.empty.example.com")
	s.waitFor(t, "e2e-empty-ca", outOfSync, "OutOfSync after cainjector filled the empty caBundle")
	rep := s.diagnose(t, "e2e-empty-ca")
	expectFinding(t, rep, "ValidatingWebhookConfiguration", "/webhooks/0/clientConfig/caBundle", drift.CauseControllerWrite)
}
