package classifiers

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// BroadIgnore flags ignoreDifferences rules that hide more than the one field
// another system owns.
var BroadIgnore = Classifier{
	Name:     drift.CauseBroadIgnore,
	Doc:      "an existing ignore rule is broad or covers a sensitive path (privilege, image, RBAC)",
	Classify: classifyBroadIgnore,
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
		}
	}
	for _, e := range r.JQPathExpressions {
		if pat, ok := jqBroadPattern(e); ok {
			if what, ok := broadPointers[pat]; ok {
				why = append(why, fmt.Sprintf("jqPathExpression %s ignores %s", e, what))
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
	seen := map[string]bool{}
	for _, cov := range r.Covered {
		res := &c.Snapshot.Resources[cov.Index]
		ref := res.Ref()
		for _, p := range cov.Paths {
			field, kind, ok := c.Sensitivity.Check(ref.Kind, p, res.Target)
			if !ok || seen[field.String()] {
				continue
			}
			seen[field.String()] = true
			why = append(why, fmt.Sprintf("it covers %s of %s, a sensitive field (%s)", field, ref, kind))
		}
	}
	if len(why) == 0 {
		return Verdict{}, false
	}
	ev := []string{fmt.Sprintf("%s is broad: %s", ruleName(r), strings.Join(why, "; "))}
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
		ev = append(ev, fmt.Sprintf("it hides %s %s: Git %s, live %s%s", d.Resource, d.Path, val(d.Git, d.InGit), live, by))
	}
	switch {
	case hidden > 5:
		ev = append(ev, fmt.Sprintf("it hides %d differences in all", hidden))
	case hidden == 0:
		ev = append(ev, "it hides no difference right now, but would hide any future change under those paths")
	}
	return Verdict{Evidence: ev, Fix: drift.FixNarrowIgnore}, true
}
