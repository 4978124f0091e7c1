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
				"/spec/replicas is owned by kube-controller-manager", "kube-controller-manager writes through the scale subresource, as an autoscaler does",
				"through the scale subresource", "no HorizontalPodAutoscaler in the snapshot targets Deployment shop/web"}}},
		{"helm upgrade outside Argo CD is a person's or a pipeline's change", snap{target: webTarget(2), live: webLive(5, "helm", "Update", "")},
			want{claims: false, cause: drift.CauseManualChange}},
		{"a container named like the manager is only a claim: no fix", snap{target: webTarget(2), live: webLive(5, "replica-tuner", "Update", ""), cluster: []string{tunerDeployment}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"owned by replica-tuner",
				"Deployment tools/ops (container replica-tuner) is named like the writer (claimed"}}},
		{"client-go's default manager is the program a container runs", snap{target: webTarget(2), live: webLive(5, "tuner", "Update", ""),
			cluster: []string{replaceOnce(tunerDeployment, "image:", "command: [/usr/local/bin/tuner, --interval=1m], image:")}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{
				"container replica-tuner of Deployment tools/ops runs /usr/local/bin/tuner, and client-go names a program's writes after the base name of its path"}}},
		{"a generic client library's name that also writes status is a controller", snap{target: webTarget(2), live: replaceOnce(webLive(5, "Go-http-client", "Update", ""), "  managedFields:\n",
			"  managedFields:\n  - {manager: Go-http-client, operation: Update, subresource: status, apiVersion: apps/v1, time: \"2026-10-02T08:30:00Z\", fieldsType: FieldsV1, fieldsV1: {\"f:status\": {\"f:replicas\": {}}}}\n")},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"Go-http-client also writes this object's status"}}},
		{"a generic client library's name alone places nothing", snap{target: webTarget(2), live: webLive(5, "OpenAPI-Generator", "Update", "")},
			want{claims: false, cause: drift.CauseUnknown}},
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

// TestControllerWriteThroughStatus: a write through the status subresource
// owns the metadata it changes too: the Deployment controller numbers a
// rollout in its revision annotation through the status subresource, and
// managedFields record the annotation under that entry.
func TestControllerWriteThroughStatus(t *testing.T) {
	deployment := func(revision, managedFields string) string {
		return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations: {deployment.kubernetes.io/revision: %q}
  managedFields: [%s]
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "registry.example.com/web:1.0"}]}
`, revision, managedFields)
	}
	const path = "/metadata/annotations/deployment.kubernetes.io~1revision"
	entry := func(manager string) string {
		return `{manager: ` + manager + `, operation: Update, subresource: status, apiVersion: apps/v1, time: "2026-10-02T08:30:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}}, "f:status": {"f:replicas": {}}}}`
	}
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"the Deployment controller's revision through the status subresource", snap{target: deployment("1", ""), live: deployment("2", entry("kube-controller-manager"))},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseControllerWrite, evidence: []string{
				"owned by kube-controller-manager (Update, status subresource", "the Deployment controller numbers rollouts in this annotation"}}},
		{"another manager's status update owning the annotation writes status: a controller, but no rule grants it the field", snap{target: deployment("1", ""), live: deployment("2", entry("rollout-numberer"))},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"rollout-numberer also writes this object's status"}}},
		{"a person's status update is a person's", snap{target: deployment("1", ""), live: deployment("2", entry("kubectl-edit"))},
			want{claims: false, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.ControllerWrite, tt.s, path, tt.want)
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
				"field manager name of cert-manager's cainjector", "the writer catalog documents cainjector as the owner of", "annotation cert-manager.io/inject-ca-from: policy-system/policy-tls asks cainjector",
				`Git declares "T0xE"; the controller keeps writing (not shown: a 4-byte string another writer put there`}}},
		{"a CA bundle written by an unknown manager is still the webhook's", snap{target: injected("T0xE", "", false),
			live: replaceOnce(injected("TkVX", "", true), "manager: cainjector", "manager: policy-server")}, ca,
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseControllerWrite, evidence: []string{"owned by policy-server", "a caBundle is written, by design"}}},
		{"the operator of a child object", snap{target: flags("", "", `BETA: "false"`, ""), live: ownedFlags(`"true"`, "flagset-operator")}, "/data/BETA",
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{
				"owned by flagset-operator", "the object names FlagSet flags its controller (ownerReferences, controller: true) (claimed"}}},
		{"a person edits a child object", snap{target: flags("", "", `BETA: "false"`, ""), live: ownedFlags(`"true"`, "kubectl-edit")}, "/data/BETA",
			want{claims: false, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.ControllerWrite, tt.s, tt.path, tt.want)
		})
	}
}

// rollout is an Argo Rollout that takes over Deployment shop/web through its
// workloadRef; rollouts-controller writes its status.
const rollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
  namespace: shop
  managedFields:
  - {manager: rollouts-controller, operation: Update, subresource: status, apiVersion: argoproj.io/v1alpha1, time: "2026-10-02T08:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:status": {"f:phase": {}}}}
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}
`

// TestWriterEvidence: each general rule that shows a writer to be a
// controller, and the policy's writers, which alone (with the catalog) let a
// fix hand the field over.
func TestWriterEvidence(t *testing.T) {
	certs := replaceOnce(webLive(5, "webhook-server", "Update", ""), "  managedFields:\n",
		"  managedFields:\n  - {manager: webhook-server, operation: Update, apiVersion: apps/v1, time: \"2026-10-02T08:00:00Z\", fieldsType: FieldsV1, fieldsV1: {\"f:metadata\": {\"f:annotations\": {\"f:tls.crt\": {}}}}}\n")
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"the manager also writes certificate material of the object", snap{target: webTarget(2), live: certs},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"webhook-server also writes certificate material of this object"}}},
		{"the manager keeps an object that references this one", snap{target: webTarget(2), live: webLive(5, "rollouts-controller", "Update", ""), cluster: []string{rollout}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{
				"rollouts-controller writes the status of Rollout shop/web, whose spec.workloadRef names this object"}}},
		{"the policy names a controller that owns the path: the fix hands it over", snap{target: webTarget(2), live: webLive(5, "acme-operator", "Update", ""),
			writers: []drift.Writer{{Manager: "acme-*", Is: drift.WriterController, Policy: true, Source: "policy.writers[0], line 4",
				Owns: []drift.OwnedPath{{Kinds: []string{"apps/Deployment"}, Path: drift.MustPointer("/spec/replicas"), Text: "apps/Deployment:/spec/replicas"}}}}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseControllerWrite, evidence: []string{
				"the policy's writers place acme-operator as a controller (policy.writers[0], line 4)",
				"it may keep the field: the policy's writers say acme-operator owns apps/Deployment:/spec/replicas"}}},
		{"the policy names a controller that owns other paths: no fix", snap{target: webTarget(2), live: webLive(5, "acme-operator", "Update", ""),
			writers: []drift.Writer{{Manager: "acme-operator", Is: drift.WriterController, Policy: true, Source: "policy.writers[0], line 4",
				Owns: []drift.OwnedPath{{Path: drift.MustPointer("/spec/paused"), Text: "/spec/paused"}}}}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite}},
		{"the policy names a person: a manual change", snap{target: webTarget(2), live: webLive(5, "release-bot", "Update", ""),
			writers: []drift.Writer{{Manager: "release-bot", Is: drift.WriterPerson, Policy: true, Source: "policy.writers[0], line 4"}}},
			want{claims: false, cause: drift.CauseManualChange}},
		{"the policy places a name the catalog calls a client", snap{target: webTarget(2), live: webLive(5, "OpenAPI-Generator", "Update", ""),
			writers: []drift.Writer{{Manager: "OpenAPI-Generator", Is: drift.WriterController, Policy: true, Source: "policy.writers[0], line 4"}}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.ControllerWrite, tt.s, "/spec/replicas", tt.want)
		})
	}
}
