package classifiers

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// BroadIgnore flags ignoreDifferences rules that hide more than the one field
// another system owns.
var BroadIgnore = Classifier{
	Name:      drift.CauseBroadIgnore,
	Doc:       "an existing ignore rule is broad or covers a sensitive path (privilege, image, RBAC)",
	Classify:  classifyBroadIgnore,
	Predicted: true,
	Error:     true,
}

// broadPointers are paths whose ignoring hides a whole object, its spec, a pod
// template or a container list.
var broadPointers = map[string]string{
	"":                                     "the whole object",
	"/":                                    "the whole object",
	"/spec":                                "the whole spec",
	"/data":                                "all data",
	"/metadata":                            "all metadata",
	"/webhooks":                            "every webhook",
	"/rules":                               "every rule",
	"/spec/template":                       "the whole pod template",
	"/spec/template/spec":                  "the whole pod spec",
	"/spec/template/spec/containers":       "every container",
	"/spec/template/spec/initContainers":   "every init container",
	"/spec/jobTemplate/spec/template":      "the whole pod template",
	"/spec/jobTemplate/spec/template/spec": "the whole pod spec",
	"/spec/jobTemplate/spec/template/spec/containers": "every container",
}

// ruleScope says why a rule is broad by scope: the kinds and resources it
// applies to (a wildcard, a group and kind without a name), a pointer that
// covers a whole object, spec, template or list, or a subtree holding more
// than the fields that differ there, and managers whose writes it ignores
// wholesale. The kind of the resource plays no part.
func ruleScope(c *Case, r *drift.IgnoreRule) []string {
	var why []string
	scope := r.Kind
	if r.Group != "" && r.Group != "*" {
		scope = r.Group + "/" + r.Kind
	}
	if r.Group == "*" || r.Kind == "*" {
		why = append(why, "it applies to every kind (\"*\")")
	}
	if !r.System && r.Name == "" && r.Kind != "*" {
		where := "in every namespace"
		if r.Namespace != "" {
			where = "in namespace " + r.Namespace
		}
		why = append(why, fmt.Sprintf("it names no resource, so it applies to every %s %s", scope, where))
	}
	for _, p := range r.JSONPointers {
		if what, ok := broadPointers[p]; ok {
			why = append(why, fmt.Sprintf("jsonPointer %s ignores %s", p, what))
		} else if sub, ok := c.wholeSubtree(r, p); ok {
			why = append(why, fmt.Sprintf("jsonPointer %s ignores %s", p, sub))
		}
	}
	for _, e := range r.JQPathExpressions {
		if pat, ok := jqBroadPattern(e); ok {
			if what, ok := broadPointers[pat]; ok {
				why = append(why, fmt.Sprintf("jqPathExpression %s ignores %s", e, what))
			} else if !strings.ContainsAny(e, "[\"") {
				// a plain path of object keys is a pointer
				if sub, ok := c.wholeSubtree(r, pat); ok {
					why = append(why, fmt.Sprintf("jqPathExpression %s ignores %s", e, sub))
				}
			}
		}
	}
	for _, m := range r.ManagedFieldsManagers {
		if genericManager(m) {
			why = append(why, fmt.Sprintf("managedFieldsManagers %s ignores whatever anyone writes under that name (a person's tool, a client library's default name, or an applier of whole objects), later changes too", m))
		}
		if drift.ArgoCDManagers[m] {
			why = append(why, fmt.Sprintf("managedFieldsManagers %s ignores every field Argo CD itself applies", m))
		}
	}
	return why
}

// wholeSubtree reports whether a jsonPointer covers, in a resource the rule
// applies to, a subtree (an object or a list) holding fields that do not
// differ: the rule hides those too, and whatever is added beneath later. A
// pointer to a leaf, or to a subtree that differs as a whole (an injected
// container Git does not declare), is exact. A list item's name, the key it
// is found by, is not counted as a field.
func (c *Case) wholeSubtree(r *drift.IgnoreRule, ptr string) (string, bool) {
	p, err := drift.ParsePointer(ptr)
	if err != nil || len(p) == 0 {
		return "", false
	}
	for _, cov := range r.Covered {
		res := &c.Snapshot.Resources[cov.Index]
		obj := res.Live
		if obj == nil {
			obj = res.Target
		}
		v, ok := p.Get(obj)
		if !ok {
			continue
		}
		total := leaves(v)
		if m, ok := v.(map[string]any); ok && len(m) > 1 && m["name"] != nil {
			if _, err := strconv.Atoi(p[len(p)-1]); err == nil {
				total-- // a list item found by its name
			}
		}
		if total == 0 {
			continue
		}
		differ := 0
		for _, di := range r.Hidden {
			d := &c.Comparison.Diffs[di]
			if d.Index != cov.Index || !d.Path.HasPrefix(p) {
				continue
			}
			if len(d.Path) == len(p) {
				differ = total
				break
			}
			dv := d.Live
			if !d.InLive {
				dv = d.Git
			}
			differ += max(leaves(dv), 1)
		}
		if differ < total {
			fields, of := fmt.Sprintf("%d fields", total), fmt.Sprint(differ)
			if total == 1 {
				fields = "1 field"
			}
			if differ == 0 {
				of = "none"
			}
			return fmt.Sprintf("the whole subtree there in %s (%s, %s of them differing), and any field added beneath it later", res.Ref(), fields, of), true
		}
	}
	return "", false
}

// leaves counts the values beneath v: 0 for a scalar, else the scalars of
// an object or list (an empty one counts one), without list items' names.
func leaves(v any) int {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			return 1
		}
		n := 0
		for _, x := range t {
			n += max(leaves(x), 1)
		}
		return n
	case []any:
		if len(t) == 0 {
			return 1
		}
		n := 0
		for _, x := range t {
			if m, ok := x.(map[string]any); ok {
				if _, named := m["name"]; named && len(m) > 1 {
					n += leaves(m) - 1
					continue
				}
			}
			n += max(leaves(x), 1)
		}
		return n
	}
	return 0
}

var jqStep = regexp.MustCompile(`\[\]\??|\?`)

// jqBroadPattern turns a plain jq path such as ".spec.template.spec.containers[]"
// into "/spec/template/spec/containers"; expressions that filter (select,
// pipes) are not plain and return false.
func jqBroadPattern(expr string) (string, bool) {
	e := strings.TrimSpace(expr)
	if strings.ContainsAny(e, "|(") {
		return "", false
	}
	e = jqStep.ReplaceAllString(e, "")
	if e == "." {
		return "", true
	}
	if !strings.HasPrefix(e, ".") {
		return "", false
	}
	return strings.ReplaceAll(e, ".", "/"), true
}

func classifyBroadIgnore(c *Case) (Verdict, bool) {
	r := c.Rule
	if r == nil {
		return Verdict{}, false
	}
	// Broadness is a matter of scope: the resources a rule applies to and
	// how much of each it covers. What the covered paths are is judged apart:
	// however narrow, a rule that hides a security-relevant path is reported,
	// as covering it, not as broad.
	broad := ruleScope(c, r)
	var sensitive []string
	seen := map[string]bool{}
	for _, cov := range r.Covered {
		res := &c.Snapshot.Resources[cov.Index]
		ref := res.Ref()
		for _, p := range cov.Paths {
			field, kind, ok := c.Sensitivity.CheckRef(ref, p, res.Target)
			key := ref.String() + field.String()
			if !ok || seen[key] {
				continue
			}
			seen[key] = true
			// The path the rule covers, and the sensitive field it lies in
			// or holds.
			where := ""
			switch {
			case len(field) < len(p) && p.HasPrefix(field):
				where = ", in " + field.String()
			case len(field) > len(p) && field.HasPrefix(p):
				where = ", which holds " + field.String()
			}
			sensitive = append(sensitive, fmt.Sprintf("%s of %s%s (%s)", p, ref, where, kind))
		}
	}
	var ev []drift.Evidence
	switch {
	case len(broad) > 0 && len(sensitive) > 0:
		why := fmt.Sprintf("%s; it also covers a sensitive path: %s", strings.Join(broad, "; "), strings.Join(sensitive, ", "))
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceBroadRule, Detail: why, Text: ruleName(r) + " is broad: " + why})
	case len(broad) > 0:
		why := strings.Join(broad, "; ")
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceBroadRule, Detail: why, Text: ruleName(r) + " is broad: " + why})
	case len(sensitive) > 0:
		paths := strings.Join(sensitive, ", ")
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceSensitiveRule, Detail: paths,
			Text: fmt.Sprintf("%s is scoped narrowly (one resource by name, exact paths), but covers a sensitive path: %s; whatever another writer puts there is hidden, so it is reported however narrow", ruleName(r), paths)})
	default:
		return Verdict{}, false
	}
	hidden := 0
	for _, di := range r.Hidden {
		d := &c.Comparison.Diffs[di]
		hidden++
		if hidden > 5 {
			continue
		}
		by := ""
		if o := d.NonArgoOwners(); len(o) > 0 {
			by = ", written by " + ownersText(o)
		}
		val := func(v any, in bool) string {
			if !in {
				return "absent"
			}
			if isSecretData(d.Resource, d.Path) {
				return "(secret)"
			}
			return drift.Brief(v, 40)
		}
		live, masked := maskedLive(d)
		if !masked {
			live = val(d.Live, d.InLive)
		}
		ref := d.Resource
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceHidden, Object: &ref, Path: d.Path.String(),
			Text: fmt.Sprintf("it hides %s %s: Git %s, live %s%s", d.Resource, d.Path, val(d.Git, d.InGit), live, by)})
	}
	switch {
	case hidden > 5:
		ev = append(ev, drift.Say(drift.EvidenceHidden, fmt.Sprintf("it hides %d differences in all", hidden)))
	case hidden == 0:
		ev = append(ev, drift.Say(drift.EvidenceHidden, "it hides no difference right now, but would hide any future change under those paths"))
	}
	return Verdict{Evidence: ev, Fix: drift.FixNarrowIgnore}, true
}
