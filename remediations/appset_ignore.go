package remediations

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/driftfix/driftfix/bot/appset"
	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// ignoreInAppSet edits the ApplicationSet that owns the Application. It
// returns the edit, or why none could be made.
func (c *Context) ignoreInAppSet(o appOrigin, rule ignoreRule, respect bool, comment string) (*ignoreEdit, string) {
	if templated(rule) {
		return nil, fmt.Sprintf("The rule holds {{ or }}, which ApplicationSet %s would render as a template; driftfix writes it nowhere a template is read.", o.AppSet)
	}
	loc, set, before, why := c.openAppSet(o.AppSet)
	if why != "" {
		return nil, why
	}
	me := -1
	for i, g := range before.Applications {
		if drift.Str(g.Application, "metadata", "name") == o.App {
			me = i
		}
	}
	if me < 0 {
		return nil, fmt.Sprintf("ApplicationSet %s in %s does not make Application %s from Git alone%s, so driftfix cannot tell which generator element made it.", o.AppSet, loc.file, o.App, unresolvedText(before.Unresolved))
	}
	gen := before.Applications[me]
	if hasRule(gen.Application, rule) && (!respect || hasOption(drift.List(gen.Application, "spec", "syncPolicy", "syncOptions"), respectIgnore)) {
		return &ignoreEdit{already: true}, ""
	}
	spec := drift.Map(set, "spec")
	goTemplate, _ := spec["goTemplate"].(bool)
	patch, hasPatch := spec["templatePatch"].(string)
	var steps []func([]byte) ([]byte, error)
	var how string
	file := loc.file // the file edited: the set's, or a config file its git generator reads
	switch {
	case len(before.Applications) == 1 && len(before.Unresolved) == 0:
		how = "spec.template, which makes this Application alone"
		steps = append(steps, func(b []byte) ([]byte, error) {
			return yamledit.AppendItem(b, loc.doc, drift.MustPointer("/spec/template/spec/ignoreDifferences"), rule, comment)
		})
		if respect && !hasOption(drift.List(gen.Application, "spec", "syncPolicy", "syncOptions"), respectIgnore) {
			steps = append(steps, func(b []byte) ([]byte, error) {
				return yamledit.AppendItem(b, loc.doc, drift.MustPointer("/spec/template/spec/syncPolicy/syncOptions"), respectIgnore, "")
			})
		}
	case len(before.Unresolved) > 0:
		return nil, fmt.Sprintf("ApplicationSet %s in %s makes more Applications than Git alone shows%s; driftfix cannot scope a change to %s without knowing them all.", o.AppSet, loc.file, unresolvedText(before.Unresolved), o.App)
	case hasPatch && elementParam(patch) != "" && configFile(gen.Params) != "":
		// a git files generator: the element is a config file of the repository
		param := elementParam(patch)
		file = configFile(gen.Params)
		if respect && !hasOption(drift.List(gen.Application, "spec", "syncPolicy", "syncOptions"), respectIgnore) {
			return nil, fmt.Sprintf("ApplicationSet %s in %s takes ignore rules from each config file's %s, but a sync would write Git's value back without %s, which the file cannot set.", o.AppSet, loc.file, param, respectIgnore)
		}
		how = fmt.Sprintf("the %s of %s, the config file whose values make %s, which the set's templatePatch reads", param, file, o.App)
		switch path.Ext(file) {
		case ".json":
			jr := jsonRule(rule)
			steps = append(steps, func(b []byte) ([]byte, error) { return jsonAppend(b, param, jr) })
		case ".yaml", ".yml":
			steps = append(steps, appendToYAMLConfig(param, rule, comment))
		default:
			return nil, fmt.Sprintf("ApplicationSet %s in %s reads each config file's %s, but driftfix edits only JSON and YAML files, not %s.", o.AppSet, loc.file, param, file)
		}
	case hasPatch && elementParam(patch) != "":
		param := elementParam(patch)
		el, err := listElement(set, gen, before.Applications)
		if err != nil {
			return nil, fmt.Sprintf("ApplicationSet %s in %s reads each element's %s in its templatePatch, but %v.", o.AppSet, loc.file, param, err)
		}
		how = fmt.Sprintf("the %s of the generator element that makes %s (%s), which the set's templatePatch reads", param, o.App, el)
		steps = append(steps, func(b []byte) ([]byte, error) {
			return yamledit.AppendItem(b, loc.doc, append(append(drift.Pointer{}, el...), param), rule, comment)
		})
		if respect && !hasOption(drift.List(gen.Application, "spec", "syncPolicy", "syncOptions"), respectIgnore) {
			return nil, fmt.Sprintf("ApplicationSet %s in %s takes ignore rules from each element's %s, but a sync would write Git's value back without %s, which the element cannot set.", o.AppSet, loc.file, param, respectIgnore)
		}
	case !goTemplate:
		unscoped := fmt.Sprintf("ApplicationSet %s in %s makes %d Applications from one template and does not use goTemplate, so neither a templatePatch condition nor a per-element value the template reads can scope the rule to %s (turning goTemplate on changes how every Application renders)", o.AppSet, loc.file, len(before.Applications), o.App)
		return c.ignoreByIdentity(o, loc, before, gen, rule, respect, comment, unscoped)
	default:
		cond, err := uniqueCondition(gen, before.Applications)
		if err != nil {
			unscoped := fmt.Sprintf("ApplicationSet %s in %s makes %d Applications from one template, and %v, so a templatePatch cannot be scoped to %s", o.AppSet, loc.file, len(before.Applications), err, o.App)
			return c.ignoreByIdentity(o, loc, before, gen, rule, respect, comment, unscoped)
		}
		block, err := patchBlock(cond, gen.Application, rule, respect, comment)
		if err != nil {
			return nil, fmt.Sprintf("driftfix cannot write a templatePatch for %s: %v.", o.App, err)
		}
		how = "a templatePatch scoped to " + o.App + " by the condition " + cond
		text := block
		if hasPatch {
			if strings.Contains(patch, block) {
				text = patch
			} else {
				text = strings.TrimRight(patch, "\n") + "\n" + block
			}
		}
		steps = append(steps, func(b []byte) ([]byte, error) {
			return yamledit.SetBlock(b, loc.doc, drift.MustPointer("/spec/templatePatch"), text)
		})
	}
	e, err := applyEdits(c.Repo, file, steps...)
	if errors.Is(err, errAlreadyApplied) {
		return &ignoreEdit{already: true}, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("driftfix could not edit %s of ApplicationSet %s in %s: %v.", how, o.AppSet, loc.file, err)
	}
	return c.checkAppSetEdit(o, loc, before, file, e, how, rule, respect)
}

// appendToYAMLConfig is the step that appends the rule to param of a git
// files generator's YAML config file, which must hold one map of values.
func appendToYAMLConfig(param string, rule ignoreRule, comment string) func([]byte) ([]byte, error) {
	return func(b []byte) ([]byte, error) {
		docs, err := yamledit.Documents(b)
		if err != nil {
			return nil, err
		}
		if len(docs) != 1 {
			return nil, fmt.Errorf("it holds %d documents, not one", len(docs))
		}
		if _, ok := docs[0].(map[string]any); !ok {
			return nil, fmt.Errorf("it is not one map of values (a list makes several Applications)")
		}
		return yamledit.AppendItem(b, 0, drift.Pointer{param}, rule, comment)
	}
}

// checkAppSetEdit resolves the ApplicationSet again with edit e of file (how
// says which part was edited) and keeps the edit only if the Application of
// o gains the rule and every other Application stays as it was.
func (c *Context) checkAppSetEdit(o appOrigin, loc located, before appset.Result, file string, e Edit, how string, rule ignoreRule, respect bool) (*ignoreEdit, string) {
	after, broke, err := c.resolveEdited(loc, file, e.After)
	if broke != nil {
		return nil, fmt.Sprintf("the edit of %s breaks ApplicationSet %s: %v.", loc.file, o.AppSet, broke)
	}
	if err != nil {
		return nil, fmt.Sprintf("the edit of %s of ApplicationSet %s in %s makes a set Argo CD refuses: %v.", how, o.AppSet, loc.file, err)
	}
	mine, why := compareGenerated("ApplicationSet "+o.AppSet, o.App, appsOf(before.Applications), appsOf(after.Applications), rule, respect)
	if why != "" {
		return nil, fmt.Sprintf("the edit of %s of ApplicationSet %s in %s was not used: %s.", how, o.AppSet, loc.file, why)
	}
	from := "the edited " + loc.file
	if file != loc.file {
		from = loc.file + " with the edited " + file
	}
	return &ignoreEdit{
		edits:   []Edit{e},
		app:     mine,
		checked: fmt.Sprintf("ApplicationSet %s resolved again from %s: %s gains the rule%s", o.AppSet, from, o.App, othersSame(len(after.Applications)-1)),
		undo:    undoText(file),
	}, ""
}

// configFile is the repository file a git files generator read the
// parameters from (goTemplate's path.path and path.filename), or "".
func configFile(params map[string]any) string {
	dir, name := drift.Str(params, "path", "path"), drift.Str(params, "path", "filename")
	if name == "" {
		return ""
	}
	return path.Join(dir, name)
}

// repoFiles gives the git generators the repository's files when they name
// one of the application's repositories; any other repository is not at hand.
func (c *Context) repoFiles(repo Repo) appset.Files {
	mine := map[string]bool{}
	for _, s := range drift.Sources(c.Snapshot.Application) {
		mine[normRepo(s.RepoURL)] = true
	}
	return func(repoURL, _ string) (map[string]string, bool) {
		if !mine[normRepo(repoURL)] {
			return nil, false
		}
		out := make(map[string]string, len(repo))
		for k, v := range repo {
			out[k] = string(v)
		}
		return out, true
	}
}

func appsOf(gs []appset.Generated) []drift.Object {
	out := make([]drift.Object, len(gs))
	for i, g := range gs {
		out[i] = g.Application
	}
	return out
}

func unresolvedText(us []appset.Unresolved) string {
	if len(us) == 0 {
		return ""
	}
	var parts []string
	for _, u := range us {
		parts = append(parts, u.Generator+" needs "+u.Needs)
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// elementRef matches a parameter a templatePatch reads: .x, $x.y or index . "x".
var elementRef = regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_]*)|index\s+[.$][A-Za-z0-9_.]*\s+"([^"]+)"`)

// elementParam returns the parameter a templatePatch reads the ignore rules
// of each element from (a name with "ignoreDifferences" in it, any case),
// or "" when it reads none.
func elementParam(patch string) string {
	found := ""
	for _, m := range elementRef.FindAllStringSubmatch(patch, -1) {
		name := m[1]
		if name == "" {
			name = m[2]
		}
		if strings.Contains(strings.ToLower(name), "ignoredifferences") {
			if found != "" && found != name {
				return "" // two of them: cannot tell which one
			}
			found = name
		}
	}
	return found
}

// listElement finds the list generator element whose parameters made gen:
// the one element, among the list generators under gen's top-level
// generator, whose fields all equal gen's parameters and no other
// Application's. It returns the element's pointer in the set.
func listElement(set map[string]any, gen appset.Generated, all []appset.Generated) (drift.Pointer, error) {
	top, err := generatorPointer(gen.Generator)
	if err != nil {
		return nil, err
	}
	node, ok := top.Get(set)
	if !ok {
		return nil, fmt.Errorf("the set has no %s", gen.Generator)
	}
	var cands []drift.Pointer
	var walk func(p drift.Pointer, g any, depth int)
	walk = func(p drift.Pointer, g any, depth int) {
		if depth > 8 {
			return
		}
		m, _ := g.(map[string]any)
		if l, ok := m["list"].(map[string]any); ok {
			for i, el := range drift.List(l, "elements") {
				em, ok := el.(map[string]any)
				if ok && matches(em, gen.Params) && !matchesOther(em, gen, all) {
					cands = append(cands, append(append(drift.Pointer{}, p...), "list", "elements", strconv.Itoa(i)))
				}
			}
		}
		for _, k := range []string{"matrix", "merge"} {
			for i, sub := range drift.List(m, k, "generators") {
				walk(append(append(drift.Pointer{}, p...), k, "generators", strconv.Itoa(i)), sub, depth+1)
			}
		}
	}
	walk(top, node, 0)
	switch len(cands) {
	case 0:
		return nil, fmt.Errorf("no list element of %s makes %s alone", gen.Generator, drift.Str(gen.Application, "metadata", "name"))
	case 1:
		return cands[0], nil
	}
	return nil, fmt.Errorf("%d list elements of %s match %s", len(cands), gen.Generator, drift.Str(gen.Application, "metadata", "name"))
}

// generatorPointer turns "generators[2].matrix" into /spec/generators/2.
func generatorPointer(where string) (drift.Pointer, error) {
	head, _, _ := strings.Cut(where, ".")
	n := strings.TrimSuffix(strings.TrimPrefix(head, "generators["), "]")
	i, err := strconv.Atoi(n)
	if err != nil || !strings.HasPrefix(head, "generators[") {
		return nil, fmt.Errorf("unknown generator %q", where)
	}
	return drift.Pointer{"spec", "generators", strconv.Itoa(i)}, nil
}

// matches reports whether every scalar field of a list element equals the
// parameter of that name (lists and maps are left out: they are what the
// element may carry for the templatePatch).
func matches(el, params map[string]any) bool {
	n := 0
	for k, v := range el {
		switch v.(type) {
		case map[string]any, []any:
			continue
		}
		n++
		if !drift.Equal(drift.NormalizeNumbers(v), drift.NormalizeNumbers(params[k])) {
			return false
		}
	}
	return n > 0
}

func matchesOther(el map[string]any, gen appset.Generated, all []appset.Generated) bool {
	me := drift.Str(gen.Application, "metadata", "name")
	for _, o := range all {
		if drift.Str(o.Application, "metadata", "name") != me && o.Generator == gen.Generator && matches(el, o.Params) {
			return true
		}
	}
	return false
}

var goIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// uniqueCondition returns a Go template condition true for gen's parameters
// and no other Application's: eq on a string parameter whose value only gen
// has. A parameter whose value is the Application's name is preferred, then
// the shortest path.
func uniqueCondition(gen appset.Generated, all []appset.Generated) (string, error) {
	me := drift.Str(gen.Application, "metadata", "name")
	type cand struct {
		path  []string
		value string
	}
	var cands []cand
	var walk func(prefix []string, m map[string]any, depth int)
	walk = func(prefix []string, m map[string]any, depth int) {
		if depth > 4 {
			return
		}
		for k, v := range m {
			if !goIdent.MatchString(k) {
				continue
			}
			p := append(append([]string{}, prefix...), k)
			switch x := v.(type) {
			case string:
				cands = append(cands, cand{p, x})
			case map[string]any:
				walk(p, x, depth+1)
			}
		}
	}
	walk(nil, gen.Params, 0)
	var ok []cand
next:
	for _, c := range cands {
		for _, o := range all {
			if drift.Str(o.Application, "metadata", "name") == me {
				continue
			}
			v, found := paramAt(o.Params, c.path)
			if !found {
				continue next // a missing key may fail the template
			}
			if v == c.value {
				continue next
			}
		}
		ok = append(ok, c)
	}
	if len(ok) == 0 {
		return "", fmt.Errorf("no string parameter of %s has a value that only it has", me)
	}
	sort.Slice(ok, func(i, j int) bool {
		ai, aj := ok[i].value == me, ok[j].value == me
		if ai != aj {
			return ai
		}
		if len(ok[i].path) != len(ok[j].path) {
			return len(ok[i].path) < len(ok[j].path)
		}
		return strings.Join(ok[i].path, ".") < strings.Join(ok[j].path, ".")
	})
	return fmt.Sprintf("eq .%s %s", strings.Join(ok[0].path, "."), strconv.Quote(ok[0].value)), nil
}

func paramAt(m map[string]any, path []string) (string, bool) {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		if cur, ok = mm[k]; !ok {
			return "", false
		}
	}
	s, ok := cur.(string)
	return s, ok
}

// patchBlock is a templatePatch fragment that, for the Application the
// condition selects, sets its ignore rules (those it has, plus rule) and,
// with respect, its sync options plus RespectIgnoreDifferences. A patch
// replaces lists whole, so each list is written complete.
func patchBlock(cond string, app drift.Object, rule ignoreRule, respect bool, comment string) (string, error) {
	spec := map[string]any{}
	var rules []any
	for _, r := range drift.List(app, "spec", "ignoreDifferences") {
		rules = append(rules, orderedRule(r))
	}
	rules = append(rules, rule)
	if respect {
		opts := drift.List(app, "spec", "syncPolicy", "syncOptions")
		if !hasOption(opts, respectIgnore) {
			opts = append(append([]any{}, opts...), respectIgnore)
		}
		spec["syncPolicy"] = map[string]any{"syncOptions": opts}
	}
	body := "spec:\n"
	for i, r := range rules {
		c := ""
		if i == len(rules)-1 {
			c = comment
		}
		out, err := yamledit.AppendItem([]byte("x: 1\n"), 0, drift.Pointer{"ignoreDifferences"}, r, c)
		if err != nil {
			return "", fmt.Errorf("render rule: %w", err)
		}
		text := strings.TrimPrefix(string(out), "x: 1\n")
		if i > 0 {
			text = strings.TrimPrefix(text, "ignoreDifferences:\n")
		}
		body += indentText(text, 2)
	}
	if respect {
		body += "  syncPolicy:\n    syncOptions:\n"
		for _, o := range drift.List(spec, "syncPolicy", "syncOptions") {
			s, err := yamledit.Scalar(o)
			if err != nil {
				return "", err
			}
			body += "      - " + s + "\n"
		}
	}
	if strings.Contains(body, "{{") || strings.Contains(body, "}}") {
		return "", fmt.Errorf("the rule holds {{ or }}, which a templatePatch would read as a template")
	}
	return "{{- if " + cond + " }}\n" + body + "{{- end }}\n", nil
}

func indentText(s string, n int) string {
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l == "" {
			continue
		}
		b.WriteString(pad + l)
	}
	return b.String()
}

// locateAppSet finds the manifest of the ApplicationSet that owns the
// snapshot's Application. When the repository holds several of that name
// (variants of one set), the one used is the only one that makes an
// Application of this name with the sources and destination the cluster's
// resolveEdited resolves the ApplicationSet at loc again, with file's
// content replaced by after: broke says the edit left no ApplicationSet
// there to read, err that Argo CD would refuse the set it left.
func (c *Context) resolveEdited(loc located, file string, after []byte) (res appset.Result, broke, err error) {
	edited := maps.Clone(c.Repo)
	if edited == nil {
		edited = Repo{}
	}
	edited[file] = after
	set, broke := yamlDoc(edited[loc.file], loc.doc)
	if broke != nil {
		return appset.Result{}, broke, nil
	}
	res, err = appset.Resolve(set, appset.Options{Files: c.repoFiles(edited), Cluster: c.Snapshot.Cluster})
	return res, nil, err
}

// openAppSet finds the named ApplicationSet in the repository, reads it and
// resolves it as it stands; otherwise it says why no edit can be made.
func (c *Context) openAppSet(name string) (located, map[string]any, appset.Result, string) {
	loc, err := c.locateAppSet(name)
	if err != nil {
		return located{}, nil, appset.Result{}, fmt.Sprintf("driftfix cannot edit ApplicationSet %s: %v.", name, err)
	}
	set, err := yamlDoc(c.Repo[loc.file], loc.doc)
	if err != nil {
		return located{}, nil, appset.Result{}, fmt.Sprintf("driftfix cannot edit ApplicationSet %s: read %s: %v.", name, loc.file, err)
	}
	before, err := appset.Resolve(set, appset.Options{Files: c.repoFiles(c.Repo), Cluster: c.Snapshot.Cluster})
	if err != nil {
		return located{}, nil, appset.Result{}, fmt.Sprintf("driftfix cannot edit ApplicationSet %s in %s: %v.", name, loc.file, err)
	}
	return loc, set, before, ""
}

// Application has.
func (c *Context) locateAppSet(name string) (located, error) {
	ns := drift.Str(c.Snapshot.Application, "metadata", "namespace")
	ref := drift.Ref{Group: "argoproj.io", Kind: "ApplicationSet", Name: name, Namespace: ns}
	loc, err := locateDoc(c.Repo, "", ref)
	if err == nil {
		return loc, nil
	}
	var all []located
	for _, f := range sortedFiles(c.Repo) {
		if !(strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml")) || !mayDeclare(c.Repo[f], ref) {
			continue
		}
		docs, derr := yamledit.Documents(c.Repo[f])
		if derr != nil {
			continue
		}
		for i, d := range docs {
			m, _ := d.(map[string]any)
			g, _ := drift.SplitAPIVersion(drift.Str(m, "apiVersion"))
			dns := drift.Str(m, "metadata", "namespace")
			if drift.Str(m, "kind") == "ApplicationSet" && g == "argoproj.io" && drift.Str(m, "metadata", "name") == name && (dns == "" || ns == "" || dns == ns) {
				all = append(all, located{file: f, doc: i})
			}
		}
	}
	if len(all) < 2 {
		return located{}, err
	}
	me := c.Snapshot.AppName()
	want := placeOf(c.Snapshot.Application)
	var match []located
	for _, l := range all {
		set, derr := yamlDoc(c.Repo[l.file], l.doc)
		if derr != nil {
			continue
		}
		res, rerr := appset.Resolve(set, appset.Options{Files: c.repoFiles(c.Repo), Cluster: c.Snapshot.Cluster})
		if rerr != nil {
			continue
		}
		for _, g := range res.Applications {
			if drift.Str(g.Application, "metadata", "name") == me && drift.Equal(placeOf(g.Application), want) {
				match = append(match, l)
				break
			}
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	return located{}, fmt.Errorf("%w; %d of them make Application %s as the cluster has it", err, len(match), me)
}

// placeOf is what tells an Application's variants apart: its sources and
// destination.
func placeOf(app drift.Object) any {
	spec := drift.Map(app, "spec")
	return drift.NormalizeNumbers(map[string]any{"source": spec["source"], "sources": spec["sources"], "destination": spec["destination"]})
}

// ignoreByIdentity writes the rule in the shared template of a set whose
// Applications nothing else tells apart. An Argo CD ignore rule matches
// only resources of the Application that carries it, by group, kind, name
// and namespace: when no other Application the set makes manages a
// resource of the drifting one's identity, the rule every one of them gains
// matches nothing in theirs, and their comparison is unchanged. Each other
// Application's resources are rendered from Git (or read from its copy in
// the cluster); when one of them is unknown, or has that identity, the
// instruction stays, saying which. unscoped says why no narrower scope was
// found.
func (c *Context) ignoreByIdentity(o appOrigin, loc located, before appset.Result, gen appset.Generated, rule ignoreRule, respect bool, comment, unscoped string) (*ignoreEdit, string) {
	ref := drift.Ref{Group: rule.Group, Kind: rule.Kind, Namespace: rule.Namespace, Name: rule.Name}
	if rule.Name == "" || strings.ContainsAny(rule.Group+rule.Kind, "*?[") {
		return nil, unscoped + ", and the rule does not name one resource; driftfix edits nothing."
	}
	if len(before.Partial) > 0 {
		return nil, fmt.Sprintf("%s; a rule in its template scoped to %s would be safe only if no other Application of the set manages that resource, and the set may make Applications Git alone does not show%s; driftfix edits nothing.", unscoped, ref, unresolvedText(before.Partial))
	}
	var others []drift.Object
	for _, g := range before.Applications {
		if drift.Str(g.Application, "metadata", "name") != o.App {
			others = append(others, g.Application)
		}
	}
	if len(others) > maxRenderedOthers {
		return nil, fmt.Sprintf("%s; a rule in its template scoped to %s would be safe only if no other Application of the set manages that resource, and driftfix renders at most %d of them to tell, not %d; driftfix edits nothing.", unscoped, ref, maxRenderedOthers, len(others))
	}
	var lacking []string // the others a sync option added to the template would change
	for _, other := range others {
		name := drift.Str(other, "metadata", "name")
		ids, err := c.managedIdentities(other)
		if err != nil {
			return nil, fmt.Sprintf("%s; a rule in its template scoped to %s would be safe only if no other Application of the set manages that resource, and driftfix cannot tell which resources Application %s manages (%v); driftfix edits nothing.", unscoped, ref, name, err)
		}
		for _, id := range ids {
			if sameIdentity(rule, id) {
				return nil, fmt.Sprintf("%s; and Application %s, which the set also makes, manages %s too (the same group, kind, namespace and name), so a rule in the shared template would hide its drift as well; driftfix edits nothing.", unscoped, name, id)
			}
		}
		if respect && !hasOption(drift.List(other, "spec", "syncPolicy", "syncOptions"), respectIgnore) {
			lacking = append(lacking, name)
		}
	}
	addOption := respect && !hasOption(drift.List(gen.Application, "spec", "syncPolicy", "syncOptions"), respectIgnore)
	optionNote := ""
	if addOption && len(lacking) > 0 {
		if why := respectHarmless(c.Snapshot.Cluster, others); why != "" {
			return nil, fmt.Sprintf("%s; a rule in its template scoped to %s matches no resource of the other Applications, but a sync would write Git's value back without %s, and adding it to the shared template changes how Application %s syncs: %s; driftfix edits nothing.", unscoped, ref, respectIgnore, strings.Join(lacking, ", "), why)
		}
		optionNote = fmt.Sprintf(", and %s, added with it, has nothing to keep for them (argocd-cm declares no system-wide ignore rule and they have no ignore rule of their own)", respectIgnore)
	}
	var steps []func([]byte) ([]byte, error)
	steps = append(steps, func(b []byte) ([]byte, error) {
		return yamledit.AppendItem(b, loc.doc, drift.MustPointer("/spec/template/spec/ignoreDifferences"), rule, comment)
	})
	if addOption {
		steps = append(steps, func(b []byte) ([]byte, error) {
			return yamledit.AppendItem(b, loc.doc, drift.MustPointer("/spec/template/spec/syncPolicy/syncOptions"), respectIgnore, "")
		})
	}
	how := "spec.template, scoped to " + ref.String() + " by the rule's name and namespace"
	e, err := applyEdits(c.Repo, loc.file, steps...)
	if errors.Is(err, errAlreadyApplied) {
		return &ignoreEdit{already: true}, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("%s; driftfix could not edit %s of ApplicationSet %s in %s: %v.", unscoped, how, o.AppSet, loc.file, err)
	}
	after, broke, err := c.resolveEdited(loc, loc.file, e.After)
	if broke != nil {
		return nil, fmt.Sprintf("the edit of %s breaks ApplicationSet %s: %v.", loc.file, o.AppSet, broke)
	}
	if err != nil {
		return nil, fmt.Sprintf("the edit of %s of ApplicationSet %s in %s makes a set Argo CD refuses: %v.", how, o.AppSet, loc.file, err)
	}
	mine, why := compareShared("ApplicationSet "+o.AppSet, o.App, appsOf(before.Applications), appsOf(after.Applications), rule, addOption)
	if why != "" {
		return nil, fmt.Sprintf("the edit of %s of ApplicationSet %s in %s was not used: %s.", how, o.AppSet, loc.file, why)
	}
	n := len(after.Applications) - 1
	reach := fmt.Sprintf("the other %d Applications it makes gain it too, and none of them manages %s (each one's resources rendered from Git or read from its copy in the cluster), so it matches nothing there and their comparison is unchanged", n, ref)
	if n == 1 {
		reach = fmt.Sprintf("the other Application it makes gains it too, and it does not manage %s (its resources rendered from Git or read from its copy in the cluster), so it matches nothing there and its comparison is unchanged", ref)
	}
	return &ignoreEdit{
		edits:   []Edit{e},
		app:     mine,
		checked: fmt.Sprintf("ApplicationSet %s resolved again from the edited %s: %s gains the rule; %s", o.AppSet, loc.file, o.App, reach),
		undo:    undoText(loc.file),
		note:    fmt.Sprintf("the set makes %d Applications from one template that nothing tells apart, so the rule is in that template, on each of them: it names %s, which only %s manages, so on the others it is present but matches nothing%s", n+1, ref, o.App, optionNote),
	}, ""
}

// maxRenderedOthers bounds the Applications of one set rendered to learn
// what they manage, so that planning one fix stays within seconds.
const maxRenderedOthers = 100

// sameIdentity reports whether an ignore rule would match a resource of
// that identity, as Argo CD matches one: group and kind, then name, then
// namespace when the rule names one. A resource whose namespace is unknown
// (none in its manifest, none in the Application's destination) may be in
// any.
func sameIdentity(r ignoreRule, id drift.Ref) bool {
	if r.Group != id.Group || r.Kind != id.Kind || (r.Name != "" && r.Name != id.Name) {
		return false
	}
	return r.Namespace == "" || id.Namespace == "" || r.Namespace == id.Namespace
}

// respectHarmless says why adding RespectIgnoreDifferences to the other
// Applications could change how they sync, or "" when it cannot: argocd-cm
// is known and declares no system-wide ignore rule, and none of them has an
// ignore rule of its own, so the option has nothing to keep.
func respectHarmless(cluster []drift.Object, others []drift.Object) string {
	st, sys, err := diff.ReadSettings(cluster)
	switch {
	case err != nil:
		return fmt.Sprintf("argocd-cm cannot be read (%v)", err)
	case !st.FromConfigMap:
		return "the snapshot holds no argocd-cm, so its system-wide ignore rules, which the option would also respect, are unknown"
	case len(sys) > 0:
		return "argocd-cm declares system-wide ignore rules, which the option would also respect for them"
	}
	for _, a := range others {
		if len(drift.List(a, "spec", "ignoreDifferences")) > 0 {
			return fmt.Sprintf("Application %s has ignore rules of its own, which a sync would then respect", drift.Str(a, "metadata", "name"))
		}
	}
	return ""
}

// narrowInAppSet narrows, in the ApplicationSet that owns the Application,
// a broad rule its template writes literally: the rule is removed from
// spec.template and the narrowed rules appended there. When the set makes
// other Applications, they lose and gain the same rules, so the edit is
// made only when neither the broad rule nor a narrowed one matches a
// resource any of them manages (each rendered from Git or read from its
// copy in the cluster): their comparison is then unchanged. It is verified
// by resolving the set again.
func (c *Context) narrowInAppSet(o appOrigin, broad any, keep []ignoreRule, comment string) (*ignoreEdit, string) {
	for _, r := range keep {
		if templated(r) {
			return nil, fmt.Sprintf("A narrowed rule holds {{ or }}, which ApplicationSet %s would render as a template; driftfix writes it nowhere a template is read.", o.AppSet)
		}
	}
	loc, set, before, why := c.openAppSet(o.AppSet)
	if why != "" {
		return nil, why
	}
	if len(before.Unresolved) > 0 || len(before.Partial) > 0 {
		return nil, fmt.Sprintf("ApplicationSet %s in %s may make Applications Git alone does not show%s; driftfix cannot tell whether they rely on the rule.", o.AppSet, loc.file, unresolvedText(append(append([]appset.Unresolved{}, before.Unresolved...), before.Partial...)))
	}
	found := false
	for _, g := range before.Applications {
		found = found || drift.Str(g.Application, "metadata", "name") == o.App
	}
	if !found {
		return nil, fmt.Sprintf("ApplicationSet %s in %s does not make Application %s from Git alone.", o.AppSet, loc.file, o.App)
	}
	want := drift.NormalizeNumbers(broad)
	at := -1
	for i, r := range drift.List(set, "spec", "template", "spec", "ignoreDifferences") {
		if drift.Equal(drift.NormalizeNumbers(r), want) {
			at = i
			break
		}
	}
	if at < 0 {
		for _, g := range before.Applications {
			if drift.Str(g.Application, "metadata", "name") != o.App || !narrowed(g.Application, broad, keep) {
				continue
			}
			return &ignoreEdit{already: true}, ""
		}
		if patch, _ := drift.Map(set, "spec")["templatePatch"].(string); elementParam(patch) != "" {
			return c.narrowInElement(o, loc, set, before, elementParam(patch), broad, keep, comment)
		}
		return nil, fmt.Sprintf("the rule is not written as it is in spec.template.spec.ignoreDifferences of ApplicationSet %s in %s (a templatePatch or a parameter makes it), so driftfix cannot tell what to change.", o.AppSet, loc.file)
	}
	if len(before.Applications) > maxRenderedOthers+1 {
		return nil, fmt.Sprintf("ApplicationSet %s in %s gives the rule to %d Applications, and driftfix renders at most %d of them to tell whether they rely on it.", o.AppSet, loc.file, len(before.Applications), maxRenderedOthers)
	}
	var names []string
	for _, g := range before.Applications {
		other := g.Application
		name := drift.Str(other, "metadata", "name")
		if name == o.App {
			continue
		}
		names = append(names, name)
		ids, err := c.managedIdentities(other)
		if err != nil {
			return nil, fmt.Sprintf("ApplicationSet %s in %s gives the rule to every Application it makes, and driftfix cannot tell which resources Application %s manages (%v), so whether it relies on the rule is unknown.", o.AppSet, loc.file, name, err)
		}
		for _, id := range ids {
			if ruleMatches(broad, id) {
				return nil, fmt.Sprintf("ApplicationSet %s in %s gives the rule to every Application it makes, and on Application %s it matches %s: narrowing it in the template would change that Application's comparison too; narrow it for %s with a templatePatch, or let a person decide for both.", o.AppSet, loc.file, name, id, o.App)
			}
			for _, r := range keep {
				if sameIdentity(r, id) {
					return nil, fmt.Sprintf("ApplicationSet %s in %s gives the rules to every Application it makes, and Application %s manages %s too, which a narrowed rule would hide there.", o.AppSet, loc.file, name, id)
				}
			}
		}
	}
	steps := []func([]byte) ([]byte, error){
		func(b []byte) ([]byte, error) {
			return yamledit.Remove(b, loc.doc, drift.Pointer{"spec", "template", "spec", "ignoreDifferences", strconv.Itoa(at)})
		},
	}
	for _, r := range keep {
		r := r
		steps = append(steps, func(b []byte) ([]byte, error) {
			return yamledit.AppendItem(b, loc.doc, drift.MustPointer("/spec/template/spec/ignoreDifferences"), r, comment)
		})
	}
	e, err := applyEdits(c.Repo, loc.file, steps...)
	if errors.Is(err, errAlreadyApplied) {
		return &ignoreEdit{already: true}, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("driftfix could not edit spec.template of ApplicationSet %s in %s: %v.", o.AppSet, loc.file, err)
	}
	after, broke, err := c.resolveEdited(loc, loc.file, e.After)
	if broke != nil {
		return nil, fmt.Sprintf("the edit of %s breaks ApplicationSet %s: %v.", loc.file, o.AppSet, broke)
	}
	if err != nil {
		return nil, fmt.Sprintf("the edit of spec.template of ApplicationSet %s in %s makes a set Argo CD refuses: %v.", o.AppSet, loc.file, err)
	}
	mine, why := compareNarrowed("ApplicationSet "+o.AppSet, o.App, appsOf(before.Applications), appsOf(after.Applications), broad, keep)
	if why != "" {
		return nil, fmt.Sprintf("the edit of spec.template of ApplicationSet %s in %s was not used: %s.", o.AppSet, loc.file, why)
	}
	ie := &ignoreEdit{
		edits:   []Edit{e},
		app:     mine,
		checked: fmt.Sprintf("ApplicationSet %s resolved again from the edited %s: %s has the narrowed rules in place of the broad one%s", o.AppSet, loc.file, o.App, othersSame(0)),
		undo:    undoText(loc.file),
	}
	if len(names) > 0 {
		sort.Strings(names)
		ie.checked = fmt.Sprintf("ApplicationSet %s resolved again from the edited %s: every Application it makes has the narrowed rules in place of the broad one, and on %s neither matches a resource it manages (each one's resources rendered from Git or read from its copy in the cluster), so their comparison is unchanged", o.AppSet, loc.file, strings.Join(names, ", "))
		ie.note = fmt.Sprintf("the set gives its template's rules to all %d Applications it makes; on the others the broad rule and the narrowed ones match nothing, so they are unchanged", len(names)+1)
	}
	return ie, ""
}

// narrowInElement narrows a broad rule the Application takes from its own
// list generator element (the value the set's templatePatch reads): the
// rule is removed from the element and the narrowed rules appended there,
// so no other Application changes; verified by resolving the set again.
func (c *Context) narrowInElement(o appOrigin, loc located, set map[string]any, before appset.Result, param string, broad any, keep []ignoreRule, comment string) (*ignoreEdit, string) {
	var gen appset.Generated
	for _, g := range before.Applications {
		if drift.Str(g.Application, "metadata", "name") == o.App {
			gen = g
		}
	}
	el, err := listElement(set, gen, before.Applications)
	if err != nil {
		return nil, fmt.Sprintf("ApplicationSet %s in %s reads each element's %s in its templatePatch, but %v.", o.AppSet, loc.file, param, err)
	}
	list := append(append(drift.Pointer{}, el...), param)
	items, _ := list.Get(set)
	at := -1
	for i, r := range drift.List(items) {
		if drift.Equal(drift.NormalizeNumbers(r), drift.NormalizeNumbers(broad)) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, fmt.Sprintf("the rule is neither in spec.template nor in the %s of the element that makes %s (%s) of ApplicationSet %s in %s, so driftfix cannot tell what to change.", param, o.App, el, o.AppSet, loc.file)
	}
	steps := []func([]byte) ([]byte, error){
		func(b []byte) ([]byte, error) {
			return yamledit.Remove(b, loc.doc, append(append(drift.Pointer{}, list...), strconv.Itoa(at)))
		},
	}
	for _, r := range keep {
		r := r
		steps = append(steps, func(b []byte) ([]byte, error) { return yamledit.AppendItem(b, loc.doc, list, r, comment) })
	}
	e, err := applyEdits(c.Repo, loc.file, steps...)
	if err != nil {
		return nil, fmt.Sprintf("driftfix could not edit the %s of the element that makes %s in %s: %v.", param, o.App, loc.file, err)
	}
	after, broke, err := c.resolveEdited(loc, loc.file, e.After)
	if broke != nil {
		return nil, fmt.Sprintf("the edit of %s breaks ApplicationSet %s: %v.", loc.file, o.AppSet, broke)
	}
	if err != nil {
		return nil, fmt.Sprintf("the edit of the element that makes %s makes ApplicationSet %s one Argo CD refuses: %v.", o.App, o.AppSet, err)
	}
	var mineBefore, mineAfter []drift.Object
	var othersBefore, othersAfter []drift.Object
	for _, g := range before.Applications {
		if drift.Str(g.Application, "metadata", "name") == o.App {
			mineBefore = append(mineBefore, g.Application)
		} else {
			othersBefore = append(othersBefore, g.Application)
		}
	}
	for _, g := range after.Applications {
		if drift.Str(g.Application, "metadata", "name") == o.App {
			mineAfter = append(mineAfter, g.Application)
		} else {
			othersAfter = append(othersAfter, g.Application)
		}
	}
	byName := map[string]drift.Object{}
	for _, a := range othersAfter {
		byName[drift.Str(a, "metadata", "name")] = a
	}
	for _, b := range othersBefore {
		name := drift.Str(b, "metadata", "name")
		if a, ok := byName[name]; len(othersAfter) != len(othersBefore) || !ok || !drift.Equal(drift.NormalizeNumbers(map[string]any(a)), drift.NormalizeNumbers(map[string]any(b))) {
			return nil, fmt.Sprintf("the edit of the element that makes %s changes Application %s of ApplicationSet %s too.", o.App, name, o.AppSet)
		}
	}
	mine, why := compareNarrowed("ApplicationSet "+o.AppSet, o.App, mineBefore, mineAfter, broad, keep)
	if why != "" {
		return nil, fmt.Sprintf("the edit of the element that makes %s in %s was not used: %s.", o.App, loc.file, why)
	}
	return &ignoreEdit{
		edits:   []Edit{e},
		app:     mine,
		checked: fmt.Sprintf("ApplicationSet %s resolved again from the edited %s: %s has the narrowed rules in place of the broad one%s", o.AppSet, loc.file, o.App, othersSame(len(after.Applications)-1)),
		undo:    undoText(loc.file),
		note:    fmt.Sprintf("the rule is this Application's own, in the %s of the generator element that makes it (%s), which the set's templatePatch reads", param, el),
	}, ""
}

// narrowed reports whether an Application has the narrowed rules and not
// the broad one.
func narrowed(app drift.Object, broad any, keep []ignoreRule) bool {
	want := drift.NormalizeNumbers(broad)
	for _, r := range drift.List(app, "spec", "ignoreDifferences") {
		if drift.Equal(drift.NormalizeNumbers(r), want) {
			return false
		}
	}
	for _, r := range keep {
		if !hasRule(app, r) {
			return false
		}
	}
	return true
}

// ruleMatches reports whether an ignore rule, as an Application holds it,
// may match a resource of that identity. A group or kind with a wildcard is
// taken to match any (more matches only make driftfix edit less).
func ruleMatches(rule any, id drift.Ref) bool {
	field := func(k, v string, glob bool) bool {
		r := drift.Str(rule, k)
		if glob && strings.ContainsAny(r, "*?[") {
			return true
		}
		return r == "" && k != "group" && k != "kind" || r == v
	}
	ns := drift.Str(rule, "namespace")
	return field("group", id.Group, true) && field("kind", id.Kind, true) && field("name", id.Name, false) &&
		(ns == "" || id.Namespace == "" || ns == id.Namespace)
}

// compareNarrowed checks a template edit that replaces rule broad by keep
// on every Application a source makes: each must be as before but for that,
// none may appear or vanish. It returns app as made after the edit.
func compareNarrowed(source, app string, before, after []drift.Object, broad any, keep []ignoreRule) (drift.Object, string) {
	a := map[string]drift.Object{}
	for _, x := range after {
		a[drift.Str(x, "metadata", "name")] = x
	}
	if len(after) != len(before) || len(a) != len(after) {
		return nil, fmt.Sprintf("%s makes %d Applications after it, %d before", source, len(after), len(before))
	}
	var mine drift.Object
	for _, b := range before {
		name := drift.Str(b, "metadata", "name")
		got, ok := a[name]
		if !ok {
			return nil, fmt.Sprintf("%s no longer makes Application %s after it", source, name)
		}
		want := drift.DeepCopy(b).(map[string]any)
		var rules []any
		removed := false
		for _, r := range drift.List(b, "spec", "ignoreDifferences") {
			if !removed && drift.Equal(drift.NormalizeNumbers(r), drift.NormalizeNumbers(broad)) {
				removed = true
				continue
			}
			rules = append(rules, r)
		}
		for _, r := range keep {
			rules = append(rules, toPlainYAML(r.object()))
		}
		spec := drift.Map(want, "spec")
		if len(rules) == 0 {
			delete(spec, "ignoreDifferences")
		} else {
			spec["ignoreDifferences"] = rules
		}
		if !removed || !drift.Equal(drift.NormalizeNumbers(want), drift.NormalizeNumbers(got)) {
			return nil, fmt.Sprintf("Application %s as %s makes it after the edit is not the one before with the broad rule replaced by the narrowed ones", name, source)
		}
		if name == app {
			mine = got
		}
	}
	if mine == nil {
		return nil, fmt.Sprintf("%s does not make Application %s", source, app)
	}
	return mine, ""
}

// narrowWhereGenerated makes a narrowing plan's edit in the ApplicationSet
// that owns the Application (narrowInAppSet), or leaves the plan without
// one when the set already makes it with the narrowed rules. It reports
// false when it could not, with why, for the instruction that takes its
// place.
func (c *Context) narrowWhereGenerated(p *Plan, o appOrigin, broad any, keep []ignoreRule, comment string) (bool, string) {
	ie, why := c.narrowInAppSet(o, broad, keep, comment)
	if ie == nil {
		return false, why
	}
	if ie.already {
		return true, "" // no edit: the plan says the repository has the fix
	}
	p.Edits = append(p.Edits, ie.edits...)
	p.checked = ie.checked
	for _, e := range ie.edits {
		p.reached = append(p.reached, e.File)
	}
	p.Rationale.Undo = ie.undo
	if ie.note != "" {
		p.Rationale.Why += "; " + ie.note
	}
	return true, ""
}

// jsonRule is an ignore rule as a JSON config file holds it, its fields in
// the order people write them.
type jsonRule struct {
	Group                 string   `json:"group"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// jsonAppend appends item to the array under key of the JSON object src
// (adding the key when it is absent), keeping every other byte: the new
// element takes the indentation of the one before it, or one level more
// than the key. It checks its own work: the result must decode to src's
// object with item appended.
func jsonAppend(src []byte, key string, item any) ([]byte, error) {
	var orig map[string]any
	if err := json.Unmarshal(src, &orig); err != nil {
		return nil, fmt.Errorf("read the JSON object: %w", err)
	}
	if l, ok := orig[key]; ok {
		if _, isList := l.([]any); !isList {
			return nil, fmt.Errorf("%q is a %T, not a list", key, l)
		}
	}
	sp, err := scanJSONObject(src, key)
	if err != nil {
		return nil, err
	}
	var out []byte
	if sp.keyAt < 0 {
		out, err = jsonAddKey(src, sp, key, item, len(orig) > 0)
	} else {
		out, err = jsonAddElement(src, sp, key, item)
	}
	if err != nil {
		return nil, err
	}
	if err := checkJSONAppend(orig, out, key, item); err != nil {
		return nil, err
	}
	return out, nil
}

// jsonSpan is where jsonAppend edits a JSON object: the offsets of the
// quote opening the key (-1 when absent), of the end of its value, of the
// quote opening the first key, and of the object's closing brace, and
// whether the object spans lines.
type jsonSpan struct {
	keyAt, valEnd, firstKey, closeAt int
	pretty                           bool
}

// scanJSONObject reads the members of the JSON object src and finds key's.
func scanJSONObject(src []byte, key string) (jsonSpan, error) {
	sp := jsonSpan{keyAt: -1, valEnd: -1, firstKey: -1}
	dec := json.NewDecoder(bytes.NewReader(src))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return sp, fmt.Errorf("the file is not a JSON object")
	}
	for dec.More() {
		start := int(dec.InputOffset())
		if sp.firstKey < 0 {
			sp.firstKey = start + bytes.IndexByte(src[start:], '"')
		}
		t, err := dec.Token()
		if err != nil {
			return sp, fmt.Errorf("read the JSON object: %w", err)
		}
		k, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return sp, fmt.Errorf("read %q: %w", k, err)
		}
		if k == key {
			// Go's decoder keeps the last of duplicate keys: so does this.
			sp.keyAt = start + bytes.IndexByte(src[start:], '"')
			sp.valEnd = int(dec.InputOffset())
		}
	}
	closeAt := int(dec.InputOffset()) // before the object's closing brace
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return sp, fmt.Errorf("the JSON object does not close")
	}
	sp.closeAt = closeAt + bytes.IndexByte(src[closeAt:], '}')
	sp.pretty = bytes.Contains(src, []byte("\n"))
	return sp, nil
}

// jsonIndentOf is the indentation of the line of src that holds offset at.
func jsonIndentOf(src []byte, at int) string {
	ls := bytes.LastIndexByte(src[:at], '\n') + 1
	n := ls
	for n < at && (src[n] == ' ' || src[n] == '\t') {
		n++
	}
	return string(src[ls:n])
}

// marshalJSONItem writes item on one line, or indented by prefix and unit
// in a file that spans lines.
func marshalJSONItem(item any, pretty bool, prefix, unit string) ([]byte, error) {
	if !pretty {
		return json.Marshal(item)
	}
	return json.MarshalIndent(item, prefix, unit)
}

// jsonAddKey adds key, a list of item alone, before the closing brace, after
// the last member (hasMembers says the object has one).
func jsonAddKey(src []byte, sp jsonSpan, key string, item any, hasMembers bool) ([]byte, error) {
	last := bytes.LastIndexFunc(src[:sp.closeAt], func(r rune) bool { return !unicode.IsSpace(r) })
	unit, ind := "  ", "  "
	if sp.pretty {
		if hasMembers {
			ind = jsonIndentOf(src, last)
			if ind != "" {
				unit = ind
			}
		}
	}
	val, err := marshalJSONItem(item, sp.pretty, ind+unit, unit)
	if err != nil {
		return nil, err
	}
	k, _ := json.Marshal(key)
	var ins []byte
	sep := []byte{}
	if hasMembers {
		sep = []byte(",")
	}
	if sp.pretty {
		ins = fmt.Appendf(nil, "%s\n%s%s: [\n%s%s%s\n%s]", sep, ind, k, ind, unit, val, ind)
	} else {
		ins = fmt.Appendf(nil, "%s%s:[%s]", sep, k, val)
	}
	return append(append(append([]byte{}, src[:last+1]...), ins...), src[last+1:]...), nil
}

// jsonAddElement appends item to the list under key, indented like the
// element before it, or one level more than the key.
func jsonAddElement(src []byte, sp jsonSpan, key string, item any) ([]byte, error) {
	keyAt, valEnd := sp.keyAt, sp.valEnd
	valStart := valEnd - len(bytes.TrimLeftFunc(src[keyAt:valEnd], func(r rune) bool { return r != '[' }))
	if valStart < keyAt || src[valStart] != '[' {
		return nil, fmt.Errorf("%q is not a list", key)
	}
	closing := valEnd - 1
	for closing > valStart && src[closing] != ']' {
		closing--
	}
	last := bytes.LastIndexFunc(src[:closing], func(r rune) bool { return !unicode.IsSpace(r) })
	empty := last == valStart
	keyInd := jsonIndentOf(src, keyAt)
	fileUnit := jsonIndentOf(src, sp.firstKey)
	if fileUnit == "" {
		fileUnit = "  "
	}
	ind := keyInd + fileUnit
	if !empty && bytes.IndexByte(src[valStart:closing], '\n') >= 0 {
		ind = jsonIndentOf(src, lastElementStart(src, valStart, last))
	}
	unit := strings.TrimPrefix(ind, keyInd)
	if unit == "" {
		unit = "  "
	}
	val, err := marshalJSONItem(item, sp.pretty, ind, unit)
	if err != nil {
		return nil, err
	}
	var ins []byte
	switch {
	case !sp.pretty && empty:
		ins = val
	case !sp.pretty:
		ins = append([]byte(","), val...)
	case empty:
		ins = fmt.Appendf(nil, "\n%s%s\n%s", ind, val, keyInd)
		return append(append(append([]byte{}, src[:valStart+1]...), ins...), src[closing:]...), nil
	default:
		ins = fmt.Appendf(nil, ",\n%s%s", ind, val)
	}
	return append(append(append([]byte{}, src[:last+1]...), ins...), src[last+1:]...), nil
}

// lastElementStart is where the last element of the list opening at
// valStart begins, last being its final byte.
func lastElementStart(src []byte, valStart, last int) int {
	elemStart := last
	depth := 0
	for i := last; i > valStart; i-- {
		switch src[i] {
		case '}', ']':
			depth++
		case '{', '[':
			depth--
		}
		if depth == 0 && (src[i] == '{' || src[i] == '"' || src[i] == '[') {
			elemStart = i
		}
		if depth == 0 && src[i] == ',' {
			break
		}
	}
	return elemStart
}

// checkJSONAppend checks that out decodes to orig with item appended to the
// list under key, and to nothing else.
func checkJSONAppend(orig map[string]any, out []byte, key string, item any) error {
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		return fmt.Errorf("the edited file is not JSON: %w", err)
	}
	raw, err := json.Marshal(item)
	if err != nil {
		return err
	}
	var plain any
	if err := json.Unmarshal(raw, &plain); err != nil {
		return err
	}
	want := drift.DeepCopy(orig).(map[string]any)
	l, _ := want[key].([]any)
	want[key] = append(append([]any{}, l...), plain)
	if !drift.Equal(got, want) {
		return fmt.Errorf("the edit of the JSON file changed more than %q", key)
	}
	return nil
}
