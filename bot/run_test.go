package bot

import (
	"errors"
	"testing"

	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/publish"
)

// TestOutcomeIncomplete: a cycle is incomplete when it could not scan an
// instance or publish; an application's own failure does not count.
func TestOutcomeIncomplete(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    Outcome
		want string // "" complete
	}{
		{"everything done", Outcome{Result: plan.CycleResult{Scanned: 3}}, ""},
		{"an application failed", Outcome{Result: plan.CycleResult{Scanned: 3, Errors: []error{errors.New("application argocd/web: read repository")}}}, ""},
		{"an instance down", Outcome{Result: plan.CycleResult{FailedInstances: []string{"prod"}}}, "could not scan Argo CD instance prod"},
		{"two instances down", Outcome{Result: plan.CycleResult{FailedInstances: []string{"prod", "stage"}}}, "could not scan Argo CD instances prod, stage"},
		{"publishing failed", Outcome{Published: publish.Published{Errors: []error{errors.New("a"), errors.New("b")}}}, "2 publishing steps failed"},
		{"both", Outcome{Result: plan.CycleResult{FailedInstances: []string{"prod"}}, Published: publish.Published{Errors: []error{errors.New("a")}}},
			"could not scan Argo CD instance prod; 1 publishing step failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Incomplete()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Incomplete() = %q, want %q", got, tt.want)
			}
		})
	}
}
