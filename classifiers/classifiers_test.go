package classifiers

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

func TestSelectorMatches(t *testing.T) {
	labels := map[string]string{"team": "shop", "istio-injection": "enabled"}
	tests := []struct {
		sel  map[string]any
		want bool
	}{
		{nil, true},
		{map[string]any{}, true},
		{map[string]any{"matchLabels": map[string]any{"team": "shop"}}, true},
		{map[string]any{"matchLabels": map[string]any{"team": "web"}}, false},
		{map[string]any{"matchExpressions": []any{map[string]any{"key": "istio-injection", "operator": "In", "values": []any{"enabled"}}}}, true},
		{map[string]any{"matchExpressions": []any{map[string]any{"key": "istio-injection", "operator": "NotIn", "values": []any{"enabled"}}}}, false},
		{map[string]any{"matchExpressions": []any{map[string]any{"key": "missing", "operator": "NotIn", "values": []any{"x"}}}}, true},
		{map[string]any{"matchExpressions": []any{map[string]any{"key": "missing", "operator": "Exists"}}}, false},
		{map[string]any{"matchExpressions": []any{map[string]any{"key": "missing", "operator": "DoesNotExist"}}}, true},
		{map[string]any{"matchLabels": map[string]any{"team": "shop"}, "matchExpressions": []any{map[string]any{"key": "team", "operator": "DoesNotExist"}}}, false},
	}
	for i, tt := range tests {
		got, err := selectorMatches(tt.sel, labels)
		if err != nil || got != tt.want {
			t.Errorf("%d: selectorMatches(%v) = %v, %v; want %v", i, tt.sel, got, err, tt.want)
		}
	}
	if _, err := selectorMatches(map[string]any{"matchExpressions": []any{map[string]any{"key": "a", "operator": "Near"}}}, labels); err == nil {
		t.Error("an unknown operator must be an error")
	}
}

func TestPlural(t *testing.T) {
	for kind, want := range map[string]string{
		"Deployment": "deployments", "Ingress": "ingresses", "NetworkPolicy": "networkpolicies",
		"Gateway": "gateways", "Endpoints": "endpoints", "Pod": "pods", "Mesh": "meshes",
	} {
		if got := plural(kind); got != want {
			t.Errorf("plural(%s) = %s, want %s", kind, got, want)
		}
	}
}

func TestJQBroadPattern(t *testing.T) {
	tests := []struct {
		expr  string
		want  string
		plain bool
	}{
		{".spec.template.spec.containers[]", "/spec/template/spec/containers", true},
		{".spec", "/spec", true},
		{".", "", true},
		{".webhooks[]?.clientConfig.caBundle", "/webhooks/clientConfig/caBundle", true},
		{`.spec.template.spec.containers[] | select(.name == "istio-proxy")`, "", false},
		{"del(.x)", "", false},
	}
	for _, tt := range tests {
		got, plain := jqBroadPattern(tt.expr)
		if got != tt.want || plain != tt.plain {
			t.Errorf("jqBroadPattern(%q) = %q, %v; want %q, %v", tt.expr, got, plain, tt.want, tt.plain)
		}
	}
}

func TestManualManagers(t *testing.T) {
	for m, want := range map[string]bool{
		"kubectl": true, "kubectl-edit": true, "kubectl-client-side-apply": true, "k9s": true,
		"kube-controller-manager": false, "argocd-controller": false, "kubectlx": false, "helm": false,
	} {
		if IsManualManager(m) != want {
			t.Errorf("IsManualManager(%s) = %v", m, !want)
		}
	}
}

func TestRegistryIsComplete(t *testing.T) {
	seen := map[drift.Cause]bool{}
	for i, c := range Registry {
		if c.Name == "" || c.Doc == "" || c.Classify == nil {
			t.Errorf("registry entry %d is incomplete: %+v", i, c)
		}
		if seen[c.Name] {
			t.Errorf("%s registered twice", c.Name)
		}
		seen[c.Name] = true
	}
	if Registry[len(Registry)-1].Name != drift.CauseUnknown {
		t.Error("unknown must come last: it claims every difference")
	}
	for _, c := range []drift.Cause{drift.CauseNormalized, drift.CauseWebhookMutation, drift.CauseControllerWrite, drift.CauseHPAReplicas,
		drift.CauseNondeterministicRender, drift.CauseTrackingClash, drift.CauseManualChange, drift.CauseBroadIgnore, drift.CauseUnknown} {
		if !seen[c] {
			t.Errorf("cause %s has no classifier", c)
		}
	}
}
