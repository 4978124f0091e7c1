package remediations

import (
	"errors"
	"fmt"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// SetValue writes a value in the form Kubernetes stores it: 1 for 1000m, 1Gi for
// 1024Mi, the defaults a CRD or a webhook fills in.
var SetValue = Remedy{
	Kind: drift.FixSetValue,
	Doc:  "write the value in the form the cluster stores",
	Plan: planSetValue,
}

func planSetValue(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
	ref := group[0].Resource
	p := Plan{Resource: ref}
	idx := resourceIndex(c.Snapshot, ref)
	loc, why := c.locateResource(ref)
	if why != "" || idx < 0 {
		p.Dropped = why
		return p, nil
	}
	target := copyValue(c.Snapshot.Resources[idx].Target)
	var steps []func([]byte) ([]byte, error)
	for _, f := range group {
		if !f.InGit || !f.InLive || len(f.GitPath) == 0 {
			p.Dropped = fmt.Sprintf("%s is not on both sides; there is no value to rewrite", f.Path)
			return p, nil
		}
		gp, val := f.GitPath, f.Live
		steps = append(steps, func(b []byte) ([]byte, error) { return yamledit.SetScalar(b, loc.doc, gp, val) })
		var ok bool
		if target, ok = setAt(target, gp, copyValue(val)); !ok {
			p.Dropped = fmt.Sprintf("%s cannot be set in the desired object", gp)
			return p, nil
		}
	}
	e, err := applyEdits(c.Repo, loc.file, steps...)
	if errors.Is(err, errAlreadyApplied) {
		return p, nil
	}
	if err != nil {
		p.Dropped = err.Error()
		return p, nil
	}
	p.Edits = []Edit{e}
	p.Rationale = Rationale{
		Why:  fmt.Sprintf("the value means the same; %s now spells it the way the cluster stores it, so nothing is left to compare", loc.file),
		Risk: "none for normalized values; for a webhook's value, Git now states what the webhook enforces",
		Undo: undoText(loc.file),
	}
	return p, withTarget(c.Snapshot, idx, target.(map[string]any))
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
