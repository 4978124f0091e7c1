package classifiers

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

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
