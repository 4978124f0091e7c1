package remediations

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

func snap(t *testing.T, extra string) *drift.Snapshot {
	t.Helper()
	s, err := drift.ParseSnapshot([]byte(`apiVersion: driftfix/v1
kind: Snapshot
application:
  apiVersion: argoproj.io/v1alpha1
  kind: Application
  metadata: {name: web, namespace: argocd}
  spec: {source: {repoURL: r, path: apps/web}}
resources:
- target:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: shop}
    spec: {template: {spec: {containers: [{name: web, image: "x:1", securityContext: {privileged: false}}]}}}
` + extra))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSafetyPolicyRefusesSensitiveIgnores(t *testing.T) {
	s := snap(t, "")
	ref := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	for _, p := range []string{
		"/spec/template/spec/containers/0/image",
		"/spec/template/spec/containers/0/securityContext/privileged",
		"/spec/template/spec/containers/0/securityContext/capabilities/add",
		"/spec/template/spec/hostNetwork",
		"/spec/template/spec/hostPID",
		"/spec/template/spec/volumes/0/hostPath",
		"/spec/template/spec/serviceAccountName",
		"/spec/template/spec/containers",
		"/spec/template",
	} {
		f := drift.Finding{Resource: ref, Path: drift.MustPointer(p), Cause: drift.CauseWebhookMutation,
			Remediation: drift.Remediation{Kind: drift.FixIgnoreDifference}}
		Suggest(s, RepoFromSnapshot(s), drift.Sensitivity{}, &f)
		if f.Remediation.Kind != drift.FixNone || !strings.Contains(f.Remediation.Reason, "never ignores") {
			t.Errorf("%s: remediation %+v, want none with a reason", p, f.Remediation)
		}
	}
	for _, tc := range []struct{ group, kind, path string }{
		{"rbac.authorization.k8s.io", "ClusterRole", "/rules"}, {"rbac.authorization.k8s.io", "Role", "/rules/0/verbs"},
		{"rbac.authorization.k8s.io", "RoleBinding", "/subjects"},
		{"admissionregistration.k8s.io", "MutatingWebhookConfiguration", "/webhooks/0/clientConfig/caBundle"},
	} {
		f := drift.Finding{Resource: drift.Ref{Group: tc.group, Kind: tc.kind, Name: "n"}, Path: drift.MustPointer(tc.path),
			Cause: drift.CauseControllerWrite, Remediation: drift.Remediation{Kind: drift.FixIgnoreDifference}}
		Suggest(s, RepoFromSnapshot(s), drift.Sensitivity{}, &f)
		if f.Remediation.Kind != drift.FixNone {
			t.Errorf("%s %s: an ignore was allowed", tc.kind, tc.path)
		}
	}
	ok := drift.Finding{Resource: ref, Path: drift.MustPointer("/spec/template/metadata/annotations/sidecar.istio.io~1status"),
		Cause: drift.CauseWebhookMutation, Remediation: drift.Remediation{Kind: drift.FixIgnoreDifference, Grant: "the istio-sidecar-injector webhook admits it"}}
	Suggest(s, RepoFromSnapshot(s), drift.Sensitivity{}, &ok)
	if ok.Remediation.Kind != drift.FixIgnoreDifference {
		t.Errorf("an injected annotation may be ignored, got %+v", ok.Remediation)
	}
	ungranted := drift.Finding{Resource: ref, Path: drift.MustPointer("/spec/template/metadata/annotations/sidecar.istio.io~1status"),
		Cause: drift.CauseWebhookMutation, Remediation: drift.Remediation{Kind: drift.FixIgnoreDifference}}
	Suggest(s, RepoFromSnapshot(s), drift.Sensitivity{}, &ungranted)
	if ungranted.Remediation.Kind != drift.FixNone || !strings.Contains(ungranted.Remediation.Reason, "no rule says a writer legitimately owns it") {
		t.Errorf("an ignore no rule grants must be refused, got %+v", ungranted.Remediation)
	}
	manual := drift.Finding{Resource: ref, Path: drift.MustPointer("/spec/replicas"), Cause: drift.CauseManualChange,
		Remediation: drift.Remediation{Kind: drift.FixRemoveField}}
	Suggest(s, RepoFromSnapshot(s), drift.Sensitivity{}, &manual)
	if manual.Remediation.Kind != drift.FixNone {
		t.Errorf("a manual change must never be fixed, got %+v", manual.Remediation)
	}
}

func TestLocate(t *testing.T) {
	s := snap(t, `repo:
  files:
    apps/web/all.yaml: |
      apiVersion: v1
      kind: Service
      metadata: {name: web}
      ---
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: web
    apps/other/deploy.yaml: |
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
    argocd/apps/web.yaml: |
      apiVersion: argoproj.io/v1alpha1
      kind: Application
      metadata: {name: web, namespace: argocd}
`)
	ref := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	if got := Locate(s, RepoFromSnapshot(s), ref, drift.FixRemoveField); got != "apps/web/all.yaml" {
		t.Errorf("remove-field file = %q, want the multi-document file under the source path", got)
	}
	if got := Locate(s, RepoFromSnapshot(s), ref, drift.FixIgnoreDifference); got != "argocd/apps/web.yaml" {
		t.Errorf("ignore-difference file = %q, want the Application manifest", got)
	}
	if got := Locate(s, RepoFromSnapshot(s), ref, drift.FixNone); got != "" {
		t.Errorf("no fix has no file, got %q", got)
	}
	if got := Locate(s, RepoFromSnapshot(s), drift.Ref{Kind: "ConfigMap", Name: "nope"}, drift.FixSetValue); got != "" {
		t.Errorf("an unknown resource must not be located, got %q", got)
	}
}
