package classifiers_test

import (
	"fmt"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

const tunerDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ops, namespace: tools}
spec:
  template:
    spec: {containers: [{name: replica-tuner, image: "registry.example.com/tuner:3"}]}
`

func TestControllerWrite(t *testing.T) {
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"a built-in scaler without a collected HPA", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale")},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{
				"/spec/replicas is owned by kube-controller-manager", "a built-in Kubernetes controller writes it",
				"through the scale subresource", "no HorizontalPodAutoscaler in the snapshot targets Deployment shop/web"}}},
		{"helm upgrade outside Argo CD", snap{target: webTarget(2), live: webLive(5, "helm", "Update", "")},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseControllerWrite, evidence: []string{"owned by helm", "Helm writes it on `helm upgrade`", "Git declares 2"}}},
		{"a manager that runs as a container in the cluster", snap{target: webTarget(2), live: webLive(5, "replica-tuner", "Update", ""), cluster: []string{tunerDeployment}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseControllerWrite, evidence: []string{"owned by replica-tuner", "Deployment tools/ops (container replica-tuner) runs in the cluster under that name"}}},
		{"a manager nothing shows to be a controller", snap{target: webTarget(2), live: webLive(5, "replica-tuner", "Update", "")},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a known name outside the fields it writes", snap{target: webTarget(2), live: webLive(5, "cainjector", "Update", "")},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a person's kubectl", snap{target: webTarget(2), live: webLive(5, "kubectl-edit", "Update", "")},
			want{claims: false, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.ControllerWrite, tt.s, "/spec/replicas", tt.want)
		})
	}
}

// injected is MutatingWebhookConfiguration policy-mutator with a CA bundle;
// live, cainjector has written it.
func injected(caBundle, annotations string, live bool) string {
	mf, ca := "", fmt.Sprintf(", caBundle: %s", caBundle)
	if live {
		mf = `, managedFields: [{manager: argocd-controller, operation: Apply, apiVersion: admissionregistration.k8s.io/v1, time: "2026-09-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:webhooks": {"k:{\"name\":\"team.policy.example.com\"}": {".": {}, "f:name": {}, "f:clientConfig": {"f:service": {}}}}}},
  {manager: cainjector, operation: Update, apiVersion: admissionregistration.k8s.io/v1, time: "2026-09-01T00:00:05Z", fieldsType: FieldsV1, fieldsV1: {"f:webhooks": {"k:{\"name\":\"team.policy.example.com\"}": {"f:clientConfig": {"f:caBundle": {}}}}}}]`
	}
	return fmt.Sprintf(`{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: policy-mutator, annotations: {%s}%s},
  webhooks: [{name: team.policy.example.com, admissionReviewVersions: [v1], sideEffects: None, clientConfig: {service: {name: policy, namespace: policy-system, path: /mutate}%s}}]}`, annotations, mf, ca)
}

// ownedFlags is ConfigMap shop/flags with a controller ownerReference (a child
// an operator keeps) whose BETA a manager wrote.
func ownedFlags(beta, manager string) string {
	refs := `ownerReferences: [{apiVersion: example.com/v1, kind: FlagSet, name: flags, uid: 6d1f, controller: true}]`
	return fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: flags, namespace: shop, %s, managedFields: [%s, {manager: %s, operation: Update, apiVersion: v1, time: "2026-09-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:BETA": {}}}}]}, data: {BETA: %s}}`, refs, argoOwnsFlags, manager, beta)
}

func TestControllerWriteEvidence(t *testing.T) {
	const ca = "/webhooks/0/clientConfig/caBundle"
	tests := []struct {
		name string
		s    snap
		path string
		want want
	}{
		{"cainjector rotates the CA bundle Git copied", snap{target: injected("T0xE", `cert-manager.io/inject-ca-from: policy-system/policy-tls`, false),
			live: injected("TkVX", `cert-manager.io/inject-ca-from: policy-system/policy-tls`, true)}, ca,
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseControllerWrite, evidence: []string{
				"cert-manager's cainjector injects the CA bundle", "annotation cert-manager.io/inject-ca-from: policy-system/policy-tls asks cainjector",
				`Git declares "T0xE"; the controller keeps writing "TkVX"`}}},
		{"a CA bundle written by an unknown manager is still the webhook's", snap{target: injected("T0xE", "", false),
			live: replaceOnce(injected("TkVX", "", true), "manager: cainjector", "manager: policy-server")}, ca,
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseControllerWrite, evidence: []string{"owned by policy-server", "a webhook's caBundle is written, by design"}}},
		{"the operator of a child object", snap{target: flags("", "", `BETA: "false"`, ""), live: ownedFlags(`"true"`, "flagset-operator")}, "/data/BETA",
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseControllerWrite, evidence: []string{
				"owned by flagset-operator", "the object is a child of FlagSet flags (ownerReferences, controller: true)"}}},
		{"a person edits a child object", snap{target: flags("", "", `BETA: "false"`, ""), live: ownedFlags(`"true"`, "kubectl-edit")}, "/data/BETA",
			want{claims: false, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.ControllerWrite, tt.s, tt.path, tt.want)
		})
	}
}
