package remediations_test

import (
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/templates"
)

func TestPRViewAndFingerprint(t *testing.T) {
	s := load(t, "testdata/plain-remove-hpa.yaml")
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	_, plans, err := pipeline.Fix(s, remediations.RepoFromSnapshot(s), drift.Sensitivity{}, now, render.Limits{})
	if err != nil || len(plans) != 1 {
		t.Fatalf("plans %d, %v", len(plans), err)
	}
	v := remediations.PRView("shop", "argocd", "https://argocd.example.com", plans[0])
	if v.CauseDoc == "" || len(v.Findings) != 1 || v.Findings[0].Owner != "kube-controller-manager (scale)" || v.Findings[0].Git != "`2`" || len(v.Diffs) != 1 {
		t.Fatalf("view = %+v", v)
	}
	body, err := templates.PRBody(v)
	if err != nil || !strings.Contains(body, "-  replicas: 2   # see platform/hpa.yaml") || !strings.Contains(body, "driftfix:fingerprint="+v.Fingerprint) {
		t.Fatalf("body (%v):\n%s", err, body)
	}
	// The same fix has the same fingerprint in a later cycle; another fix does not.
	_, again, _ := pipeline.Fix(s, remediations.RepoFromSnapshot(s), drift.Sensitivity{}, now.Add(time.Hour), render.Limits{})
	if remediations.Fingerprint("shop", again[0]) != v.Fingerprint {
		t.Error("the fingerprint of an unchanged fix changed")
	}
	if remediations.Fingerprint("other-app", plans[0]) == v.Fingerprint {
		t.Error("another application's fix has the same fingerprint")
	}
	changed := plans[0]
	changed.Edits = append([]remediations.Edit(nil), changed.Edits...)
	changed.Edits[0].After = append([]byte("# edited by hand\n"), changed.Edits[0].After...)
	if remediations.Fingerprint("shop", changed) == v.Fingerprint {
		t.Error("a fix that writes something else must get a new fingerprint")
	}
	if b := templates.Branch("driftfix/", "Shop Web", drift.CauseHPAReplicas, v.Fingerprint); b != "driftfix/shop-web/hpa-replicas-"+v.Fingerprint {
		t.Errorf("branch %q", b)
	}
}

// TestFixKeyFollowsAMovedRule: after a narrowing of ignoreDifferences[0] is
// merged, the rule that was [1] is [0]; its fix keeps its own key (and
// branch) instead of taking the merged fix's, which would hold it back as
// "merged already".
func TestFixKeyFollowsAMovedRule(t *testing.T) {
	app := drift.Ref{Group: "argoproj.io", Kind: "Application", Namespace: "argocd", Name: "shop"}
	cm := map[string]any{"kind": "ConfigMap", "jsonPointers": []any{"/data"}}
	dep := map[string]any{"group": "apps", "kind": "StatefulSet", "managedFieldsManagers": []any{"argocd-controller"}}
	plan := func(i string, rule any) remediations.Plan {
		return remediations.Plan{Kind: drift.FixNarrowIgnore, Resource: app, Findings: []drift.Finding{
			{Resource: app, Path: drift.Pointer{"spec", "ignoreDifferences", i}, Cause: drift.CauseBroadIgnore, Git: rule, InGit: true}}}
	}
	merged, second := remediations.FixKey("argocd/shop", plan("0", cm)), remediations.FixKey("argocd/shop", plan("1", dep))
	if got := remediations.FixKey("argocd/shop", plan("0", dep)); got != second || got == merged {
		t.Errorf("the moved rule's fix key is %s; want its own %s, not the merged fix's %s", got, second, merged)
	}
}

// load reads a snapshot of the corpora.
func load(t testing.TB, file string) *drift.Snapshot {
	t.Helper()
	s, err := drift.LoadSnapshot(file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
