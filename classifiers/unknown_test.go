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
		{"renders of another revision are not counted as agreeing", snap{app: appAt("c0ffee"),
			target: webTarget(2), live: webLive(5, "replica-tuner", "Update", ""),
			renders: [][]string{{webTarget(2), "{apiVersion: driftfix.io/v1, kind: RenderInfo, metadata: {name: render-0}, revision: c0ffee}"},
				{webTarget(2), "{apiVersion: driftfix.io/v1, kind: RenderInfo, metadata: {name: render-1}, revision: beef}"}}}, "/spec/replicas",
			want{claims: true, fix: drift.FixNone, cause: drift.CauseUnknown, evidence: []string{"1 of 2 further renders are of the compared revision and agree"}}},
		{"a writer nothing places gets the hypotheses left", snap{target: webTarget(2), live: webLive(5, "OpenAPI-Generator", "Update", "")}, "/spec/replicas",
			want{claims: true, fix: drift.FixNone, cause: drift.CauseUnknown, evidence: []string{
				"hypotheses left for OpenAPI-Generator (OpenAPI-Generator is the default name of", "name it in the policy's writers"}}},
		{"a person's change is not called unattributed", snap{target: webTarget(2), live: webLive(5, "kubectl-edit", "Update", "")}, "/spec/replicas",
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.Unknown, tt.s, tt.path, tt.want)
		})
	}
}
