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
			Apps: []PlatformAppView{{App: h, Namespace: "argocd", Paths: []string{"/metadata/labels/" + h},
				Proofs: []PlatformProofView{{Resource: "Deployment shop/" + h, Path: "/metadata/labels/" + h, WebhookConfig: "MutatingWebhookConfiguration " + h, Webhook: h,
					DryRunManager: "argocd-controller", EntryFrom: "the writer catalog", EntryWriter: h, EntryPattern: h, EntryWhy: h, EntrySource: h}}},
				{App: "web", Namespace: "argocd", Paths: []string{"/spec/x"}, Proofs: []PlatformProofView{{Resource: "Deployment shop/web", Path: "/spec/x", Manager: h,
					EntryFrom: "the policy's writers", EntryWriter: h, EntryPattern: "/spec/x", EntrySource: h}}}},
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

// TestPlatformPRBodyGolden: the platform pull request lists, under each
// application, the proof its own grant rests on: for a webhook the
// configuration, the webhook and the manager a dry run of Git's manifest
// reproduced the live value under (never the value: it is not Git's); for a controller its field manager; for both the
// reviewed entry that lets the writer keep the path.
func TestPlatformPRBodyGolden(t *testing.T) {
	entry := func(p PlatformProofView) PlatformProofView {
		p.EntryFrom, p.EntryWriter, p.EntryPattern = "the allow-list of hand-overs", "a policy engine's mutating webhook", "/metadata/labels/*"
		p.EntryWhy, p.EntrySource = "labels a policy engine adds for ownership", "https://kyverno.io/docs/writing-policies/mutate/"
		return p
	}
	hook := func(res string) PlatformProofView {
		return entry(PlatformProofView{Resource: res, Path: "/metadata/labels/policy.example.com~1team", WebhookConfig: "MutatingWebhookConfiguration policy-mutator",
			Webhook: "team.policy.example.com", DryRunManager: "argocd-controller"})
	}
	v := PlatformPRView{Instance: "main", ArgoCDURL: "https://argocd.example.com", Source: "MutatingWebhookConfiguration policy-mutator on Deployment",
		Cause: drift.CauseWebhookMutation, Key: "resource.customizations.ignoreDifferences.apps_Deployment", File: "argocd/argocd-cm.yaml", Style: "ConfigMap manifest",
		Rule: "jsonPointers:\n- /metadata/labels/policy.example.com~1team\n",
		Diff: "--- a/argocd/argocd-cm.yaml\n+++ b/argocd/argocd-cm.yaml\n@@ -9 +9,3 @@\n+  resource.customizations.ignoreDifferences.apps_Deployment: |\n+    jsonPointers:\n+    - /metadata/labels/policy.example.com~1team\n",
		Apps: []PlatformAppView{
			{App: "billing", Namespace: "argocd", Paths: []string{"Deployment shop/billing /metadata/labels/policy.example.com~1team"},
				Proofs: []PlatformProofView{hook("Deployment shop/billing")}},
			{App: "orders", Namespace: "argocd", Paths: []string{"Deployment shop/orders /metadata/labels/policy.example.com~1team"},
				Proofs: []PlatformProofView{hook("Deployment shop/orders")}},
			{App: "search", Namespace: "team-search", Paths: []string{"Deployment search/api /spec/replicas"},
				Proofs: []PlatformProofView{{Resource: "Deployment search/api", Path: "/spec/replicas", Manager: "rollouts-controller",
					EntryFrom: "the policy's writers", EntryWriter: "rollouts-controller", EntryPattern: "/spec/replicas", EntrySource: "platform team, ADR-7"}}},
		},
		Verification: "re-diagnosed all 3 applications with the new argocd-cm in their cluster context: 3 findings gone, no new difference", Fingerprint: "0123456789ab"}
	body, err := PlatformPRBody(v)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "platform_pr.md", []byte(body))
	items := strings.Split(body, "\n- [")
	for _, a := range v.Apps {
		item := ""
		for _, it := range items {
			if strings.HasPrefix(it, "`"+a.Namespace+"/"+a.App+"`") {
				item, _, _ = strings.Cut(it, "\n\n")
			}
		}
		for _, p := range a.Proofs {
			for _, want := range []string{p.Path, p.Manager, p.EntryPattern, p.Webhook} {
				if want != "" && !strings.Contains(item, want) {
					t.Errorf("the item of %s does not show %q:\n%s", a.App, want, item)
				}
			}
		}
	}
}
