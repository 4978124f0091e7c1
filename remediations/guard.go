package remediations

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// refuse asks the safety model whether a fix of kind k may go ahead on f
// (drift.Sensitivity.Refuse, the one decision every finding passes).
func (c *Context) refuse(k drift.FixKind, f drift.Finding) (string, bool) {
	var target, live drift.Object
	if i := resourceIndex(c.Snapshot, f.Resource); i >= 0 {
		target, live = c.Snapshot.Resources[i].Target, c.Snapshot.Resources[i].Live
	}
	return c.Sensitivity.Refuse(k, &f, target, live)
}

// refuseEffect is the last check before a plan is kept: it judges what the
// plan really changes, not what it meant to. Every path of a desired object
// the change touches beyond the fixed findings is judged as a remove-field
// or set-value of that path, and every ignore rule it adds is judged by what
// it covers in the live objects.
func (c *Context) refuseEffect(p *Plan, changed *drift.Snapshot) (string, bool) {
	if changed == nil {
		return "", false
	}
	fixed := map[string]bool{}
	for _, f := range p.Findings {
		fixed[findingKey(f)] = true
		fixed[f.Resource.String()+"\x00"+f.GitPath.String()] = true
	}
	for i := range c.Snapshot.Resources {
		if i >= len(changed.Resources) {
			break
		}
		before, after := c.Snapshot.Resources[i].Target, changed.Resources[i].Target
		ref := c.Snapshot.Resources[i].Ref()
		var paths []drift.Pointer
		changedPaths(before, after, drift.Pointer{}, &paths, 0)
		for _, q := range paths {
			if fixed[ref.String()+"\x00"+q.String()] {
				continue
			}
			old, inOld := q.Get(before)
			nv, inNew := q.Get(after)
			f := drift.Finding{Resource: ref, Path: q, GitPath: q, Git: old, InGit: inOld, Live: nv, InLive: inNew}
			kind := drift.FixSetValue
			if !inNew {
				kind = drift.FixRemoveField
				f.Live, f.InLive = nil, false
				if lv, ok := q.Get(c.Snapshot.Resources[i].Live); ok {
					f.Live, f.InLive = lv, true
				}
			}
			if why, bad := c.Sensitivity.Refuse(kind, &f, before, c.Snapshot.Resources[i].Live); bad {
				return "the change also touches " + ref.String() + " " + q.String() + ": " + why, true
			}
		}
	}
	for _, r := range addedRules(c.Snapshot.Application, changed.Application) {
		for i := range c.Snapshot.Resources {
			res := &c.Snapshot.Resources[i]
			ref := res.Ref()
			if !ruleApplies(r, ref) {
				continue
			}
			for _, q := range c.ruleCovers(r, res) {
				if why, bad := c.Sensitivity.Hides(ref, q, nil, res.Target, res.Live); bad {
					return fmt.Sprintf("the ignore rule it adds would hide %s %s: %s; driftfix never ignores a security-relevant path", ref, q, why), true
				}
			}
		}
	}
	return "", false
}

// ruleCovers returns the paths a rule removes from a resource: through
// Options.RuleCovers when set (jq and managedFieldsManagers need the diff's
// evaluator), else its jsonPointers.
func (c *Context) ruleCovers(r drift.IgnoreRule, res *drift.Resource) []drift.Pointer {
	if c.RuleCovers != nil {
		return c.RuleCovers(r, res)
	}
	var out []drift.Pointer
	for _, s := range r.JSONPointers {
		if p, err := drift.ParsePointer(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// addedRules returns the ignoreDifferences entries of after that before does not have.
func addedRules(before, after drift.Object) []drift.IgnoreRule {
	old := drift.List(before, "spec", "ignoreDifferences")
	var out []drift.IgnoreRule
next:
	for _, e := range drift.List(after, "spec", "ignoreDifferences") {
		for _, o := range old {
			if drift.Equal(drift.NormalizeNumbers(o), drift.NormalizeNumbers(e)) {
				continue next
			}
		}
		m := drift.Map(e)
		r := drift.IgnoreRule{Group: drift.Str(m, "group"), Kind: drift.Str(m, "kind"), Name: drift.Str(m, "name"), Namespace: drift.Str(m, "namespace")}
		for key, dst := range map[string]*[]string{"jsonPointers": &r.JSONPointers, "jqPathExpressions": &r.JQPathExpressions, "managedFieldsManagers": &r.ManagedFieldsManagers} {
			for _, v := range drift.List(m, key) {
				if s, ok := v.(string); ok {
					*dst = append(*dst, s)
				}
			}
		}
		out = append(out, r)
	}
	return out
}

func ruleApplies(r drift.IgnoreRule, ref drift.Ref) bool {
	return (r.Group == "*" || r.Group == ref.Group) && (r.Kind == "*" || r.Kind == ref.Kind) &&
		(r.Name == "" || r.Name == ref.Name) && (r.Namespace == "" || r.Namespace == ref.Namespace)
}

// changedPaths collects the places where a and b differ: a key added,
// removed or changed, a list item changed (or the whole list when its length
// changed).
func changedPaths(a, b any, at drift.Pointer, out *[]drift.Pointer, depth int) {
	if depth > 64 || drift.Equal(drift.NormalizeNumbers(a), drift.NormalizeNumbers(b)) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range drift.SortedKeys(toAny(keys)) {
			av, ina := am[k]
			bv, inb := bm[k]
			if ina != inb {
				*out = append(*out, at.Child(k))
				continue
			}
			changedPaths(av, bv, at.Child(k), out, depth+1)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			changedPaths(al[i], bl[i], at.Index(i), out, depth+1)
		}
		return
	}
	*out = append(*out, append(drift.Pointer{}, at...))
}

func toAny(m map[string]bool) map[string]any {
	out := make(map[string]any, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// refusedPlan is the plan for a finding whose fix the safety model refuses:
// nothing is changed, and Dropped says what and why.
func refusedPlan(f drift.Finding, why string) Plan {
	return Plan{Kind: f.Remediation.Kind, Resource: f.Resource, Findings: []drift.Finding{f},
		Rationale: Rationale{Cause: f.Cause, Evidence: f.Evidence}, Dropped: strings.TrimSpace(why)}
}
