package classifiers_test

import (
	"fmt"
	"strings"
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
		{"an edit through Argo CD's API where argocd-server runs as the argocd binary, or the CLI in core mode", snap{target: webTarget(2), live: webLive(5, "argocd", "Update", "")},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"changed by hand with an edit in Argo CD's UI or API, or the argocd CLI in core mode"}}},
		{"Argo CD's own sync is not a person", snap{target: webTarget(2), live: webLive(5, "argocd-controller", "Update", "")},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a generic client library's name is not a person", snap{target: webTarget(2), live: webLive(5, "python-requests", "Update", "")},
			want{claims: false, cause: drift.CauseUnknown}},
		{"helm is a person's or a pipeline's tool", snap{target: webTarget(2), live: webLive(5, "helm", "Update", "")},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"changed by hand with helm"}}},
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

// TestManualChangeToSecretData: a hand edit of Secret data is reported
// without showing either value.
func TestManualChangeToSecretData(t *testing.T) {
	secret := func(pw, mf string) string {
		return `{apiVersion: v1, kind: Secret, metadata: {name: db, namespace: shop` + mf + `}, type: Opaque, data: {password: ` + pw + `}}`
	}
	const edited = `, managedFields: [{manager: argocd-controller, operation: Update, apiVersion: v1, time: "2026-09-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:type": {}}}, {manager: kubectl-edit, operation: Update, apiVersion: v1, time: "2026-09-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:password": {}}}}]`
	s := snap{target: secret("aHVudGVyMg==", ""), live: secret("c3dvcmRmaXNo", edited)}
	checkDiff(t, classifiers.ManualChange, s, "/data/password",
		want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"changed by hand with kubectl edit", "(secret value, not shown)"}})
	in := diagnose(t, s.build(t))
	for _, f := range classifiers.Run(in, classifiers.Registry) {
		text := drift.EvidenceText(f.Evidence, "\n") + fmt.Sprint(f.Git, f.Live)
		for _, v := range []string{"aHVudGVyMg==", "c3dvcmRmaXNo"} {
			if strings.Contains(text, v) {
				t.Errorf("finding at %s shows the secret value %s: %q", f.Path, v, text)
			}
		}
	}
}
