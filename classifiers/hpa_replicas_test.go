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
		{"an HPA scales the Deployment", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"), cluster: []string{hpa("web-hpa", "Deployment", "web")}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseHPAReplicas, evidence: []string{
				"HorizontalPodAutoscaler shop/web-hpa targets this Deployment", "minReplicas 2, maxReplicas 10, currently 5",
				"Git declares replicas: 2, the live object has 5", "kube-controller-manager"}}},
		{"the scale subresource is written but no HPA was collected", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale")},
			want{claims: false, cause: drift.CauseControllerWrite}},
		{"a person scaled it by hand and the HPA takes it back", snap{target: webTarget(2), live: webLive(5, "kubectl", "Update", "scale"), cluster: []string{hpa("web", "Deployment", "web")}},
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseHPAReplicas, evidence: []string{"HorizontalPodAutoscaler shop/web", "last written by hand (kubectl", "the HPA takes it back"}}},
		{"an HPA without minReplicas scales from 1", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"), cluster: []string{replaceOnce(hpa("web", "Deployment", "web"), "minReplicas: 2", "")}},
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

// TestHPAInAnotherNamespace: an HPA only scales workloads of its own namespace.
func TestHPAInAnotherNamespace(t *testing.T) {
	other := hpa("web", "Deployment", "web")
	other = replaceOnce(other, "namespace: shop", "namespace: staging")
	checkDiff(t, classifiers.HPAReplicas, snap{target: webTarget(2), live: webLive(5, "kubectl", "Update", "scale"), cluster: []string{other}},
		"/spec/replicas", want{claims: false, cause: drift.CauseManualChange})
}
