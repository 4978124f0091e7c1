package remediations

import (
	"errors"
	"fmt"
	"sort"

	"github.com/driftfix/driftfix/bot/drift"
)

// fieldOp is what remove-field and set-value do to one field: the edit of the
// source document, and the same change to the desired object.
type fieldOp struct {
	check    func(f drift.Finding) string // why the finding cannot take this op, or ""
	every    bool                         // edit every layer that writes the field, not only the last
	remove   bool                         // the field goes away (else it takes the live value)
	edit     func(doc int, p drift.Pointer, f drift.Finding) func([]byte) ([]byte, error)
	onTarget func(target any, gp drift.Pointer, f drift.Finding) (any, bool)
}

// planFieldOps edits each finding's field where it is written: the manifest of
// a plain directory, or the last Kustomize patch (else the base) that sets it.
// It returns the plan and the snapshot to verify it on.
func (c *Context) planFieldOps(group []drift.Finding, op fieldOp) (Plan, *drift.Snapshot) {
	ref := group[0].Resource
	p := Plan{Resource: ref}
	idx := resourceIndex(c.Snapshot, ref)
	if idx < 0 {
		p.Dropped = fmt.Sprintf("%s is not in the snapshot", ref)
		return p, nil
	}
	for _, f := range group {
		if why := op.check(f); why != "" {
			p.Dropped = why
			return p, nil
		}
	}
	findings := append([]drift.Finding(nil), group...)
	sort.SliceStable(findings, func(i, j int) bool { return comparePointers(findings[i].GitPath, findings[j].GitPath) > 0 })
	target := c.Snapshot.Resources[idx].Target
	type fileSteps struct {
		file  string
		steps []func([]byte) ([]byte, error)
	}
	var order []string
	byFile := map[string]*fileSteps{}
	add := func(file string, st func([]byte) ([]byte, error)) {
		if byFile[file] == nil {
			byFile[file] = &fileSteps{file: file}
			order = append(order, file)
		}
		byFile[file].steps = append(byFile[file].steps, st)
	}
	kind := sourceType(c.Snapshot, c.Repo)
	switch kind {
	case "helm":
		for _, f := range findings {
			file, step, why := c.helmFieldEdit(ref, f.GitPath, op.remove, f.Live)
			if why != "" {
				p.Dropped = why
				return p, nil
			}
			add(file, step)
		}
	case "kustomize":
		for _, f := range findings {
			locs, mps, why := c.locateKustomize(ref, target, f.GitPath)
			if why != "" {
				p.Dropped = why
				return p, nil
			}
			if !op.every {
				locs, mps = locs[len(locs)-1:], mps[len(mps)-1:]
			}
			if file, step, keep, note, why := c.ownPatchEdit(ref, target, f, locs, op.remove); why != "" {
				p.Dropped = why
				return p, nil
			} else if step != nil {
				// a vendored copy sets the field: the repository's own patch takes the change (vendored.go)
				for _, i := range keep {
					add(locs[i].file, op.edit(locs[i].doc, mps[i], f))
				}
				add(file, step)
				p.checked = note
				continue
			}
			for i := range locs {
				add(locs[i].file, op.edit(locs[i].doc, mps[i], f))
			}
		}
	default:
		loc, why := c.locateResource(ref)
		if why != "" {
			p.Dropped = why
			return p, nil
		}
		for _, f := range findings {
			add(loc.file, op.edit(loc.doc, f.GitPath, f))
		}
	}
	edited := Repo{}
	for k, v := range c.Repo {
		edited[k] = v
	}
	for _, file := range order {
		e, err := applyEdits(c.Repo, file, byFile[file].steps...)
		if errors.Is(err, errAlreadyApplied) {
			continue
		}
		if err != nil {
			p.Dropped = err.Error()
			return p, nil
		}
		p.Edits = append(p.Edits, e)
		edited[file] = e.After
	}
	if len(p.Edits) == 0 {
		return p, nil
	}
	if kind != "directory" {
		changed, err := c.rebuild(edited)
		if err != nil {
			p.Dropped = "verification failed: " + err.Error()
			return p, nil
		}
		return p, changed
	}
	t := drift.DeepCopy(target)
	for _, f := range findings {
		var ok bool
		if t, ok = op.onTarget(t, f.GitPath, f); !ok {
			p.Dropped = fmt.Sprintf("%s cannot be changed in the desired object", f.GitPath)
			return p, nil
		}
	}
	return p, withTarget(c.Snapshot, idx, t.(map[string]any))
}

func editFiles(p Plan) []string {
	var out []string
	for _, e := range p.Edits {
		out = append(out, e.File)
	}
	return out
}
