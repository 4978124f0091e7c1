package remediations

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// SetValue writes a value in the form Kubernetes stores it: 1 for 1000m, 1Gi for
// 1024Mi, the defaults a CRD or a webhook fills in.
var SetValue = Remedy{
	Kind:  drift.FixSetValue,
	Doc:   "the value is written the way the cluster stores it (`\"1\"` for `1000m`, `1Gi` for `1024Mi`)",
	Title: "Write {paths} of {resource} as the cluster stores it",
	Applies: func(_ *Context, f drift.Finding) string {
		if why := fieldFinding(f); why != "" {
			return why
		}
		if f.Cause != drift.CauseNormalized && f.Cause != drift.CauseWebhookMutation {
			// another owner's value is a moment of it, not a form of Git's
			return fmt.Sprintf("the live value of %s is another owner's (%s), not Git's value as the cluster stores it; writing it into Git would pin it", f.Path, f.Cause)
		}
		if f.Cause == drift.CauseWebhookMutation && drift.EditedText(f.Git, f.Live) {
			return fmt.Sprintf("the webhook rewrote part of the text at %s; writing its output into Git would commit what it substituted, which may be a credential from another system", f.Path)
		}
		if _, same := drift.SemanticallyEqual(f.Git, f.Live); f.Cause == drift.CauseWebhookMutation && f.InGit && !same {
			return fmt.Sprintf("the webhook's value at %s is its own, not Git's value in another form; writing it into Git would commit a value from the cluster, which may be a credential", f.Path)
		}
		return notOnBothSides(f)
	},
	Plan: planSetValue,
}

func planSetValue(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
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
		p.Rationale = Rationale{
			Why:  fmt.Sprintf("the value means the same; the edit to %s writes it the way the cluster stores it, so nothing is left to compare", strings.Join(editFiles(p), " and ")),
			Risk: "none for normalized values; for a webhook's value, Git now states what the webhook enforces",
			Undo: undoText(editFiles(p)...),
		}
	}
	return p, changed
}

func notOnBothSides(f drift.Finding) string {
	if !f.InGit || !f.InLive || len(f.GitPath) == 0 {
		return fmt.Sprintf("%s is not on both sides; there is no value to rewrite", f.Path)
	}
	return ""
}

// setAt sets v at p in doc; it fails when the path runs through a scalar.
func setAt(doc any, p drift.Pointer, v any) (any, bool) {
	if len(p) == 0 {
		return v, true
	}
	parent, ok := p[:len(p)-1].Get(doc)
	if !ok {
		return doc, false
	}
	switch x := parent.(type) {
	case map[string]any:
		x[p[len(p)-1]] = v
		return doc, true
	case []any:
		var i int
		if _, err := fmt.Sscan(p[len(p)-1], &i); err != nil || i < 0 || i >= len(x) {
			return doc, false
		}
		x[i] = v
		return doc, true
	}
	return doc, false
}
