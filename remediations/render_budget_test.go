package remediations_test

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// TestRenderOverBudgetDropsThePlan adds a template that would expand to
// gigabytes to a chart with an ordinary fix: verification refuses to render
// it, the plan is dropped with the limit as its reason, and planning returns
// normally with the application's findings intact.
func TestRenderOverBudgetDropsThePlan(t *testing.T) {
	for name, tmpl := range map[string]string{
		"nested range until": "{{ range until 1000 }}{{ range until 1000 }}{{ range until 1000 }}x{{ end }}{{ end }}{{ end }}\n",
		"huge string":        "{{ $s := repeat 1000000000 \"x\" }}\n",
	} {
		t.Run(name, func(t *testing.T) {
			snap, err := drift.LoadSnapshot("testdata/helm-set-value.yaml")
			if err != nil {
				t.Fatal(err)
			}
			snap.Repo.Files["charts/cache/templates/bomb.yaml"] = tmpl
			rep, plans, err := pipeline.Fix(snap, remediations.RepoFromSnapshot(snap), drift.Sensitivity{}, now, render.Limits{})
			if err != nil {
				t.Fatalf("a hostile chart must not stop planning: %v", err)
			}
			if len(rep.Findings) == 0 || len(plans) == 0 {
				t.Fatalf("findings %d, plans %d: the diagnosis must still be reported", len(rep.Findings), len(plans))
			}
			dropped := 0
			for _, p := range plans {
				if strings.Contains(p.Dropped, "verification failed") && strings.Contains(p.Dropped, "MaxRenderedBytes") {
					dropped++
				} else if p.Dropped == "" && len(p.Edits) > 0 {
					t.Errorf("%s plan kept: a render over budget must drop it", p.Kind)
				}
			}
			if dropped == 0 {
				t.Errorf("no plan dropped with the limit named: %s", summary(plans))
			}
		})
	}
}

// TestPolicyRenderLimitReachesVerification: a limit tightened in the policy
// (limits.renderedBytes) bounds the renders an ordinary fix is verified with,
// so a plan whose chart renders more is dropped naming that limit, while the
// default lets the same plan through.
func TestPolicyRenderLimitReachesVerification(t *testing.T) {
	for _, tt := range []struct {
		name    string
		lim     render.Limits
		dropped bool
	}{
		{"default limits", render.Limits{}, false},
		{"policy renderedBytes 64", proposals.RenderLimits(config.Limits{RenderedBytes: 64}), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := drift.LoadSnapshot("testdata/helm-set-value.yaml")
			if err != nil {
				t.Fatal(err)
			}
			_, plans, err := pipeline.Fix(snap, remediations.RepoFromSnapshot(snap), drift.Sensitivity{}, now, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			dropped := 0
			for _, p := range plans {
				if strings.Contains(p.Dropped, "MaxRenderedBytes") {
					dropped++
				}
			}
			if (dropped > 0) != tt.dropped {
				t.Fatalf("plans dropped for MaxRenderedBytes: %d, want dropped=%v", dropped, tt.dropped)
			}
		})
	}
}
