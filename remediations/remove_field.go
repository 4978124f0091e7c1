package remediations

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// RemoveField stops Git declaring a field that another owner sets: replicas an
// HPA owns, a caBundle a controller injects, an empty value the API server drops.
var RemoveField = Remedy{
	Kind:  drift.FixRemoveField,
	Doc:   "Git stops declaring a field another owner sets (HPA replicas, injected caBundle, empty values)",
	Title: "Stop declaring {paths} of {resource}",
	Applies: func(_ *Context, f drift.Finding) string {
		if why := fieldFinding(f); why != "" {
			return why
		}
		return notInGit(f)
	},
	Plan: planRemoveField,
}

func planRemoveField(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
	p, changed := c.planFieldOps(group, fieldOp{
		every:  true,
		remove: true,
		check:  notInGit,
		edit: func(doc int, p drift.Pointer, _ drift.Finding) func([]byte) ([]byte, error) {
			return func(b []byte) ([]byte, error) { return yamledit.Remove(b, doc, p) }
		},
		onTarget: func(t any, gp drift.Pointer, _ drift.Finding) (any, bool) { return removeClimb(t, gp), true },
	})
	if len(p.Edits) > 0 {
		var names []string
		for _, f := range group {
			names = append(names, f.GitPath.String())
		}
		p.Rationale = Rationale{
			Why:  fmt.Sprintf("Git stops declaring %s (edited: %s); nothing else in the rendered manifests changes", strings.Join(names, ", "), strings.Join(editFiles(p), ", ")),
			Risk: removeRisk(c, group[0]),
			Undo: undoText(editFiles(p)...),
		}
	}
	return p, changed
}

func notInGit(f drift.Finding) string {
	if !f.InGit || len(f.GitPath) == 0 {
		return fmt.Sprintf("%s is not declared in Git; there is nothing to remove", f.Path)
	}
	return ""
}

// removeRisk is the risk of Git no longer declaring a finding's field: its
// cause's (Classifier.Risk), else that the cluster's value stays. Removing
// a workload's replicas under client-side apply also resets them for a
// moment, whatever the cause.
func removeRisk(c *Context, f drift.Finding) string {
	risk := classifiers.Of(f.Cause).Risk
	if risk == "" {
		risk = "the field's value is then whatever the cluster holds"
	}
	if f.Path.String() != "/spec/replicas" {
		return risk
	}
	if i := resourceIndex(c.Snapshot, f.Resource); i >= 0 {
		if _, csa := drift.Annotations(c.Snapshot.Resources[i].Live)[lastAppliedKey]; csa {
			risk += "; with client-side apply the sync that removes the field also resets replicas to 1 for a moment, until the HPA scales it back (server-side apply avoids that)"
		}
	}
	return risk
}
