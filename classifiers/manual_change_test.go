package classifiers_test

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

func TestManualChange(t *testing.T) {
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"kubectl edit", snap{target: webTarget(2), live: webLive(5, "kubectl-edit", "Update", "")},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{
				"/spec/replicas is owned by kubectl-edit", "changed by hand with kubectl edit", "Git declares 2, the live object has 5",
				"no HorizontalPodAutoscaler targets Deployment shop/web"}}},
		{"kubectl scale", snap{target: webTarget(2), live: webLive(5, "kubectl", "Update", "scale")},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"changed by hand with kubectl scale"}}},
		{"kubectl apply --server-side", snap{target: webTarget(2), live: webLive(5, "kubectl", "Apply", "")},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"kubectl apply --server-side"}}},
		{"an edit in Argo CD's UI", snap{target: webTarget(2), live: webLive(5, "argocd-server", "Update", "")},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"Argo CD's UI"}}},
		{"an ad-hoc client is named as it is", snap{target: webTarget(2), live: webLive(5, "python-requests", "Update", "")},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"changed by hand with python-requests"}}},
		{"a controller, not a person", snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale")},
			want{claims: false, cause: drift.CauseControllerWrite}},
		{"a manager named like kubectl but not kubectl", snap{target: webTarget(2), live: webLive(5, "kubectlx", "Update", "")},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a hand edit of replicas an HPA owns is the HPA's case", snap{target: webTarget(2), live: webLive(5, "kubectl-edit", "Update", ""), cluster: []string{hpa("web", "Deployment", "web")}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseHPAReplicas}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.ManualChange, tt.s, "/spec/replicas", tt.want)
		})
	}
}
