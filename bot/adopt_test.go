package bot

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// manualSnapshot is a Kustomize application an on-call engineer changed by
// hand with kubectl edit: a pod-template annotation and an env value
// (security-relevant: never adopted). Automated sync, no self-heal.
const manualSnapshot = "testdata/realworld/36-kubectl-edit-template-annotation-and-env-value.yaml"

// manualWorld serves the application changed by hand, reading acme/checkout.
func manualWorld(t *testing.T, cfg string) (*world, time.Time) {
	t.Helper()
	w := newWorld(t, cfg)
	w.base = corpus.Load(t, manualSnapshot)
	w.addRepo("checkout")
	s := corpus.Load(t, manualSnapshot)
	drift.Map(s.Application, "spec", "source")["repoURL"] = w.repoURL["checkout"]
	st := drift.Map(s.Application, "status")
	st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": worldNow.Add(-2 * time.Hour).Format(time.RFC3339)}
	st["sync"] = map[string]any{"status": "OutOfSync", "revision": "main"}
	w.argo.Add(s)
	return w, worldNow
}

// TestAdoptDraftPRNamesWhoAndWhen: with manualChanges: adopt, a change made
// by hand becomes a draft PR labelled driftfix/adopt that writes the live
// value into Git and says who changed it and when (from managedFields); the
// security-relevant env value is never adopted and stays on the dashboard
// for people, saying Argo CD will not revert it without self-heal. With
// report (the default) no PR opens and both stay for people.
func TestAdoptDraftPRNamesWhoAndWhen(t *testing.T) {
	for _, tc := range []struct {
		mode string
		prs  int
	}{{"adopt", 1}, {"report", 0}} {
		t.Run(tc.mode, func(t *testing.T) {
			cfg := strings.Replace(dashboardConfig, "dashboard: {enabled: true}}", "dashboard: {enabled: true}, manualChanges: "+tc.mode+"}", 1)
			w, now := manualWorld(t, cfg)
			w.cycle(&now)
			prs := w.gh.PullRequests("acme", "checkout")
			if len(prs) != tc.prs {
				t.Fatalf("%d PRs, want %d: %+v", len(prs), tc.prs, prs)
			}
			d := w.dashboard("checkout")
			if !strings.Contains(d.Body, "`/spec/template/spec/containers/0/env/1/value` — `manual-change`") {
				t.Errorf("the env value changed by hand is left for people on the dashboard:\n%s", d.Body)
			}
			if !strings.Contains(d.Body, "automated sync without selfHeal leaves it until Git changes or someone syncs") {
				t.Errorf("the dashboard must say Argo CD does not revert it by itself:\n%s", d.Body)
			}
			if tc.prs == 0 {
				return
			}
			pr := prs[0]
			if !pr.Draft || !slices.Contains(pr.Labels, "driftfix/adopt") || pr.Author != "driftfix[bot]" {
				t.Errorf("an adoption is a draft labelled driftfix/adopt, opened by driftfix: %+v", pr)
			}
			for _, want := range []string{"safe-to-evict", "was changed by hand by kubectl-edit (Update at 2025-04-09T23:18:52Z)", "apps/checkout/base/deployment.yaml"} {
				if !strings.Contains(pr.Body, want) {
					t.Errorf("the body must say %q:\n%s", want, pr.Body)
				}
			}
			if strings.Contains(pr.Title+pr.Body, "env/1/value was changed") {
				t.Errorf("the security-relevant env value must not be adopted:\n%s", pr.Body)
			}
			got, err := w.gh.File("acme", "checkout", pr.Head, "apps/checkout/base/deployment.yaml")
			if err != nil || !strings.Contains(got, `cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`) {
				t.Errorf("the branch must hold the live value (%v):\n%s", err, got)
			}
		})
	}
}
