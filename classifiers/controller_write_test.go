package classifiers_test

import (
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
