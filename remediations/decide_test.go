package remediations_test

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
)

// TestPlanFallsBackToNextAllowedKind: with hpa-replicas allowed
// [remove-field, ignore-difference], a replicas field whose manifest cannot
// be told apart (two files declare the Deployment) cannot be removed, so the
// ignore rule is planned, verified and written to the Application manifest.
// Without the policy only remove-field is planned, and it is dropped.
func TestPlanFallsBackToNextAllowedKind(t *testing.T) {
	load := func(t *testing.T) *drift.Snapshot {
		s, err := drift.LoadSnapshot("testdata/plain-remove-hpa.yaml")
		if err != nil {
			t.Fatal(err)
		}
		web := s.Repo.Files["apps/shop/web.yaml"]
		s.Repo.Files["apps/shop/web-copy.yaml"] = web[strings.Index(web, "apiVersion: apps/v1"):]
		s.Repo.Files["argocd/shop.yaml"] = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: shop\n  namespace: argocd\nspec:\n  project: default\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: shop\n  source:\n    repoURL: https://git.example.com/shop.git\n    path: apps/shop\n    targetRevision: main\n"
		return s
	}
	cfg, err := config.Parse([]byte("argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy: {fixes: {hpa-replicas: [remove-field, ignore-difference]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pol := cfg.For("default", "shop", "argocd")

	s := load(t)
	_, plans, err := pipeline.FixWith(s, remediations.RepoFromSnapshot(s), pipeline.FixOptions{Now: now, Decide: pol.Decide})
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 {
		t.Fatalf("want one plan, got %d:\n%s", len(plans), summary(plans))
	}
	p := plans[0]
	if p.Kind != drift.FixIgnoreDifference || p.Dropped != "" || p.Verification == "" || len(p.Edits) != 1 || p.Edits[0].File != "argocd/shop.yaml" {
		t.Fatalf("want a verified ignore-difference in argocd/shop.yaml:\n%s", summary(plans))
	}
	if !strings.Contains(string(p.Edits[0].After), "/spec/replicas") {
		t.Errorf("the rule does not name /spec/replicas:\n%s", p.Edits[0].After)
	}
	if len(p.Passed) != 1 || p.Passed[0].Kind != drift.FixRemoveField || !strings.Contains(p.Passed[0].Why, "2 manifests of Deployment shop/web") {
		t.Errorf("the plan must say why remove-field was passed over: %+v", p.Passed)
	}

	s = load(t)
	_, plans, err = pipeline.FixWith(s, remediations.RepoFromSnapshot(s), pipeline.FixOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || plans[0].Kind != drift.FixRemoveField || !strings.Contains(plans[0].Dropped, "2 manifests") || len(plans[0].Passed) != 0 {
		t.Fatalf("without a policy the suggested remove-field alone is planned, and dropped:\n%s", summary(plans))
	}
}

// TestPlanSkipsKindsThatDoNotApply: a kind that cannot fix the finding is
// passed over before anything is rendered, with the reason.
func TestPlanSkipsKindsThatDoNotApply(t *testing.T) {
	plans := planUnderPolicy(t, "{hpa-replicas: [set-value, tracking-method]}", "testdata/plain-remove-hpa.yaml", "shop")
	if len(plans) != 1 || plans[0].Kind != drift.FixRemoveField || len(plans[0].Edits) != 0 {
		t.Fatalf("want one plan refused by the policy:\n%s", summary(plans))
	}
	for _, want := range []string{"the policy does not allow remove-field for hpa-replicas", "set-value: the live value of /spec/replicas is another owner's", "tracking-method: the tracking method ends only a tracking clash"} {
		if !strings.Contains(plans[0].Dropped, want) {
			t.Errorf("dropped %q lacks %q", plans[0].Dropped, want)
		}
	}
}

// TestSetValueNeverCommitsWhatAWebhookFilledIn: what a webhook wrote that
// is not Git's value in another form (a substitution into a text Git
// declares, such as a credential filled into a config file, or a whole value
// of its own) is never written into Git. A ConfigMap's data is on no entry
// of the allow-list of hand-overs, so the finding goes to a person and no
// plan is made even under a policy that allows only set-value; set-value
// itself refuses the webhook's value too.
func TestSetValueNeverCommitsWhatAWebhookFilledIn(t *testing.T) {
	for _, tc := range []struct{ snapshot, secret, why string }{
		{"testdata/plain-webhook-fills-text.yaml", "s3cr3t-from-store", "would commit what it substituted"},
		{"testdata/plain-webhook-replaces-value.yaml", "tok-s3cr3t-from-store", "not Git's value in another form"},
	} {
		t.Run(tc.snapshot, func(t *testing.T) {
			plans := planUnderPolicy(t, "{webhook-mutation: [set-value]}", tc.snapshot, "metastore")
			for _, p := range plans {
				for _, e := range p.Edits {
					if strings.Contains(string(e.After), tc.secret) {
						t.Fatalf("%s writes the webhook's value into %s:\n%s", p.Kind, e.File, e.After)
					}
				}
				if len(p.Edits) != 0 {
					t.Fatalf("a plan edits files for a write no entry of the allow-list hands over:\n%s", summary(plans))
				}
			}
			s, err := drift.LoadSnapshot(tc.snapshot)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := pipeline.Diagnose(s, drift.Sensitivity{})
			if err != nil {
				t.Fatal(err)
			}
			var found *drift.Finding
			for i := range rep.Findings {
				if rep.Findings[i].Cause == drift.CauseWebhookMutation {
					found = &rep.Findings[i]
				}
			}
			if found == nil || found.Remediation.Kind != drift.FixNone || !strings.Contains(found.Remediation.Reason, "allow-list of hand-overs") {
				t.Fatalf("want the webhook's write left to a person by the allow-list of hand-overs: %+v", found)
			}
			if why := remediations.SetValue.Applies(nil, *found); !strings.Contains(why, tc.why) {
				t.Fatalf("set-value applies to the webhook's value (%q), want refused with %q", why, tc.why)
			}
		})
	}
}

// planUnderPolicy plans the snapshot's fixes under a policy whose fixes are
// the given YAML mapping, for application app in namespace argocd.
func planUnderPolicy(t *testing.T, fixes, snapshot, app string) []remediations.Plan {
	t.Helper()
	cfg, err := config.Parse([]byte("argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy: {fixes: " + fixes + "}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := drift.LoadSnapshot(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	_, plans, err := pipeline.FixWith(s, remediations.RepoFromSnapshot(s), pipeline.FixOptions{Now: now, Decide: cfg.For("", app, "argocd").Decide})
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

// TestEditSharedWithAnotherApplication: a fix is verified by diagnosing its
// own application again, so an edit to a file another Application of the
// repository renders too (a Kustomize base staging and prod share) is
// dropped, naming the file and the application; the same fix stands when
// the other application reads another repository.
func TestEditSharedWithAnotherApplication(t *testing.T) {
	plans := planUnderPolicy(t, "{}", "testdata/kustomize-shared-base.yaml", "shop")
	if len(plans) != 1 || len(plans[0].Edits) != 0 ||
		!strings.Contains(plans[0].Dropped, "the edit changes apps/shop/base/web.yaml, which Application shop-staging (argocd/shop-staging.yaml, path apps/shop/overlays/staging) also renders") {
		t.Fatalf("want the one plan dropped naming the base and shop-staging:\n%s", summary(plans))
	}
	plans = planUnderPolicy(t, "{}", "testdata/kustomize-overlay.yaml", "shop")
	if len(plans) != 1 || plans[0].Dropped != "" || len(plans[0].Edits) != 2 {
		t.Fatalf("with no other application reading the base, the plan stands:\n%s", summary(plans))
	}
}
