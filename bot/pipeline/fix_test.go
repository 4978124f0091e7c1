package pipeline

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// TestFixSharedFixtures plans fixes for every public fixture: each expected
// finding with a fix is covered by a plan of the expected kind, and that plan
// passed verification. It skips when the fixtures are missing (fails where
// DRIFTFIX_REQUIRE_SHARED_FIXTURES=1, as in CI).
func TestFixSharedFixtures(t *testing.T) {
	for _, in := range corpus.SharedFixtures(t) {
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		t.Run(name, func(t *testing.T) {
			s := loadSnapshot(t, in)
			exp := corpus.Expect(t, in)
			_, departed := depart(exp, filepath.Base(in))
			_, plans, err := Fix(s, remediations.RepoFromSnapshot(s), drift.Sensitivity{}, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range exp.Findings {
				if e.Remediation == "none" {
					continue
				}
				var plan *remediations.Plan
				for i := range plans {
					for _, f := range plans[i].Findings {
						if f.Resource.Kind == e.Kind && f.Resource.Name == e.Name && f.Path.String() == e.Path {
							plan = &plans[i]
						}
					}
				}
				if _, ok := departed[e.Key()]; ok {
					// No proof, no hand-over: no plan may fix it.
					if plan != nil && len(plan.Edits) > 0 {
						t.Errorf("%s/%s %s: a plan edits files without a grant", e.Kind, e.Name, e.Path)
					}
					continue
				}
				if plan == nil {
					t.Errorf("no plan fixes %s/%s %s", e.Kind, e.Name, e.Path)
					continue
				}
				if string(plan.Kind) != e.Remediation {
					t.Errorf("%s/%s %s: plan kind %s, want %s", e.Kind, e.Name, e.Path, plan.Kind, e.Remediation)
				}
				// A plan that edits a file is verified; one that edits none is
				// an instruction, never verified.
				switch {
				case plan.Dropped != "":
					t.Errorf("%s/%s %s: plan dropped: %q", e.Kind, e.Name, e.Path, plan.Dropped)
				case len(plan.Edits) > 0 && !plan.Verified():
					t.Errorf("%s/%s %s: plan edits %d files but is not verified", e.Kind, e.Name, e.Path, len(plan.Edits))
				case len(plan.Edits) == 0 && plan.Instructions == "":
					t.Errorf("%s/%s %s: plan has neither edits nor instructions", e.Kind, e.Name, e.Path)
				case len(plan.Edits) == 0 && (plan.Verified() || plan.Verification != ""):
					t.Errorf("%s/%s %s: plan edits no file but says verified: %q", e.Kind, e.Name, e.Path, plan.Verification)
				}
			}
		})
	}
}
