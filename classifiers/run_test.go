package classifiers_test

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// TestRunHiddenDifferences: a difference an ignore rule hides is reported only
// when it is at a sensitive path or the rule is flagged.
func TestRunHiddenDifferences(t *testing.T) {
	const image = "/spec/template/spec/containers/0/image"
	live := replaceOnce(replaceOnce(webLive(2, "kubectl-set", "Update", ""), `"registry.example.com/web:1.0"`, `"registry.example.com/web:debug"`),
		`{"f:spec": {"f:replicas": {}}}`, `{"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}`)
	scaled := webLive(5, "kube-controller-manager", "Update", "scale")
	tests := []struct {
		name     string
		rule     string
		live     string
		path     string
		shown    bool
		cause    drift.Cause
		evidence string
	}{
		{"an ignored image change is still shown", `{group: apps, kind: Deployment, name: web, namespace: shop, jsonPointers: [` + image + `]}`, live, image,
			true, drift.CauseManualChange, "Argo CD does not show this difference: ignoreDifferences[0] of Application shop hides it although it is a sensitive field"},
		{"a narrow rule hides replicas a controller writes", `{group: apps, kind: Deployment, name: web, namespace: shop, jsonPointers: [/spec/replicas]}`, scaled, "/spec/replicas",
			false, "", ""},
		{"a broad rule shows what it hides", `{group: apps, kind: Deployment, jsonPointers: [/spec]}`, scaled, "/spec/replicas",
			true, drift.CauseControllerWrite, "Argo CD does not show this difference: ignoreDifferences[0] of Application shop hides it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := diagnose(t, snap{app: appIgnoring(tt.rule), target: webTarget(2), live: tt.live}.build(t))
			var got *drift.Finding
			findings := classifiers.Run(in, classifiers.Registry)
			for i, f := range findings {
				if f.Path.String() == tt.path && f.Resource.Kind == "Deployment" {
					got = &findings[i]
				}
			}
			if (got != nil) != tt.shown {
				t.Fatalf("finding at %s: %v, want shown %v", tt.path, got, tt.shown)
			}
			if got == nil {
				return
			}
			if got.Cause != tt.cause {
				t.Errorf("cause = %s, want %s", got.Cause, tt.cause)
			}
			if all := drift.EvidenceText(got.Evidence, "\n"); !strings.Contains(all, tt.evidence) {
				t.Errorf("evidence lacks %q:\n%s", tt.evidence, all)
			}
		})
	}
}
