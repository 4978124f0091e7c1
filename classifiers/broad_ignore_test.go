package classifiers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// appIgnoring is the default Application with one ignoreDifferences entry (a flow map).
func appIgnoring(rule string) string {
	return strings.Replace(defaultApp, "  source:", "  ignoreDifferences: ["+rule+"]\n  source:", 1)
}

// checkRule asks cl about the Application's first ignore rule, and Run
// whether it reports that rule as broad-ignore.
func checkRule(t *testing.T, cl classifiers.Classifier, s snap, w want) {
	t.Helper()
	in := diagnose(t, s.build(t))
	ri := -1
	for i, r := range in.Comparison.Rules {
		if !r.System {
			ri = i
			break
		}
	}
	if ri < 0 {
		t.Fatal("the comparison has no rule of the Application")
	}
	r := &in.Comparison.Rules[ri]
	v, ok := cl.Classify(&classifiers.Case{Input: in, Rule: r, RuleIndex: ri})
	checkVerdict(t, cl, v, ok, w)
	flagged := false
	for _, f := range classifiers.Run(in, classifiers.Registry) {
		if f.Resource == r.Holder && f.Path.String() == r.Path.String() && f.Cause == drift.CauseBroadIgnore {
			flagged = true
		}
	}
	if flagged != w.claims {
		t.Errorf("Run reports the rule as broad-ignore: %v, want %v", flagged, w.claims)
	}
}

func TestBroadIgnore(t *testing.T) {
	scaled := snap{target: webTarget(2), live: webLive(5, "kube-controller-manager", "Update", "scale")}
	with := func(rule string) snap { s := scaled; s.app = appIgnoring(rule); return s }
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"the whole spec of every Deployment", with(`{group: apps, kind: Deployment, jsonPointers: [/spec]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, evidence: []string{
				"ignoreDifferences[0] of Application shop is broad", "it names no resource, so it applies to every apps/Deployment in every namespace",
				"jsonPointer /spec ignores the whole spec", "it hides Deployment shop/web /spec/replicas: Git 2, live 5, written by kube-controller-manager"}}},
		{"every kind", with(`{group: "*", kind: "*", name: web, jsonPointers: [/metadata/labels/team]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, evidence: []string{`it applies to every kind ("*")`, "it hides no difference right now"}}},
		{"every container by jq", with(`{group: apps, kind: Deployment, name: web, namespace: shop, jqPathExpressions: [".spec.template.spec.containers[]"]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, evidence: []string{"jqPathExpression .spec.template.spec.containers[] ignores every container"}}},
		{"a person's client as manager", with(`{group: apps, kind: Deployment, name: web, namespace: shop, managedFieldsManagers: [kubectl-edit]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, evidence: []string{"managedFieldsManagers kubectl-edit ignores whatever anyone writes under that name"}}},
		{"the image of a container: narrow, but a sensitive path", with(`{group: apps, kind: Deployment, name: web, namespace: shop, jsonPointers: [/spec/template/spec/containers/0/image]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, absent: []string{"is broad"}, evidence: []string{
				"ignoreDifferences[0] of Application shop is scoped narrowly (one resource by name, exact paths), but covers a sensitive path: /spec/template/spec/containers/0/image of Deployment shop/web (image)"}}},
		{"broad and sensitive: both said", with(`{group: apps, kind: Deployment, jsonPointers: [/spec/template/spec/containers/0/image]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, evidence: []string{
				"is broad: it names no resource", "; it also covers a sensitive path: /spec/template/spec/containers/0/image of Deployment shop/web (image)"}}},
		{"a whole subtree by jsonPointer, nothing of it differing", with(`{group: apps, kind: Deployment, name: web, namespace: shop, jsonPointers: [/spec/selector]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, absent: []string{"sensitive"}, evidence: []string{
				"is broad: jsonPointer /spec/selector ignores the whole subtree there in Deployment shop/web (1 field, none of them differing), and any field added beneath it later"}}},
		{"one field of one resource", with(`{group: apps, kind: Deployment, name: web, namespace: shop, jsonPointers: [/spec/replicas]}`),
			want{claims: false}},
		{"a filtering jq expression", with(`{group: apps, kind: Deployment, name: web, namespace: shop, jqPathExpressions: [".spec.template.spec.containers[] | select(.name == \"istio-proxy\")"]}`),
			want{claims: false}},
		{"a controller as manager", with(`{group: apps, kind: Deployment, name: web, namespace: shop, managedFieldsManagers: [kube-controller-manager]}`),
			want{claims: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRule(t, classifiers.BroadIgnore, tt.s, tt.want)
		})
	}
}

// TestBroadIgnoreLeavesDifferences: the classifier judges rules, not differences.
func TestBroadIgnoreLeavesDifferences(t *testing.T) {
	checkDiff(t, classifiers.BroadIgnore, snap{target: webTarget(2), live: webLive(5, "kubectl", "Update", "scale")}, "/spec/replicas",
		want{claims: false, cause: drift.CauseManualChange})
}

// TestBroadIgnoreByScopeNotKind: a rule naming one resource and exact leaf
// paths is not broad, whatever its kind; a sensitive path it covers is
// reported as such; a subtree is broad only when it holds more than what
// differs there.
func TestBroadIgnoreByScopeNotKind(t *testing.T) {
	secret := func(hash, password string) string {
		return fmt.Sprintf(`{apiVersion: v1, kind: Secret, metadata: {name: creds, namespace: shop, annotations: {reloader.example.com/hash: %q}}, data: {password: %s}}`, hash, password)
	}
	secrets := func(rule string) snap {
		return snap{app: appIgnoring(rule), target: secret("a1", "cGFzcw=="), live: secret("b2", "b3RoZXI=")}
	}
	webhook := func(ca string) string {
		return fmt.Sprintf(`{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: injector}, webhooks: [{name: inject.example.com, admissionReviewVersions: [v1], sideEffects: None, clientConfig: {service: {name: injector, namespace: injector-system}, caBundle: %q}}]}`, ca)
	}
	limits := func(cpu, memory string) string {
		return fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop}, spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: "registry.example.com/web:1.0", resources: {limits: {cpu: %q, memory: %q}}}]}}}}`, cpu, memory)
	}
	resources := `{group: apps, kind: Deployment, name: web, namespace: shop, jsonPointers: [/spec/template/spec/containers/0/resources]}`
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"a Secret's annotation by name: the kind plays no part", secrets(`{kind: Secret, name: creds, namespace: shop, jsonPointers: [/metadata/annotations/reloader.example.com~1hash]}`),
			want{claims: false}},
		{"a Secret's key by name: narrow, but Secret data", secrets(`{kind: Secret, name: creds, namespace: shop, jsonPointers: [/data/password]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, absent: []string{"is broad"}, evidence: []string{
				"is scoped narrowly (one resource by name, exact paths), but covers a sensitive path: /data/password of Secret shop/creds, in /data (secret)"}}},
		{"every Secret's annotation: broad by scope, not sensitive", secrets(`{kind: Secret, jsonPointers: [/metadata/annotations/reloader.example.com~1hash]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, absent: []string{"sensitive"}, evidence: []string{"is broad: it names no resource, so it applies to every Secret in every namespace"}}},
		{"one webhook's caBundle by name: narrow, an admission path", snap{app: appIgnoring(`{group: admissionregistration.k8s.io, kind: MutatingWebhookConfiguration, name: injector, jsonPointers: [/webhooks/0/clientConfig/caBundle]}`),
			target: webhook(""), live: webhook("LS0tLS1CRUdJTg==")},
			want{claims: true, fix: drift.FixNarrowIgnore, absent: []string{"is broad"}, evidence: []string{
				"covers a sensitive path: /webhooks/0/clientConfig/caBundle of MutatingWebhookConfiguration injector (admission)"}}},
		{"the same subtree by a plain jq path", snap{app: appIgnoring(`{group: apps, kind: Deployment, name: web, namespace: shop, jqPathExpressions: [".spec.selector"]}`), target: limits("1", "1Gi"), live: limits("2", "1Gi")},
			want{claims: true, fix: drift.FixNarrowIgnore, evidence: []string{"jqPathExpression .spec.selector ignores the whole subtree there in Deployment shop/web (1 field, none of them differing)"}}},
		{"a leaf by a plain jq path", snap{app: appIgnoring(`{group: apps, kind: Deployment, name: web, namespace: shop, jqPathExpressions: [".spec.replicas"]}`), target: limits("1", "1Gi"), live: limits("2", "1Gi")},
			want{claims: false}},
		{"a subtree whose every field differs is exact", snap{app: appIgnoring(resources), target: limits("1", "1Gi"), live: limits("2", "2Gi")},
			want{claims: false}},
		{"a subtree holding more than what differs is broad", snap{app: appIgnoring(resources), target: limits("1", "1Gi"), live: limits("2", "1Gi")},
			want{claims: true, fix: drift.FixNarrowIgnore, absent: []string{"sensitive"}, evidence: []string{
				"jsonPointer /spec/template/spec/containers/0/resources ignores the whole subtree there in Deployment shop/web (2 fields, 1 of them differing)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRule(t, classifiers.BroadIgnore, tt.s, tt.want)
		})
	}
}
