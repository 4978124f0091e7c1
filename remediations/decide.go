package remediations

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// Candidate is one fix kind for a finding and, when it cannot fix the
// finding, why: the safety model refuses it, or the remedy does not apply.
type Candidate struct {
	Kind    drift.FixKind
	Refused string // empty: the kind may be planned
}

// Decision is which fix kinds are planned for a finding, in order: each is
// planned and verified in turn and the first whose plan verifies is kept.
// Nothing is rendered before it is made.
type Decision struct {
	Kinds []drift.FixKind
	// Passed are the kinds that were considered and not planned, and why:
	// refused, not applicable, or not allowed by the policy.
	Passed []Attempt
	// Why says why nothing is planned when Kinds is empty; ByPolicy says the
	// policy allows none of the kinds that apply.
	Why      string
	ByPolicy bool
}

// Attempt is a fix kind that was not used for a finding, and why.
type Attempt struct {
	Kind drift.FixKind
	Why  string
}

func (a Attempt) String() string { return string(a.Kind) + ": " + a.Why }

// Decider decides a finding's fix kinds from every kind's candidacy (in the
// order of Remedies).
type Decider func(f drift.Finding, cands []Candidate) Decision

// Suggested is the decision without a policy: the kind the classifier
// suggested, unless it is refused.
func Suggested(f drift.Finding, cands []Candidate) Decision {
	return Ordered(f, cands, []drift.FixKind{f.Remediation.Kind})
}

// Ordered decides for a finding among the given kinds, in their order: the
// kinds that apply are planned; the others are passed with the reason. With
// none left, Why gives the reason of the suggested kind when it is one of
// them, else says the kinds do not include it (ByPolicy).
func Ordered(f drift.Finding, cands []Candidate, kinds []drift.FixKind) Decision {
	suggested := f.Remediation.Kind
	var d Decision
	listed := false
	for _, k := range kinds {
		listed = listed || k == suggested
		if why := refusal(cands, k); why != "" {
			d.Passed = append(d.Passed, Attempt{Kind: k, Why: why})
			continue
		}
		d.Kinds = append(d.Kinds, k)
	}
	if !listed {
		d.Passed = append([]Attempt{{Kind: suggested, Why: fmt.Sprintf("the policy does not allow %s for %s", suggested, f.Cause)}}, d.Passed...)
	}
	if len(d.Kinds) > 0 {
		return d
	}
	d.ByPolicy = !listed
	var why []string
	for _, a := range d.Passed {
		if a.Kind == suggested {
			why = append([]string{a.Why}, why...)
		} else {
			why = append(why, a.String())
		}
	}
	d.Why = strings.Join(why, "; ")
	return d
}

func refusal(cands []Candidate, k drift.FixKind) string {
	for _, c := range cands {
		if c.Kind == k {
			return c.Refused
		}
	}
	return fmt.Sprintf("%s is not a fix kind driftfix plans", k)
}

// candidates judges every fix kind for a finding: the safety model's
// verdict, then the remedy's own.
func (c *Context) candidates(f drift.Finding) []Candidate {
	out := make([]Candidate, 0, len(Remedies))
	for _, r := range Remedies {
		why, refused := c.refuse(r.Kind, f)
		if !refused && r.Applies != nil {
			why = r.Applies(c, f)
		}
		out = append(out, Candidate{Kind: r.Kind, Refused: strings.TrimSpace(why)})
	}
	return out
}

// fieldFinding says why a fix of a field does not apply to a finding about
// an ignore rule, which only narrow-ignore changes.
func fieldFinding(f drift.Finding) string {
	if f.Cause == drift.CauseBroadIgnore {
		return "the finding is an ignore rule; only narrow-ignore changes it"
	}
	return ""
}
