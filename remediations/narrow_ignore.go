package remediations

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// NarrowIgnore rewrites a broad ignore rule into rules for only the paths that
// another system legitimately owns, and lets everything else it hid show again.
var NarrowIgnore = Remedy{
	Kind:  drift.FixNarrowIgnore,
	Doc:   "a broad rule is replaced by rules for just the paths another system owns; what it hid shows again",
	Title: "Narrow the broad ignore rule {paths} of {resource}",
	// one plan per rule
	Group:  func(f drift.Finding) string { return f.Resource.String() + f.Path.String() },
	Locate: applicationManifest,
	Applies: func(_ *Context, f drift.Finding) string {
		if f.Cause != drift.CauseBroadIgnore {
			return "it narrows an ignore rule, and the finding is not one"
		}
		if annotationHeld(f) {
			return "the rule is " + f.Resource.String() + "'s own " + drift.AnnotationIgnoreDifferences + " annotation in Git; an Application or argocd-cm edit cannot narrow it, change the annotation beside the resource"
		}
		return ""
	},
	Plan: planNarrowIgnore,
}

func planNarrowIgnore(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
	f := group[0]
	p := Plan{Resource: f.Resource}
	appRef := drift.RefOf(c.Snapshot.Application)
	if f.Resource != appRef || len(f.Path) != 3 || f.Path[1] != "ignoreDifferences" {
		p.Dropped = fmt.Sprintf("the rule is in %s %s, which is not this application's manifest; narrow it there", f.Resource, f.Path)
		return p, nil
	}
	n, err := strconv.Atoi(f.Path[2])
	rules := drift.List(c.Snapshot.Application, "spec", "ignoreDifferences")
	if err != nil || n >= len(rules) {
		p.Dropped = "the rule is no longer in the Application"
		return p, nil
	}
	kept := c.keptByNarrowing(f)
	var keep []ignoreRule
	var surfaced []string
	for _, h := range f.Hides {
		if !kept[locKey(h)] {
			surfaced = append(surfaced, fmt.Sprintf("%s %s", h.Resource, h.Path))
			continue
		}
		r := ignoreRule{Group: h.Resource.Group, Kind: h.Resource.Kind, Name: h.Resource.Name, Namespace: h.Resource.Namespace}
		var live drift.Object
		if i := resourceIndex(c.Snapshot, h.Resource); i >= 0 {
			live = c.Snapshot.Resources[i].Live
		}
		if expr, ok := jqForItem(live, h.Path); ok {
			r.JQPathExpressions = []string{expr}
		} else {
			r.JSONPointers = []string{h.Path.String()}
		}
		keep = append(keep, r)
	}
	app := drift.DeepCopy(c.Snapshot.Application).(map[string]any)
	newRules := append([]any{}, rules[:n]...)
	newRules = append(newRules, rules[n+1:]...)
	for _, r := range keep {
		newRules = append(newRules, r.object())
	}
	spec := app["spec"].(map[string]any)
	if len(newRules) == 0 {
		delete(spec, "ignoreDifferences")
	} else {
		spec["ignoreDifferences"] = newRules
	}
	changed := withApplication(c.Snapshot, app)
	why := fmt.Sprintf("ignoreDifferences[%d] is replaced by %d rule(s) naming one resource and one path each", n, len(keep))
	if len(keep) == 0 {
		why = fmt.Sprintf("ignoreDifferences[%d] hides nothing another system legitimately owns, so it is removed", n)
	}
	risk := "none hidden any more"
	if len(surfaced) > 0 {
		risk = "Argo CD will show what the rule hid: " + strings.Join(surfaced, ", ") + "; review and revert those changes, or commit them to Git"
	}
	p.Rationale = Rationale{Why: why, Risk: risk}
	o := c.applicationOrigin()
	if why := o.Conflict(); why != "" {
		p.Dropped = why
		return p, nil
	}
	var whyNot string
	if o.AppSet != "" {
		var done bool
		if done, whyNot = c.narrowWhereGenerated(&p, o, rules[n], keep, fmt.Sprintf("driftfix %s: narrowed from ignoreDifferences[%d]", c.Now.UTC().Format("2006-01-02"), n)); done {
			return p, changed
		}
	}
	if !o.ok || o.AppSet != "" {
		p.Instructions = o.where("spec.ignoreDifferences") + ", remove spec.ignoreDifferences[" + f.Path[2] + "]"
		for _, r := range keep {
			p.Instructions += " and add:\n" + snippet(r)
		}
		if whyNot != "" {
			p.Instructions = strings.TrimRight(p.Instructions, "\n") + "\n" + whyNot + "\n"
		}
		return p, changed
	}
	loc := o.File
	docs, err := yamledit.Documents(c.Repo[loc.file])
	if err != nil {
		p.Dropped = err.Error()
		return p, nil
	}
	if inRepo, ok := f.Path.Get(docs[loc.doc]); !ok || !drift.Equal(drift.NormalizeNumbers(inRepo), rules[n]) {
		p.Dropped = fmt.Sprintf("ignoreDifferences[%d] in %s is not the rule the live Application has; the manifest and the cluster disagree", n, loc.file)
		return p, nil
	}
	steps := []func([]byte) ([]byte, error){
		func(b []byte) ([]byte, error) { return removeRule(b, loc.doc, rules[n]) },
	}
	for _, r := range keep {
		r := r
		steps = append(steps, func(b []byte) ([]byte, error) {
			return yamledit.AppendItem(b, loc.doc, drift.MustPointer("/spec/ignoreDifferences"), r,
				fmt.Sprintf("driftfix %s: narrowed from ignoreDifferences[%d]", c.Now.UTC().Format("2006-01-02"), n))
		})
	}
	if !p.addEdit(applyEdits(c.Repo, loc.file, steps...)) {
		return p, nil
	}
	p.Rationale.Undo = undoText(loc.file)
	return p, changed
}

// keptByNarrowing returns the locations a broad rule hides that another system
// legitimately owns and that an ignore rule may hide (judged against the live
// object by the safety model): the narrowed rules keep hiding them, so they
// need no plan of their own.
func (c *Context) keptByNarrowing(f drift.Finding) map[string]bool {
	if annotationHeld(f) {
		return nil // never narrowed here, so nothing is kept by narrowing it
	}
	byLoc := map[string]drift.Finding{}
	for _, g := range c.Report.Findings {
		byLoc[findingKey(g)] = g
	}
	out := map[string]bool{}
	for _, h := range f.Hides {
		g, ok := byLoc[locKey(h)]
		if !ok || !classifiers.Of(g.Cause).MayStayIgnored {
			continue
		}
		if _, refused := c.refuse(drift.FixIgnoreDifference, g); !refused {
			out[locKey(h)] = true
		}
	}
	return out
}

// annotationHeld reports whether a finding is about an ignore rule a resource
// carries in its own argocd.argoproj.io/ignore-differences annotation.
func annotationHeld(f drift.Finding) bool {
	return len(f.Path) == 3 && f.Path[0] == "metadata" && f.Path[1] == "annotations" && f.Path[2] == drift.AnnotationIgnoreDifferences
}

func locKey(l drift.Location) string { return l.Resource.String() + "\x00" + l.Path.String() }

// removeRule removes the first item of spec.ignoreDifferences equal to rule.
// It finds the rule by what it says, not by its index, so that it still
// removes the right one on top of another plan's edit of the same list.
func removeRule(src []byte, doc int, rule any) ([]byte, error) {
	docs, err := yamledit.Documents(src)
	if err != nil {
		return nil, err
	}
	if doc >= len(docs) {
		return nil, fmt.Errorf("document %d is gone", doc)
	}
	list, _ := drift.MustPointer("/spec/ignoreDifferences").Get(docs[doc])
	items, _ := list.([]any)
	want := drift.NormalizeNumbers(rule)
	for i, it := range items {
		if drift.Equal(drift.NormalizeNumbers(it), want) {
			return yamledit.Remove(src, doc, drift.Pointer{"spec", "ignoreDifferences", strconv.Itoa(i)})
		}
	}
	return nil, fmt.Errorf("the rule to narrow is no longer in spec.ignoreDifferences")
}
