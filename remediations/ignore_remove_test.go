package remediations

import (
	"strings"
	"testing"
)

const appWithRules = `# the shop (owned by team-web)
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop
  namespace: argocd
spec:
  project: default # the default project
  # the sidecar's image (INC-123)
  ignoreDifferences:
    - group: apps
      kind: Deployment
      jsonPointers:
        - /spec/template/spec/containers/1/image
    - kind: Service
      jsonPointers:
        - /spec/clusterIP
`

// TestIgnoreRuleRemoval: removing stale rules keeps every other line and
// comment, removes the list with its key when it empties, and refuses a
// manifest whose rule is not the cluster's.
func TestIgnoreRuleRemoval(t *testing.T) {
	svc := map[string]any{"kind": "Service", "jsonPointers": []any{"/spec/clusterIP"}}
	dep := map[string]any{"group": "apps", "kind": "Deployment", "jsonPointers": []any{"/spec/template/spec/containers/1/image"}}
	for _, tc := range []struct {
		name string
		want map[int]any
		gone []string
		kept []string
		err  string
	}{
		{"one of two", map[int]any{1: svc}, []string{"kind: Service", "/spec/clusterIP"}, []string{"# the sidecar's image (INC-123)", "kind: Deployment", "# the default project"}, ""},
		{"both", map[int]any{0: dep, 1: svc}, []string{"ignoreDifferences", "kind: Service"}, []string{"project: default # the default project"}, ""},
		{"not the cluster's rule", map[int]any{1: dep}, nil, nil, "the manifest and the cluster disagree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RemoveAppIgnoreRules("argocd/shop.yaml", []byte(appWithRules), "shop", tc.want)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.gone {
				if strings.Contains(string(out), s) {
					t.Errorf("%q is still there:\n%s", s, out)
				}
			}
			for _, s := range tc.kept {
				if !strings.Contains(string(out), s) {
					t.Errorf("%q is lost:\n%s", s, out)
				}
			}
		})
	}
}

// TestIgnoreRuleRemovalArgoCDCM: an argocd-cm key is removed in each way a
// platform repository declares argocd-cm; a key the file does not declare
// is refused.
func TestIgnoreRuleRemovalArgoCDCM(t *testing.T) {
	const key = "resource.customizations.ignoreDifferences.apps_Deployment"
	for _, tc := range []struct{ name, file, src, kept string }{
		{"manifest", "argocd-cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  # tracking, ADR-12\n  application.resourceTrackingMethod: annotation\n  " + key + ": |\n    jsonPointers:\n    - /spec/replicas\n", "# tracking, ADR-12"},
		{"json6902", "patch.yaml", "- op: add\n  path: /data/timeout.reconciliation\n  value: 180s # keep in sync\n- op: add\n  path: /data/" + key + "\n  value: |\n    jsonPointers:\n    - /spec/replicas\n", "180s # keep in sync"},
		{"helm", "values.yaml", "configs:\n  cm:\n    admin.enabled: false # SSO only\n    " + key + ": |\n      jsonPointers:\n      - /spec/replicas\n", "admin.enabled: false # SSO only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := RemoveArgoCDCMKeys(tc.file, []byte(tc.src), []string{key})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), "apps_Deployment") || strings.Contains(string(out), "/spec/replicas") || !strings.Contains(string(out), tc.kept) {
				t.Errorf("want the key gone and %q kept:\n%s", tc.kept, out)
			}
			if _, _, err := RemoveArgoCDCMKeys(tc.file, out, []string{key}); err == nil || !strings.Contains(err.Error(), "declared elsewhere") {
				t.Errorf("removing a key the file does not declare: %v", err)
			}
		})
	}
}
