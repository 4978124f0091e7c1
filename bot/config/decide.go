package config

import (
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
)

// Decide is where the policy chooses a finding's fix kinds, before anything
// is rendered: for a cause the policy lists, its allowed kinds in the
// policy's order (each is planned in turn and the first that verifies is
// kept); for a cause it does not list, the kind the classifier suggested.
// A kind the safety model refuses or that does not apply to the finding
// (cands, in the order of remediations.Remedies) is passed over with the
// reason. A finding driftfix gives no fix (a manual change, an unknown
// cause, a sensitive path) is never planned, whatever the policy lists.
//
// The one exception is a manual change under manualChanges: adopt, which is
// planned as adopt-live (a draft pull request a person decides on), unless the
// safety model refuses it for a security-relevant path.
func (p Policy) Decide(f drift.Finding, cands []remediations.Candidate) remediations.Decision {
	if f.Cause == drift.CauseManualChange && p.ManualChanges == "adopt" {
		for _, c := range cands {
			if c.Kind == drift.FixAdoptLive && c.Refused != "" {
				return remediations.Decision{Why: f.Remediation.Reason + "; not adopted: " + c.Refused}
			}
		}
		return remediations.Decision{Kinds: []drift.FixKind{drift.FixAdoptLive}}
	}
	if f.Remediation.Kind == drift.FixNone || f.Remediation.Kind == "" {
		return remediations.Decision{Why: f.Remediation.Reason}
	}
	kinds, listed := p.Fixes[f.Cause]
	if !listed {
		return remediations.Suggested(f, cands)
	}
	return remediations.Ordered(f, cands, kinds)
}
