package pipeline

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/remediations"
)

// TestAdoptLiveOnlyUnderPolicy: over every corpus, a change made by hand is
// adopted (its live value written into Git, verified) only under policy
// manualChanges: adopt, only for manual changes, and never on a
// security-relevant path, which stays for a person with the reason.
func TestAdoptLiveOnlyUnderPolicy(t *testing.T) {
	adopt, err := config.Parse([]byte("argocd: [{name: a, server: https://a.example, tokenEnv: T}]\npolicy: {manualChanges: adopt}\n"))
	if err != nil {
		t.Fatal(err)
	}
	report, err := config.Parse([]byte("argocd: [{name: a, server: https://a.example, tokenEnv: T}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	files := corpus.Snapshots(t, "testdata/cases", ".yaml")
	files = append(files, corpus.Snapshots(t, "testdata/realworld", ".yaml")...)
	files = append(files, corpus.Snapshots(t, "testdata/hostile", ".yaml")...)
	adopted, refused := 0, 0
	for _, in := range files {
		s := loadSnapshot(t, in)
		for _, pol := range []config.Policy{adopt.Policy, report.Policy} {
			opt := FixOptions{Sensitivity: pol.Sensitivity(), Now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), Decide: pol.Decide}
			rep, plans, err := FixWith(s, remediations.RepoFromSnapshot(s), opt)
			if err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			for _, p := range plans {
				if p.Kind != drift.FixAdoptLive {
					continue
				}
				name := filepath.Base(in) + " " + p.Resource.String()
				if pol.ManualChanges != "adopt" {
					t.Errorf("%s: adopt-live planned without manualChanges: adopt", name)
				}
				for _, f := range p.Findings {
					if f.Cause != drift.CauseManualChange {
						t.Errorf("%s: adopt-live for a %s finding", name, f.Cause)
					}
					if m, ok := opt.Sensitivity.Within(f.Resource, f.Path); ok && p.Dropped == "" {
						t.Errorf("%s: adopts the security-relevant %s (%s)", name, f.Path, m.Reason)
					}
				}
				if p.Dropped == "" && len(p.Edits) > 0 {
					if p.Verification == "" {
						t.Errorf("%s: an adoption proposed unverified", name)
					}
					adopted++
				}
			}
			if pol.ManualChanges != "adopt" {
				continue
			}
			for _, f := range rep.Findings {
				if f.Cause != drift.CauseManualChange {
					continue
				}
				if _, ok := opt.Sensitivity.Within(f.Resource, f.Path); ok {
					refused++
				}
			}
		}
	}
	if adopted < 3 || refused < 1 {
		t.Fatalf("the corpora must hold adoptable manual changes and security-relevant ones: %d adopted, %d on sensitive paths", adopted, refused)
	}
	t.Logf("%d adoptions planned and verified; %d manual changes on security-relevant paths left for people", adopted, refused)
}
