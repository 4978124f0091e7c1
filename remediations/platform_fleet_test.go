package remediations_test

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
)

// TestPlatformVerify: a platform change is verified only when re-diagnosing
// each application with the new argocd-cm ends every one of its shared
// findings; a rule that misses one says which application and path.
func TestPlatformVerify(t *testing.T) {
	sens := config.Defaults().Sensitivity()
	apps := map[string]remediations.PlatformApp{}
	g := &remediations.FleetGroup{Instance: "main", Source: "MutatingWebhookConfiguration policy-mutator", Kind: "Deployment", Cause: drift.CauseWebhookMutation, Findings: map[string][]drift.Finding{}}
	var pfs []remediations.PlatformFinding
	for _, name := range []string{"a", "b", "c"} {
		s := load(t, "testdata/app-ignore-webhook.yaml")
		drift.Map(s.Application, "metadata")["name"] = name
		rep, err := pipeline.Diagnose(s, drift.Sensitivity{})
		if err != nil {
			t.Fatal(err)
		}
		app := "main/argocd/" + name
		apps[app] = remediations.PlatformApp{Snapshot: s, Report: rep, Sensitivity: sens}
		for _, f := range rep.Findings {
			if src, ok := remediations.PlatformSource(f); !ok || src != g.Source {
				t.Fatalf("unexpected finding %s %s (%s)", f.Resource, f.Path, f.Cause)
			}
			g.Findings[app] = append(g.Findings[app], f)
			pf := remediations.PlatformFinding{App: app, Finding: f, Target: s.Resources[0].Target, Live: s.Resources[0].Live, DryRun: s.Resources[0].DryRun}
			pfs = append(pfs, pf)
		}
	}
	rule, why := remediations.PlanPlatformRule(pfs, drift.Sensitivity{})
	if why != "" {
		t.Fatal(why)
	}
	for _, tc := range []struct {
		name string
		rule remediations.PlatformRule
		want string // verified text, or why not
	}{
		{"the planned rule", rule, "re-diagnosed all 3 applications with the new argocd-cm in their cluster context: 3 findings gone, no new difference"},
		{"a rule at another label", remediations.PlatformRule{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/metadata/labels/policy.example.com~1owner"}},
			"main/argocd/a: Deployment shop/orders /metadata/labels/policy.example.com~1team still differs with the new argocd-cm"},
		{"a rule for another kind", remediations.PlatformRule{Group: "apps", Kind: "StatefulSet", JSONPointers: rule.JSONPointers, JQPathExpressions: rule.JQPathExpressions},
			"main/argocd/a: Deployment shop/orders /metadata/labels/policy.example.com~1team still differs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verified, why, err := g.Verify(apps, remediations.PlatformEdit{Rule: tc.rule}, pipeline.Diagnose)
			if err != nil {
				t.Fatal(err)
			}
			got := verified
			if why != "" {
				got = why
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
