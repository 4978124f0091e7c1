package classifiers_test

import (
	"fmt"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// webTarget is Deployment shop/web as Git declares it, with replicas.
func webTarget(replicas int) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "registry.example.com/web:1.0"}]}
`, replicas)
}

// webLive is Deployment shop/web live with replicas and one more field
// manager (besides argocd-controller) that owns spec.replicas: manager,
// operation, subresource; none when manager is "".
func webLive(replicas int, manager, op, sub string) string {
	extra := ""
	if manager != "" {
		extra = fmt.Sprintf(`
  - manager: %s
    operation: %s
    subresource: %q
    apiVersion: apps/v1
    time: "2026-10-02T08:30:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:replicas": {}}}`, manager, op, sub)
	}
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: apps/v1
    time: "2026-10-01T10:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:selector": {}, "f:template": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}%s
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "registry.example.com/web:1.0"}]}
`, extra, replicas)
}

func hpa(name, kind, target string) string {
	return fmt.Sprintf(`
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: %s, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: %s, name: %s}
  minReplicas: 2
  maxReplicas: 10
status: {currentReplicas: 5}
`, name, kind, target)
}

func TestHPAReplicas(t *testing.T) {
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"an HPA scales the Deployment", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"), inGit: []string{hpa("web-hpa", "Deployment", "web")}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseHPAReplicas, evidence: []string{
				"HorizontalPodAutoscaler shop/web-hpa targets this Deployment", "minReplicas 2, maxReplicas 10, currently 5",
				"Git declares replicas: 2, the live object has 5", "kube-controller-manager"}}},
		{"the scale subresource is written but no HPA was collected", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale")},
			want{claims: false, cause: drift.CauseControllerWrite}},
		{"a person scaled it by hand and the HPA takes it back", snap{target: webTarget(2), live: webLive(5, "kubectl", "Update", "scale"), inGit: []string{hpa("web", "Deployment", "web")}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseHPAReplicas, evidence: []string{"HorizontalPodAutoscaler shop/web", "last written by hand (kubectl", "the HPA takes it back"}}},
		{"an HPA without minReplicas scales from 1", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"), inGit: []string{replaceOnce(hpa("web", "Deployment", "web"), "minReplicas: 2", "")}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseHPAReplicas, evidence: []string{"minReplicas 1, maxReplicas 10"}}},
		{"the HPA targets another Deployment", snap{target: webTarget(2), live: webLive(5, "kubectl", "Update", "scale"), cluster: []string{hpa("api", "Deployment", "api")}},
			want{claims: false, cause: drift.CauseManualChange}},
		{"the HPA targets a StatefulSet of the same name", snap{target: webTarget(2), live: webLive(5, "kubectl", "Update", "scale"), cluster: []string{hpa("web", "StatefulSet", "web")}},
			want{claims: false, cause: drift.CauseManualChange}},
		{"kubectl scale without an HPA", snap{target: webTarget(2), live: webLive(5, "kubectl", "Update", "scale")},
			want{claims: false, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.HPAReplicas, tt.s, "/spec/replicas", tt.want)
		})
	}
}

// scaledObject is KEDA's ScaledObject shop/web as Git declares it and live
// (uid so-uid), targeting target, scaling between 0 and 10.
func scaledObject(target string) string {
	return fmt.Sprintf(`
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: web, namespace: shop, uid: so-uid}
spec:
  scaleTargetRef: {name: %s}
  minReplicaCount: 0
  maxReplicaCount: 10
  triggers: [{type: cpu, metadata: {value: "60"}}]
`, target)
}

// kedaHPA is the HPA KEDA makes for ScaledObject shop/web, owned by the
// object with uid.
func kedaHPA(uid string) string {
	return replaceOnce(replaceOnce(hpa("keda-hpa-web", "Deployment", "web"), "metadata: {name: keda-hpa-web, namespace: shop}",
		fmt.Sprintf("metadata: {name: keda-hpa-web, namespace: shop, ownerReferences: [{apiVersion: keda.sh/v1alpha1, kind: ScaledObject, name: web, uid: %s, controller: true}]}", uid)), "minReplicas: 2", "minReplicas: 1")
}

// TestHPAGrantNeedsProvenance: an autoscaler is granted spec.replicas only
// when it is part of the application's desired state (in Git, or made by a
// controller whose object Git declares and which targets the workload),
// targets the workload, and the live count lies within its range. One that
// anyone with write access to the namespace could have created grants
// nothing.
func TestHPAGrantNeedsProvenance(t *testing.T) {
	scaledDown := webLive(1, "kubectl", "Update", "scale")
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"the HPA is in Git: granted", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"), inGit: []string{hpa("web", "Deployment", "web")}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseHPAReplicas, evidence: []string{"HorizontalPodAutoscaler shop/web is in Git", "within its range [2, 10]"}}},
		{"an HPA only in the cluster unlocks nothing after a hand scale-down", snap{target: webTarget(2), live: scaledDown, cluster: []string{hpa("web", "Deployment", "web")}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseHPAReplicas, evidence: []string{"is only in the cluster", "last written by hand"}}},
		{"an HPA only in the cluster, even under the controller's manager name", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"), cluster: []string{hpa("web", "Deployment", "web")}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseHPAReplicas, evidence: []string{"is only in the cluster"}}},
		{"the HPA is in Git but the live count lies below its range", snap{target: webTarget(2), live: scaledDown, inGit: []string{hpa("web", "Deployment", "web")}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseHPAReplicas, evidence: []string{"the live replicas 1 lie outside [2, 10]"}}},
		{"the HPA is in Git but the live count lies above its range", snap{target: webTarget(2), live: webLive(50, "kube-controller-manager", "Update", "scale"), inGit: []string{hpa("web", "Deployment", "web")}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseHPAReplicas, evidence: []string{"lie outside [2, 10]"}}},
		{"a cluster HPA beside the one in Git: the one in Git is named", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"), cluster: []string{hpa("a-planted", "Deployment", "web")}, inGit: []string{hpa("web", "Deployment", "web")}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseHPAReplicas, evidence: []string{"HorizontalPodAutoscaler shop/web is in Git"}}},
		{"KEDA's HPA of a ScaledObject in Git: granted down to zero", snap{target: webTarget(2), live: webLive(0, "keda-operator", "Update", "scale"), inGit: []string{scaledObject("web")}, cluster: []string{kedaHPA("so-uid")}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseHPAReplicas, evidence: []string{"made by ScaledObject shop/web", "within its range [0, 10]"}}},
		{"an ownerReference to the ScaledObject with another uid is planted", snap{target: webTarget(2), live: webLive(0, "keda-operator", "Update", "scale"), inGit: []string{scaledObject("web")}, cluster: []string{kedaHPA("forged")}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseHPAReplicas, evidence: []string{"the ownerReference is not the controller's"}}},
		{"the ScaledObject in Git scales another workload", snap{target: webTarget(2), live: webLive(0, "keda-operator", "Update", "scale"), inGit: []string{scaledObject("api")}, cluster: []string{kedaHPA("so-uid")}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseHPAReplicas, evidence: []string{"does not target this Deployment"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.HPAReplicas, tt.s, "/spec/replicas", tt.want)
		})
	}
}

// TestHPAInAnotherNamespace: an HPA only scales workloads of its own namespace.
func TestHPAInAnotherNamespace(t *testing.T) {
	other := hpa("web", "Deployment", "web")
	other = replaceOnce(other, "namespace: shop", "namespace: staging")
	checkDiff(t, classifiers.HPAReplicas, snap{target: webTarget(2), live: webLive(5, "kubectl", "Update", "scale"), cluster: []string{other}},
		"/spec/replicas", want{claims: false, cause: drift.CauseManualChange})
}
