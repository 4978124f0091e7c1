package remediations

import (
	"errors"
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// RemoveField stops Git declaring a field that another owner sets: replicas an
// HPA owns, a caBundle a controller injects, an empty value the API server drops.
var RemoveField = Remedy{
	Kind: drift.FixRemoveField,
	Doc:  "remove the field from the manifest so its real owner keeps it",
	Plan: planRemoveField,
}

func planRemoveField(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
	ref := group[0].Resource
	p := Plan{Resource: ref}
	idx := resourceIndex(c.Snapshot, ref)
	loc, why := c.locateResource(ref)
	if why != "" || idx < 0 {
		p.Dropped = why
		return p, nil
	}
	var paths []drift.Pointer
	for _, f := range group {
		if !f.InGit || f.GitPath == nil || len(f.GitPath) == 0 {
			p.Dropped = fmt.Sprintf("%s is not declared in Git; there is nothing to remove", f.Path)
			return p, nil
		}
		paths = append(paths, f.GitPath)
	}
	sortDeepestFirst(paths)
	var steps []func([]byte) ([]byte, error)
	target := copyValue(c.Snapshot.Resources[idx].Target)
	for _, gp := range paths {
		gp := gp
		steps = append(steps, func(b []byte) ([]byte, error) { return yamledit.Remove(b, loc.doc, gp) })
		target = removeClimb(target, gp)
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
	var names []string
	for _, gp := range paths {
		names = append(names, gp.String())
	}
	p.Rationale = Rationale{
		Why:  fmt.Sprintf("Git stops declaring %s in %s; nothing else in the manifest changes", strings.Join(names, ", "), loc.file),
		Risk: removeRisk(group[0]),
		Undo: undoText(loc.file),
	}
	return p, withTarget(c.Snapshot, idx, target.(map[string]any))
}

func removeRisk(f drift.Finding) string {
	switch f.Cause {
	case drift.CauseHPAReplicas:
		return "the workload keeps the replica count the HorizontalPodAutoscaler set; if the HPA is deleted later, replicas stay where they are (a new install starts at 1 until the HPA scales it)"
	case drift.CauseControllerWrite:
		return "the controller that owns the field keeps writing it; Argo CD stops overwriting it on every sync"
	case drift.CauseNormalized:
		return "none: the API server already drops this value"
	}
	return "the field's value is then whatever the cluster holds"
}
