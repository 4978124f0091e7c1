package classifiers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// auditEvent is one Metadata-level audit event about Deployment shop/web,
// in the API's JSON; sub is its subresource, query the request URI's.
func auditEvent(user, as, ua, verb, sub, query, at string) string {
	uri := "/apis/apps/v1/namespaces/shop/deployments/web"
	if sub != "" {
		uri += "/" + sub
	}
	if query != "" {
		uri += "?" + query
	}
	imp := ""
	if as != "" {
		imp = fmt.Sprintf(`"impersonatedUser":{"username":%q},`, as)
	}
	return fmt.Sprintf(`{"level":"Metadata","auditID":"a-%s","stage":"ResponseComplete","requestURI":%q,"verb":%q,"user":{"username":%q,"groups":["system:authenticated"]},%s"userAgent":%q,"objectRef":{"resource":"deployments","namespace":"shop","name":"web","apiGroup":"apps","apiVersion":"v1","subresource":%q},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"%s.120000Z","stageTimestamp":"%s.180000Z"}`,
		at, uri, verb, user, imp, ua, sub, at, at)
}

// auditList is the cluster context object bot/audit hands a diagnosis.
func auditList(events ...string) string {
	return `{"apiVersion":"audit.k8s.io/v1","kind":"EventList","metadata":{"name":"driftfix-audit"},"items":[` + strings.Join(events, ",") + `]}`
}

const (
	kubectlUA = "kubectl/v1.37.0 (linux/amd64) kubernetes/0e1a2b3"
	kcmUA     = "kube-controller-manager/v1.37.0 (linux/amd64) kubernetes/0e1a2b3/system:serviceaccount:kube-system:horizontal-pod-autoscaler"
	argoUA    = "argocd-application-controller/v3.6.1 (linux/amd64)"
	hpaSA     = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"
	// written is the time webLive's second manager wrote replicas.
	written = "2026-10-02T08:30:00"
)

// TestAuditIdentity: the audit event of the request that wrote a field
// decides controller-write versus manual-change by the authenticated
// identity, and exposes a manager name the identity contradicts.
func TestAuditIdentity(t *testing.T) {
	tests := []struct {
		name string
		cl   classifiers.Classifier
		s    snap
		want want
	}{
		{"a person writing under Argo CD's name", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "argocd-controller", "Update", ""),
				cluster: []string{auditList(auditEvent("oidc:alice", "", kubectlUA, "patch", "", "fieldManager=argocd-controller", written))}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{
				"audit log names who wrote /spec/replicas: oidc:alice (groups system:authenticated), a user's identity",
				"the field manager argocd-controller is the name of Argo CD's application controller, but the request came from oidc:alice with kubectl",
				"Git declares 2, the live object has 5"}}},
		{"the same without the audit log: nobody named", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "argocd-controller", "Update", "")},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a person writing replicas under the controller manager's name", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"),
				cluster: []string{auditList(auditEvent("alice", "", kubectlUA, "patch", "scale", "fieldManager=kube-controller-manager", written))}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{
				"sent patch through its scale subresource", "the field manager kube-controller-manager is the name of", "but the request came from alice with kubectl"}}},
		{"a person impersonating the autoscaler's service account", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"),
				cluster: []string{auditList(auditEvent("oidc:alice", hpaSA, kubectlUA, "patch", "scale", "fieldManager=kube-controller-manager", written))}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"oidc:alice as " + hpaSA}}},
		{"the autoscaler itself", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale"),
				cluster: []string{auditList(auditEvent(hpaSA, "", kcmUA, "update", "scale", "", written))}},
			want{claims: false, cause: drift.CauseControllerWrite}},
		{"a person's kubectl edit, named", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "kubectl-edit", "Update", ""),
				cluster: []string{auditList(auditEvent("oidc:bob", "", "kubectl-edit/v1.37.0", "patch", "", "", written))}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"oidc:bob", "changed by hand with kubectl edit"}, absent: []string{"contradicts"}}},
		{"Argo CD run with a user's credentials names itself consistently: no decision", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "argocd-controller", "Update", ""),
				cluster: []string{auditList(auditEvent("admin", "", argoUA, "patch", "", "fieldManager=argocd-controller", written))}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a write too far from the entry's time is not its write", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "argocd-controller", "Update", ""),
				cluster: []string{auditList(auditEvent("oidc:alice", "", kubectlUA, "patch", "", "fieldManager=argocd-controller", "2026-10-02T08:29:50"))}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"another manager's request is not the entry's", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "argocd-controller", "Update", ""),
				cluster: []string{auditList(auditEvent("oidc:alice", "", kubectlUA, "patch", "", "", written))}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"two identities wrote under the name at that second: no proof", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "argocd-controller", "Update", ""),
				cluster: []string{auditList(auditEvent("oidc:alice", "", kubectlUA, "patch", "", "fieldManager=argocd-controller", written),
					auditEvent("system:serviceaccount:argocd:argocd-application-controller", "", argoUA, "patch", "", "fieldManager=argocd-controller", written))}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"an Apply entry is made by a patch only", classifiers.ManualChange,
			snap{target: webTarget(2), live: webLive(5, "my-operator", "Apply", ""),
				cluster: []string{auditList(auditEvent("oidc:alice", "", kubectlUA, "update", "", "fieldManager=my-operator", written))}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"an unplaced writer whose identity is a service account is a controller", classifiers.ControllerWrite,
			snap{target: webTarget(2), live: webLive(5, "my-operator", "Apply", ""),
				cluster: []string{auditList(auditEvent("system:serviceaccount:ops:my-operator", "", "my-operator/v0.3.0", "patch", "", "fieldManager=my-operator", written))}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{
				"system:serviceaccount:ops:my-operator (groups system:authenticated), a service account", "Git declares 2; the controller wrote 5"}}},
		{"the same without the audit log stays unknown", classifiers.ControllerWrite,
			snap{target: webTarget(2), live: webLive(5, "my-operator", "Apply", "")},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a service account's credentials in kubectl are no controller", classifiers.ControllerWrite,
			snap{target: webTarget(2), live: webLive(5, "my-operator", "Apply", ""),
				cluster: []string{auditList(auditEvent("system:serviceaccount:ci:deployer", "", "kubectl/v1.37.0", "patch", "", "fieldManager=my-operator", written))}},
			want{claims: false, cause: drift.CauseUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, tt.cl, tt.s, "/spec/replicas", tt.want)
		})
	}
}

// TestAuditTimelessEntry: the API server records a write through the
// scale subresource without a time; the newest request under the entry's
// name is its write, and two identities at once prove nothing.
func TestAuditTimelessEntry(t *testing.T) {
	live := strings.Replace(webLive(5, "kube-controller-manager", "Update", "scale"), "    time: \"2026-10-02T08:30:00Z\"\n", "", 1)
	if strings.Contains(live, "08:30") {
		t.Fatal("the entry still has its time")
	}
	person := auditEvent("alice", "", kubectlUA, "patch", "scale", "fieldManager=kube-controller-manager", "2026-10-02T08:31:00")
	hpaEarly := auditEvent(hpaSA, "", kcmUA, "update", "scale", "", "2026-10-02T08:20:00")
	hpaLate := auditEvent(hpaSA, "", kcmUA, "update", "scale", "", "2026-10-02T08:40:00")
	hpaAtOnce := auditEvent(hpaSA, "", kcmUA, "update", "scale", "", "2026-10-02T08:31:01")
	tests := []struct {
		name   string
		events []string
		want   want
	}{
		{"the person wrote last", []string{hpaEarly, person},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"alice", "managedFields records no time for this entry"}}},
		{"the autoscaler wrote after the person", []string{person, hpaLate},
			want{claims: false, cause: drift.CauseControllerWrite}},
		{"both within a second", []string{person, hpaAtOnce},
			want{claims: false, cause: drift.CauseControllerWrite}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.ManualChange, snap{target: webTarget(2), live: live, cluster: []string{auditList(tt.events...)}}, "/spec/replicas", tt.want)
		})
	}
}

// TestAuditEvidenceFields: the audit evidence carries the identity and the
// manager as fields, which outputs and the memo keep without reading text.
func TestAuditEvidenceFields(t *testing.T) {
	s := snap{target: webTarget(2), live: webLive(5, "argocd-controller", "Update", ""),
		cluster: []string{auditList(auditEvent("oidc:alice", hpaSA, kubectlUA, "patch", "", "fieldManager=argocd-controller", written))}}
	in := diagnose(t, s.build(t))
	var found bool
	for _, f := range classifiers.Run(in, classifiers.Registry) {
		if f.Path.String() != "/spec/replicas" {
			continue
		}
		for _, e := range f.Evidence {
			if e.Kind == drift.EvidenceAudit {
				found = true
				if e.Manager != "argocd-controller" || e.Detail != "oidc:alice as "+hpaSA {
					t.Errorf("audit evidence fields: manager %q detail %q", e.Manager, e.Detail)
				}
			}
		}
	}
	if !found {
		t.Fatal("no audit evidence")
	}
}
