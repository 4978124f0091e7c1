package templates

import (
	"flag"
	"os"
	"strings"
	"testing"

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
