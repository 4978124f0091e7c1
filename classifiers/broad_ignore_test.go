package classifiers_test

import (
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
		{"the image of a container", with(`{group: apps, kind: Deployment, name: web, namespace: shop, jsonPointers: [/spec/template/spec/containers/0/image]}`),
			want{claims: true, fix: drift.FixNarrowIgnore, evidence: []string{"it covers /spec/template/spec/containers/0/image of", "a sensitive field (image"}}},
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
