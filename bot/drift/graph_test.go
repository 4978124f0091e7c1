package drift

import (
	"strings"
	"testing"
)

// TestGraphCatalog: the built-in object graph reads, every entry with its
// source, and holds the references the classifiers rely on.
func TestGraphCatalog(t *testing.T) {
	refs := map[string]string{}
	for _, r := range Graph.References {
		refs[r.From+" "+r.Field.String()] = r.To
	}
	for from, to := range map[string]string{
		"external-secrets.io/ExternalSecret /spec/target/name":  "/Secret",
		"cert-manager.io/Certificate /spec/secretName":          "/Secret",
		"bitnami.com/SealedSecret /spec/template/metadata/name": "/Secret",
		"keda.sh/ScaledObject /spec/scaleTargetRef":             "apps/Deployment",
		"keda.sh/ScaledObject /status/hpaName":                  "autoscaling/HorizontalPodAutoscaler",
	} {
		if refs[from] != to {
			t.Errorf("reference %s names %q, want %q", from, refs[from], to)
		}
	}
	if len(Graph.Labelled) == 0 || len(Graph.Deletions) == 0 || len(Graph.Admission) == 0 || len(Graph.FeatureGates) == 0 {
		t.Errorf("the object graph lost a section: %+v", Graph)
	}
}

// TestParseGraphRefuses: a malformed entry is refused with its section,
// its place and what is wrong.
func TestParseGraphRefuses(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"references:\n- {from: Secret, field: spec/x, to: /Secret, source: https://x.example}\n", "references entry 1: field"},
		{"references:\n- {from: a b, field: /spec/x, to: /Secret, source: https://x.example}\n", "references entry 1: from"},
		{"references:\n- {from: /ConfigMap, field: /spec/x, to: /Secret}\n", "references entry 1: needs a source"},
		{"references:\n- {from: /ConfigMap, field: /spec/x, default: self, to: /Secret, source: https://x.example}\n", "default \"self\""},
		{"deletions:\n- {field: /spec/x, owner: gone, component: c, source: https://x.example}\n", "owner \"gone\""},
		{"admission:\n- {annotation: a, component: c, source: https://x.example}\n", "the paths it rewrites"},
		{"featureGates:\n- {gate: G, path: /spec/x, alpha: \"1.20\", default: \"1.22\", source: https://x.example}\n", "needs its kinds"},
		{"featureGates:\n- {gate: G, kinds: [/Service], path: /spec/x, alpha: \"1.22\", default: \"1.20\", source: https://x.example}\n", "must come after alpha"},
		{"featureGates:\n- {gate: G, kinds: [/Service], path: /spec/x, podSpec: /y, alpha: \"1.20\", default: \"1.22\", source: https://x.example}\n", "either path"},
		{"featureGates:\n- {gate: G, kinds: [/Service], path: /spec/x, alpha: one, default: \"1.22\", source: https://x.example}\n", "alpha: version"},
		{"references: []\nsurprise: 1\n", "surprise"},
	} {
		_, err := ParseGraph([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseGraph(%q) = %v, want an error naming %q", tt.doc, err, tt.want)
		}
	}
}

// TestParseVersion reads the versions nodes report.
func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"v1.26.10-eks-e71965b": {1, 26}, "v1.21.7": {1, 21}, "1.27": {1, 27}, "v1.24.3-gke.200": {1, 24}, "v1.30+k3s1": {1, 30}} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1", "v.x", "abc.def"} {
		if _, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) read a version", in)
		}
	}
}
