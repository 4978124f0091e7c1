package remediations

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// AdoptLive writes a change made by hand into Git, for a person to decide
// on: only for manual changes, only when the policy says manualChanges:
// adopt, never for a security-relevant path, and always as a draft pull
// request labelled driftfix/adopt.
var AdoptLive = Remedy{
	Kind:  drift.FixAdoptLive,
	Doc:   "a change made by hand is written into Git as the live object has it, in a draft pull request for a person to decide on (policy `manualChanges: adopt`; never a security-relevant path)",
	Title: "Adopt the hand-made {paths} of {resource} into Git",
	Applies: func(_ *Context, f drift.Finding) string {
		if f.Cause != drift.CauseManualChange {
			return fmt.Sprintf("%s is not a change made by hand (%s); only those are adopted", f.Path, f.Cause)
		}
		return notOnBothSides(f)
	},
	Plan: planAdoptLive,
}

// AdoptLabel marks the draft pull requests that adopt a change made by hand.
const AdoptLabel = "driftfix/adopt"

func planAdoptLive(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
	p, changed := c.planFieldOps(group, fieldOp{
		check: notOnBothSides,
		edit: func(doc int, p drift.Pointer, f drift.Finding) func([]byte) ([]byte, error) {
			return func(b []byte) ([]byte, error) { return yamledit.SetScalar(b, doc, p, f.Live) }
		},
		onTarget: func(t any, gp drift.Pointer, f drift.Finding) (any, bool) {
			return setAt(t, gp, drift.DeepCopy(f.Live))
		},
	})
	if len(p.Edits) > 0 {
		var who []string
		for _, f := range group {
			who = append(who, fmt.Sprintf("%s was changed by hand by %s", f.Path, changedBy(f)))
		}
		p.Rationale = Rationale{
			Why: fmt.Sprintf("%s; this draft writes the live value into %s so that Git says what runs, if that change should stay. Close it and sync to revert the change instead",
				strings.Join(who, "; "), strings.Join(editFiles(p), " and ")),
			Risk: "a change nobody reviewed becomes what Git declares: check who made it and why before marking this ready",
			Undo: undoText(editFiles(p)...),
		}
	}
	return p, changed
}

// changedBy names the last field manager of a finding's path and when it wrote.
func changedBy(f drift.Finding) string {
	if len(f.Owners) == 0 {
		return "an unknown field manager"
	}
	o := f.Owners[len(f.Owners)-1]
	s := o.Manager
	if o.Operation != "" {
		s += " (" + o.Operation
		if o.Time != "" {
			s += " at " + o.Time
		}
		s += ")"
	}
	return s
}
