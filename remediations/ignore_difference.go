package remediations

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// IgnoreDifference adds an ignoreDifferences entry scoped to one resource and
// its exact paths, where another system legitimately owns the field.
var IgnoreDifference = Remedy{
	Kind:   drift.FixIgnoreDifference,
	Doc:    "an `ignoreDifferences` entry for one group/kind/name/namespace and the exact paths (a `jqPathExpressions` `select(.name == …)` for list items), with the cause, owner and date in a comment beside it, plus `RespectIgnoreDifferences=true` where a sync would otherwise write Git's value back",
	Title:  "Ignore {paths} of {resource} only",
	Locate: applicationManifest,
	Applies: func(_ *Context, f drift.Finding) string {
		if why := fieldFinding(f); why != "" {
			return why
		}
		if len(f.Path) == 0 {
			return wholeResource
		}
		return ""
	},
	Plan: planIgnoreDifference,
}

// ignoreRule is an ignoreDifferences entry, fields in the order Argo CD's docs use.
type ignoreRule struct {
	Group                 string   `yaml:"group"`
	Kind                  string   `yaml:"kind"`
	Name                  string   `yaml:"name,omitempty"`
	Namespace             string   `yaml:"namespace,omitempty"`
	JSONPointers          []string `yaml:"jsonPointers,omitempty"`
	JQPathExpressions     []string `yaml:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `yaml:"managedFieldsManagers,omitempty"`
}

func (r ignoreRule) object() map[string]any {
	m := map[string]any{"group": r.Group, "kind": r.Kind}
	if r.Name != "" {
		m["name"] = r.Name
	}
	if r.Namespace != "" {
		m["namespace"] = r.Namespace
	}
	for k, l := range map[string][]string{"jsonPointers": r.JSONPointers, "jqPathExpressions": r.JQPathExpressions, "managedFieldsManagers": r.ManagedFieldsManagers} {
		if len(l) > 0 {
			var out []any
			for _, s := range l {
				out = append(out, s)
			}
			m[k] = out
		}
	}
	return m
}

const wholeResource = "a whole resource is never ignored"

const respectIgnore = "RespectIgnoreDifferences=true"

func planIgnoreDifference(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
	ref := group[0].Resource
	p := Plan{Resource: ref}
	rule := ignoreRule{Group: ref.Group, Kind: ref.Kind, Name: ref.Name, Namespace: ref.Namespace}
	idx := resourceIndex(c.Snapshot, ref)
	respect := false
	for _, f := range group {
		if len(f.Path) == 0 {
			p.Dropped = wholeResource
			return p, nil
		}
		if why, refused := c.refuse(drift.FixIgnoreDifference, f); refused {
			p.Dropped = why
			return p, nil
		}
		var live drift.Object
		if idx >= 0 {
			live = c.Snapshot.Resources[idx].Live
		}
		if expr, ok := jqForItem(live, f.Path); ok {
			rule.JQPathExpressions = append(rule.JQPathExpressions, expr)
		} else {
			rule.JSONPointers = append(rule.JSONPointers, f.Path.String())
		}
		respect = respect || f.InGit // a sync would otherwise write Git's value back
	}
	comment := ruleComment(c, group[0])
	app := drift.DeepCopy(c.Snapshot.Application).(map[string]any)
	spec, _ := app["spec"].(map[string]any)
	if spec == nil {
		p.Dropped = "the Application has no spec"
		return p, nil
	}
	spec["ignoreDifferences"] = append(append([]any{}, drift.List(spec, "ignoreDifferences")...), rule.object())
	if respect {
		sp, _ := spec["syncPolicy"].(map[string]any)
		if sp == nil {
			sp = map[string]any{}
			spec["syncPolicy"] = sp
		}
		opts := drift.List(sp, "syncOptions")
		if !hasOption(opts, respectIgnore) {
			sp["syncOptions"] = append(append([]any{}, opts...), respectIgnore)
		}
	}
	changed := withApplication(c.Snapshot, app)
	p.Rationale = Rationale{
		Why:  fmt.Sprintf("the rule names one %s (%s) and only the paths another system writes; every other field of it, and every other resource, is still compared", ref.Kind, ref),
		Risk: "a later change to exactly these paths is not shown as drift" + map[bool]string{true: "; with RespectIgnoreDifferences=true a sync also leaves them as they are", false: ""}[respect],
	}
	o := c.applicationOrigin()
	if why := o.Conflict(); why != "" {
		p.Dropped = why
		return p, nil
	}
	if gen, ok := c.ignoreWhereGenerated(&p, o, rule, respect, comment); ok {
		return p, gen
	}
	if !o.ok || o.AppSet != "" {
		p.Instructions = o.where("spec.ignoreDifferences") + ", add this entry:\n" + snippet(rule)
		if respect {
			p.Instructions += "and " + respectIgnore + " to its spec.syncPolicy.syncOptions\n"
		}
		return p, changed
	}
	loc := o.File
	steps := []func([]byte) ([]byte, error){
		func(b []byte) ([]byte, error) {
			return yamledit.AppendItem(b, loc.doc, drift.MustPointer("/spec/ignoreDifferences"), rule, comment)
		},
	}
	if respect {
		steps = append(steps, func(b []byte) ([]byte, error) {
			return yamledit.AppendItem(b, loc.doc, drift.MustPointer("/spec/syncPolicy/syncOptions"), respectIgnore, "")
		})
	}
	if !p.addEdit(applyEdits(c.Repo, loc.file, steps...)) {
		return p, nil
	}
	p.Rationale = Rationale{
		Why:  fmt.Sprintf("the rule names one %s (%s) and only the paths another system writes; every other field of it, and every other resource, is still compared", ref.Kind, ref),
		Risk: "a later change to exactly these paths is not shown as drift" + map[bool]string{true: "; with RespectIgnoreDifferences=true a sync also leaves them as they are", false: ""}[respect],
		Undo: undoText(loc.file),
	}
	return p, changed
}

func hasOption(opts []any, want string) bool {
	for _, o := range opts {
		if s, _ := o.(string); strings.EqualFold(strings.TrimSpace(s), want) {
			return true
		}
	}
	return false
}

var jqIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// jqForItem turns the path of a whole list item that has a name into a jq
// expression selecting it by name, which survives reordering; it reports false
// for any other path.
func jqForItem(live drift.Object, p drift.Pointer) (string, bool) {
	if len(p) < 2 || live == nil {
		return "", false
	}
	if _, err := strconv.Atoi(p.Last()); err != nil {
		return "", false
	}
	item, ok := p.Get(live)
	if !ok {
		return "", false
	}
	name, ok := drift.Map(item)["name"].(string)
	if !ok || name == "" {
		return "", false
	}
	var b strings.Builder
	for _, tok := range p[:len(p)-1] {
		if !jqIdent.MatchString(tok) {
			return "", false
		}
		b.WriteString("." + tok)
	}
	return fmt.Sprintf("%s[] | select(.name == %s)", b.String(), strconv.Quote(name)), true
}

func ruleComment(c *Context, f drift.Finding) string {
	date := c.Now.UTC().Format("2006-01-02")
	owner := "no field manager"
	if len(f.Owners) > 0 {
		owner = f.Owners[len(f.Owners)-1].Manager
	}
	ev := ""
	if len(f.Evidence) > 0 {
		ev = f.Evidence[0].Text
		if r := []rune(ev); len(r) > 140 {
			ev = string(r[:139]) + "…"
		}
	}
	return fmt.Sprintf("driftfix %s: %s (owner: %s)\n%s", date, f.Cause, owner, ev)
}

func snippet(r ignoreRule) string {
	out, err := yamledit.AppendItem([]byte("x: 1\n"), 0, drift.Pointer{"ignoreDifferences"}, r, "")
	if err != nil {
		return fmt.Sprintf("%+v", r)
	}
	return strings.TrimPrefix(string(out), "x: 1\n")
}
