package templates

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/drift"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden:\n%s", path, got)
	}
}

var pr = PRView{
	App: "storefront-web", AppNamespace: "argocd", ArgoCDURL: "https://argocd.example.com/",
	Kind: drift.FixRemoveField, Action: "Stop declaring {paths} of {resource}", Cause: drift.CauseHPAReplicas, CauseDoc: "spec.replicas of a workload that a HorizontalPodAutoscaler scales",
	Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "storefront", Name: "web"},
	Findings: []FindingView{{Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "storefront", Name: "web"}, Path: "/spec/replicas",
		Git: "2", Live: "6", Owner: "kube-controller-manager (scale)",
		Evidence: []string{"HorizontalPodAutoscaler storefront/web targets this Deployment (minReplicas 2, maxReplicas 10, currently 6)"}}},
	Why:          "Git stops declaring /spec/replicas (edited: apps/web/deployment.yaml); nothing else in the rendered manifests changes",
	Risk:         "the workload keeps the replica count the HorizontalPodAutoscaler set",
	Undo:         "revert the commit (git revert) or restore apps/web/deployment.yaml from the base branch",
	Verification: "re-diagnosed the application with the change applied to its desired state: 1 finding gone, no new difference",
	Diffs:        []FileDiff{{File: "apps/web/deployment.yaml", Diff: "--- a/apps/web/deployment.yaml\n+++ b/apps/web/deployment.yaml\n@@ -13,3 +13,2 @@\n spec:\n-  replicas: 2  # initial size\n   selector:\n"}},
	Fingerprint:  "3f2a9c1d",
}

func TestPR(t *testing.T) {
	if got := PRTitle(pr); got != "driftfix(storefront-web): Stop declaring /spec/replicas of Deployment storefront/web" {
		t.Errorf("title %q", got)
	}
	body, err := PRBody(pr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(https://argocd.example.com/applications/argocd/storefront-web)", "```diff\n--- a/apps/web/deployment.yaml", "<!-- driftfix:fingerprint=3f2a9c1d -->", "### How to undo"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q", want)
		}
	}
	golden(t, "pr_body.md", []byte(body))
	again, _ := PRBody(pr)
	if again != body {
		t.Error("the body is not deterministic")
	}
}

func TestDigestSmall(t *testing.T) {
	if Digest(DigestView{}) != nil {
		t.Fatal("an empty digest is not sent")
	}
	v := DigestView{Instance: "main", ArgoCDURL: "https://argocd.example.com",
		NewStuck:  []AppLine{{App: "web", Namespace: "argocd", Causes: []drift.Cause{drift.CauseHPAReplicas}}},
		Opened:    []PRLine{{App: "web", Namespace: "argocd", Title: "driftfix(web): Stop declaring /spec/replicas", URL: "https://github.com/example-org/shop/pull/7"}},
		Fixed:     []AppLine{{App: "orders", Namespace: "argocd", Note: "after #6 merged"}},
		ForPeople: []PersonLine{{App: "reports", Namespace: "argocd", Resource: drift.Ref{Kind: "ConfigMap", Namespace: "reports", Name: "cfg"}, Path: "/data/LOG_LEVEL", Cause: drift.CauseManualChange, Why: "changed with kubectl edit <alice>"}},
		Fleet:     []FleetLine{{Cause: drift.CauseWebhookMutation, Source: "MutatingWebhookConfiguration istio-sidecar-injector", Apps: 40, Suggestion: "one system-level ignore rule for the injected container"}},
		CannotCompare: []AppLine{{App: "payments", Namespace: "argocd", Note: "Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = permission denied"},
			{App: "ghost", Namespace: "argocd"}},
	}
	msgs := Digest(v)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	raw, err := json.MarshalIndent(msgs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "<alice>") {
		t.Error("text is not escaped for Slack")
	}
	golden(t, "digest_small.json", append(raw, '\n'))
}

// TestDigestSplits builds a digest too big for one message: every message
// stays within Slack's limits and every line appears exactly once.
func TestDigestSplits(t *testing.T) {
	var v DigestView
	for i := 0; i < 600; i++ {
		v.ForPeople = append(v.ForPeople, PersonLine{App: fmt.Sprintf("app-%03d", i), Namespace: "argocd",
			Resource: drift.Ref{Kind: "Deployment", Namespace: "ns", Name: "web"}, Path: "/spec/replicas", Cause: drift.CauseManualChange,
			Why: strings.Repeat("changed by hand ", 4)})
	}
	v.ForPeople = append(v.ForPeople, PersonLine{App: "huge", Namespace: "argocd", Path: "/x", Cause: drift.CauseUnknown, Why: strings.Repeat("y", 5000)})
	msgs := Digest(v)
	if len(msgs) < 2 {
		t.Fatalf("%d messages for 601 lines", len(msgs))
	}
	seen := map[string]int{}
	for i, m := range msgs {
		n := 0
		for _, a := range m.Attachments {
			for _, b := range a.Blocks {
				n++
				if b["type"] != "section" {
					continue
				}
				text := b["text"].(map[string]any)["text"].(string)
				if utf8.RuneCountInString(text) > maxSectionText {
					t.Fatalf("message %d has a section of %d characters", i, utf8.RuneCountInString(text))
				}
				for _, l := range strings.Split(text, "\n") {
					if strings.HasPrefix(l, "• ") {
						seen[l[:strings.Index(l, ":")]]++
					}
				}
			}
		}
		if n > maxBlocks {
			t.Fatalf("message %d has %d blocks", i, n)
		}
		if !strings.HasSuffix(m.Text, fmt.Sprintf("(%d/%d)", i+1, len(msgs))) {
			t.Errorf("message %d is not numbered: %q", i, m.Text)
		}
	}
	if len(seen) != 601 {
		t.Fatalf("%d distinct lines, want 601", len(seen))
	}
	for l, n := range seen {
		if n != 1 {
			t.Fatalf("%s appears %d times", l, n)
		}
	}
}
