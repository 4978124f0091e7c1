package templates

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestHostileValuesInertInPlatformPRBody: webhook names, application names
// and paths come from the cluster; in a platform PR's body they stay inside
// code spans or fenced blocks no value can close, and every application
// stays one list item.
func TestHostileValuesInertInPlatformPRBody(t *testing.T) {
	for _, h := range hostile {
		v := PlatformPRView{Instance: "main", ArgoCDURL: "https://argocd.example.com", Source: "MutatingWebhookConfiguration " + h + " on Deployment",
			Cause: drift.CauseWebhookMutation, Key: "resource.customizations.ignoreDifferences.apps_Deployment", File: "argocd-cm.yaml", Style: "ConfigMap manifest",
			Rule: "jsonPointers:\n- /metadata/labels/" + h + "\n", Diff: "+  - /metadata/labels/" + h + "\n",
			Apps:         []PlatformAppView{{App: h, Namespace: "argocd", Paths: []string{"/metadata/labels/" + h}}, {App: "web", Namespace: "argocd", Paths: []string{"/spec/x"}}},
			Verification: "re-diagnosed", Fingerprint: "abc"}
		body, err := PlatformPRBody(v)
		if err != nil {
			t.Fatal(err)
		}
		fence, items := "", 0
		apps, _, _ := strings.Cut(body, "### Verified")
		for _, line := range strings.Split(apps, "\n") {
			switch {
			case fence == "" && strings.HasPrefix(line, "```"):
				fence = strings.TrimRight(line, "abcdefghijklmnopqrstuvwxyz")
				continue
			case fence != "":
				if line == fence {
					fence = ""
				}
				continue
			}
			if strings.HasPrefix(line, "- ") {
				items++
			}
			checkInert(t, h, line)
		}
		if fence != "" {
			t.Errorf("hostile value %q left a fenced block open:\n%s", h, body)
		}
		if items != 2 {
			t.Errorf("hostile value %q changed the list of applications: %d items\n%s", h, items, body)
		}
		if strings.Count(body, "<!-- driftfix:fingerprint=") != 1 {
			t.Errorf("hostile value %q planted a marker outside a code block", h)
		}
	}
}
