package classifiers_test

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

func TestUnknown(t *testing.T) {
	tests := []struct {
		name string
		s    snap
		path string
		want want
	}{
		{"a manager nothing identifies", snap{target: webTarget(2), live: webLive(5, "replica-tuner", "Update", "")}, "/spec/replicas",
			want{claims: true, fix: drift.FixNone, cause: drift.CauseUnknown, evidence: []string{
				"Git declares 2, the live object has 5", "replica-tuner (Update", "nothing in the snapshot shows that manager to be a controller",
				"no further renders to compare", "0 HorizontalPodAutoscalers, 0 mutating webhook configurations, 0 CRDs collected"}}},
		{"what was collected is counted", snap{target: webTarget(2), live: webLive(5, "replica-tuner", "Update", ""), cluster: []string{hpa("api", "Deployment", "api")}}, "/spec/replicas",
			want{claims: true, fix: drift.FixNone, cause: drift.CauseUnknown, evidence: []string{"1 HorizontalPodAutoscalers"}}},
		{"a resource missing from the cluster", snap{target: webTarget(2)}, "",
			want{claims: true, fix: drift.FixNone, cause: drift.CauseUnknown, evidence: []string{"Deployment shop/web is in Git but not in the cluster"}}},
		{"a person's change is not called unattributed", snap{target: webTarget(2), live: webLive(5, "kubectl-edit", "Update", "")}, "/spec/replicas",
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.Unknown, tt.s, tt.path, tt.want)
		})
	}
}
