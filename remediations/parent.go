package remediations

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// An Application applied by a parent application (its tracking id or
// instance label) is made by the parent's render. When the parent's source
// is a Kustomize overlay or a Helm chart, the Application's manifest in the
// repository is at most a base others may share; the rule goes where this
// parent alone makes the Application:
//
//   - Kustomize: the overlay's own patch of the Application, the outermost
//     one first (a strategic merge patch gains the entry, a JSON 6902 patch
//     an add operation); the base only when no other kustomization reads it;
//   - Helm: the values entry that renders this child (a map key or a list
//     item named after it, in the value files the parent reads, the last one
//     first), under the ignoreDifferences key the chart's templates read;
//     else the chart template that holds the child as plain YAML.
//
// Every candidate edit is rendered as the parent renders: it is used only
// when the child gains exactly the rule and everything else the parent
// makes is unchanged.

// ignoreInParent edits the source of the parent application that applies
// the snapshot's Application. It reports false when the parent's source is
// neither an overlay nor a chart in this repository, or the parent is not
// known (a plain manifest is edited instead).
func (c *Context) ignoreInParent(o appOrigin, rule ignoreRule, respect bool, comment string) (*ignoreEdit, string, bool) {
	parent, where := c.parentObject(o.Parent)
	if parent == nil {
		return nil, "", false
	}
	for _, src := range drift.Sources(parent) {
		if src.Chart != "" {
			continue
		}
		mine := false
		for _, s := range drift.Sources(c.Snapshot.Application) {
			mine = mine || normRepo(s.RepoURL) == normRepo(src.RepoURL)
		}
		assume := ""
		if !mine {
			assume = fmt.Sprintf(" (the repository driftfix was given taken as the parent's %s)", src.RepoURL)
		}
		name := drift.Str(parent, "metadata", "name")
		switch {
		case kustomizationFile(c.Repo, src.Path) != "":
			render := func(r Repo) ([]drift.Object, error) {
				return render.KustomizeWithLimits(r, src.Path, c.Render)
			}
			var why string
			cands := func(child drift.Object) []parentEdit {
				var out []parentEdit
				out, why = c.overlayCandidates(src.Path, child, rule, respect, comment)
				return out
			}
			ie, why2 := c.tryParentEdits(o, fmt.Sprintf("parent Application %s (%s, kustomize build %s)", name, where, src.Path), render, cands, rule, respect)
			if ie != nil {
				ie.checked += assume
				ie.rendered = name
				return ie, "", true
			}
			return nil, strings.TrimSpace(why + " " + why2), true
		case c.Repo[path.Join(src.Path, "Chart.yaml")] != nil:
			opts := render.HelmOptionsFor(parent, src)
			opts.Limits = c.Render
			render := func(r Repo) ([]drift.Object, error) { return render.Helm(r, opts) }
			var none string
			cands := func(child drift.Object) []parentEdit {
				var out []parentEdit
				out, none = c.chartCandidates(opts, child, rule, respect, comment)
				return out
			}
			ie, why := c.tryParentEdits(o, fmt.Sprintf("parent Application %s (%s, chart %s)", name, where, src.Path), render, cands, rule, respect)
			if ie != nil {
				ie.checked += assume
				ie.rendered = name
				return ie, "", true
			}
			return nil, strings.TrimSpace(why + " " + none), true
		}
	}
	return nil, "", false
}

// parentObject returns the parent application's object: from the cluster
// objects of the snapshot, else its manifest in the repository, with where
// it was found.
func (c *Context) parentObject(name string) (drift.Object, string) {
	ns, short, found := strings.Cut(name, "_")
	if !found {
		ns, short = "", name
	}
	for _, a := range c.Snapshot.ClusterObjects("Application") {
		if drift.Str(a, "metadata", "name") == short && (ns == "" || drift.Str(a, "metadata", "namespace") == ns) {
			return a, "as the cluster holds it"
		}
	}
	loc, err := locateDoc(c.Repo, "", drift.Ref{Group: "argoproj.io", Kind: "Application", Name: short, Namespace: ns})
	if err != nil {
		return nil, ""
	}
	doc, err := yamlDoc(c.Repo[loc.file], loc.doc)
	if err != nil {
		return nil, ""
	}
	return doc, "defined in " + loc.file
}

// parentEdit is one place a parent's source may take the rule: the steps
// of one file, and, when the change takes two files (a template that comes
// to read a value, and the value), the steps of the other.
type parentEdit struct {
	file, how string
	steps     []func([]byte) ([]byte, error)
	also      *parentEdit
}

// tryParentEdits renders the parent before and after each candidate edit and
// keeps the first whose only effect is the rule on the child.
func (c *Context) tryParentEdits(o appOrigin, source string, render func(Repo) ([]drift.Object, error), candidates func(child drift.Object) []parentEdit, rule ignoreRule, respect bool) (*ignoreEdit, string) {
	before, err := render(c.Repo)
	if err != nil {
		return nil, fmt.Sprintf("driftfix cannot render %s: %v.", source, err)
	}
	child := findApplication(before, o.App)
	if child == nil {
		return nil, fmt.Sprintf("%s does not render Application %s.", source, o.App)
	}
	if hasRule(child, rule) && (!respect || hasOption(drift.List(child, "spec", "syncPolicy", "syncOptions"), respectIgnore)) {
		return &ignoreEdit{already: true}, ""
	}
	cands := candidates(child)
	if len(cands) == 0 {
		return nil, fmt.Sprintf("%s has no place driftfix can edit that makes Application %s alone.", source, o.App)
	}
	var whys []string
next:
	for _, cd := range cands {
		edited := Repo{}
		for k, v := range c.Repo {
			edited[k] = v
		}
		var edits []Edit
		for part := &cd; part != nil; part = part.also {
			e, err := applyEdits(c.Repo, part.file, part.steps...)
			if errors.Is(err, errAlreadyApplied) {
				whys = append(whys, cd.how+": already there, yet the render lacks the rule")
				continue next
			}
			if err != nil {
				whys = append(whys, cd.how+": "+err.Error())
				continue next
			}
			edited[part.file] = e.After
			edits = append(edits, e)
		}
		after, err := render(edited)
		if err != nil {
			whys = append(whys, cd.how+": the render fails: "+err.Error())
			continue
		}
		if why := sameOthers(before, after); why != "" {
			whys = append(whys, cd.how+": "+why)
			continue
		}
		mine, why := compareGenerated(source, o.App, applicationsOf(before), applicationsOf(after), rule, respect)
		if why != "" {
			whys = append(whys, cd.how+": "+why)
			continue
		}
		var files []string
		for _, e := range edits {
			files = append(files, e.File)
		}
		return &ignoreEdit{
			edits:   edits,
			app:     mine,
			checked: fmt.Sprintf("%s rendered again with the edit of %s: %s gains the rule%s", source, cd.how, o.App, othersSame(len(after)-1)),
			undo:    undoText(files...),
		}, ""
	}
	return nil, fmt.Sprintf("no edit of %s verified (%s).", source, strings.Join(whys, "; "))
}

func isApplication(o drift.Object) bool {
	g, _ := drift.SplitAPIVersion(drift.Str(o, "apiVersion"))
	return drift.Str(o, "kind") == "Application" && g == "argoproj.io"
}

func findApplication(objs []drift.Object, name string) drift.Object {
	for _, o := range objs {
		if isApplication(o) && drift.Str(o, "metadata", "name") == name {
			return o
		}
	}
	return nil
}

func applicationsOf(objs []drift.Object) []drift.Object {
	var out []drift.Object
	for _, o := range objs {
		if isApplication(o) {
			out = append(out, o)
		}
	}
	return out
}

// sameOthers says which objects other than Applications a render made
// differently, or "".
func sameOthers(before, after []drift.Object) string {
	key := func(o drift.Object) string {
		return drift.Str(o, "apiVersion") + " " + drift.Str(o, "kind") + " " + drift.Str(o, "metadata", "namespace") + "/" + drift.Str(o, "metadata", "name")
	}
	index := func(l []drift.Object) map[string]drift.Object {
		m := map[string]drift.Object{}
		for _, o := range l {
			if !isApplication(o) {
				m[key(o)] = o
			}
		}
		return m
	}
	b, a := index(before), index(after)
	var changed []string
	for k, x := range b {
		if y, ok := a[k]; !ok || !drift.Equal(x, y) {
			changed = append(changed, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return ""
	}
	sort.Strings(changed)
	return "it also changes " + strings.Join(changed, ", ")
}

// overlayCandidates are the edits of a parent's kustomization at dir that may
// add the rule to Application app: its patches of it, outermost first, then
// the base manifest when no other kustomization reads it. why says what was
// left out.
func (c *Context) overlayCandidates(dir string, child drift.Object, rule ignoreRule, respect bool, comment string) ([]parentEdit, string) {
	app := drift.Str(child, "metadata", "name")
	ref := drift.Ref{Group: "argoproj.io", Kind: "Application", Name: app}
	sites, err := kustomizeSites(c.Repo, dir, ref, "", "", 0)
	if err != nil {
		return nil, fmt.Sprintf("driftfix cannot read the kustomizations under %s: %v.", dir, err)
	}
	var out []parentEdit
	// JSON 6902 patches that target the Application by kind and name, in
	// the parent's own kustomization.
	if k := kustomizationFile(c.Repo, dir); k != "" {
		if kdoc, err := yamlDoc(c.Repo[k], 0); err == nil {
			for _, pe := range drift.List(kdoc, "patches") {
				f := drift.Str(pe, "path")
				t := drift.Map(pe, "target")
				if f == "" || drift.Str(t, "kind") != "Application" || drift.Str(t, "name") != app {
					continue
				}
				file := path.Clean(path.Join(dir, f))
				docs, err := yamledit.Documents(c.Repo[file])
				if err != nil || len(docs) != 1 {
					continue
				}
				if _, isList := docs[0].([]any); !isList {
					continue
				}
				out = append(out, c.json6902Edits(file, child, rule, respect, comment)...)
			}
		}
	}
	var bases []kustomizeSite
	for i := len(sites) - 1; i >= 0; i-- {
		s := sites[i]
		if !s.patch {
			bases = append(bases, s)
			continue
		}
		out = append(out, c.mergePatchEdits(s.located, true, child, rule, respect, comment)...)
	}
	why := ""
	for _, b := range bases {
		if other := c.otherKustomization(dir, b.file); other != "" {
			why = fmt.Sprintf("The base %s is not edited: %s reads it too.", b.file, other)
			continue
		}
		out = append(out, c.mergePatchEdits(b.located, false, child, rule, respect, comment)...)
	}
	return out, why
}

// mergePatchEdits adds the rule to an Application document (a base, or a
// strategic merge patch of it): to its list of rules when it has one, else
// as a new list holding the rules the child has so far (a patch replaces a
// list whole) and the rule; likewise RespectIgnoreDifferences.
func (c *Context) mergePatchEdits(loc located, patch bool, child drift.Object, rule ignoreRule, respect bool, comment string) []parentEdit {
	doc, err := yamlDoc(c.Repo[loc.file], loc.doc)
	if err != nil {
		return nil
	}
	app := drift.Str(child, "metadata", "name")
	how := fmt.Sprintf("the patch of %s in %s", app, loc.file)
	if !patch {
		how = fmt.Sprintf("Application %s in %s", app, loc.file)
	}
	var steps []func([]byte) ([]byte, error)
	appendAll := func(p drift.Pointer, have []any, add any, comment string) {
		if _, ok := p.Get(doc); !ok {
			for _, h := range have {
				h := orderedRule(h)
				steps = append(steps, func(b []byte) ([]byte, error) { return yamledit.AppendItem(b, loc.doc, p, h, "") })
			}
		}
		steps = append(steps, func(b []byte) ([]byte, error) { return yamledit.AppendItem(b, loc.doc, p, add, comment) })
	}
	appendAll(drift.MustPointer("/spec/ignoreDifferences"), drift.List(child, "spec", "ignoreDifferences"), rule, comment)
	if opts := drift.List(child, "spec", "syncPolicy", "syncOptions"); respect && !hasOption(opts, respectIgnore) {
		appendAll(drift.MustPointer("/spec/syncPolicy/syncOptions"), opts, respectIgnore, "")
	}
	return []parentEdit{{file: loc.file, how: how, steps: steps}}
}

// json6902Edits appends add operations for the rule (and
// RespectIgnoreDifferences) to a JSON 6902 patch of the child.
func (c *Context) json6902Edits(file string, child drift.Object, rule ignoreRule, respect bool, comment string) []parentEdit {
	app := drift.Str(child, "metadata", "name")
	ops := []map[string]any{{"op": "add", "path": "/spec/ignoreDifferences/-", "value": rule}}
	if drift.List(child, "spec", "ignoreDifferences") == nil {
		ops[0] = map[string]any{"op": "add", "path": "/spec/ignoreDifferences", "value": []any{rule}}
	}
	if opts := drift.List(child, "spec", "syncPolicy", "syncOptions"); respect && !hasOption(opts, respectIgnore) {
		if opts == nil {
			return nil // the patch would have to create syncPolicy: left to a person
		}
		ops = append(ops, map[string]any{"op": "add", "path": "/spec/syncPolicy/syncOptions/-", "value": respectIgnore})
	}
	var steps []func([]byte) ([]byte, error)
	for i, op := range ops {
		op, cm := op, ""
		if i == 0 {
			cm = comment
		}
		steps = append(steps, func(b []byte) ([]byte, error) { return yamledit.AppendTopItem(b, 0, op, cm) })
	}
	return []parentEdit{{file: file, how: fmt.Sprintf("the JSON patch of %s in %s", app, file), steps: steps}}
}

// otherKustomization names a kustomization of the repository outside dir's
// own chain that reads file, or "".
func (c *Context) otherKustomization(dir, file string) string {
	mine := map[string]bool{}
	readsOf(c.Repo, dir, mine, 0)
	for _, f := range sortedFiles(c.Repo) {
		base := path.Base(f)
		if base != "kustomization.yaml" && base != "kustomization.yml" && base != "Kustomization" {
			continue
		}
		if mine[f] {
			continue
		}
		reads := map[string]bool{}
		readsOf(c.Repo, path.Dir(f), reads, 0)
		if reads[file] {
			return f
		}
	}
	return ""
}

// diffKey matches the name of a value a chart template reads its ignore
// rules from.
var diffKey = regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_]*)`)

// chartCandidates are the edits of a parent chart that may add the rule to
// Application app: the values entry named after it in each value file, the
// last merged first, under each ignoreDifferences key the templates read;
// then a template that holds the Application as plain YAML.
func (c *Context) chartCandidates(opts render.HelmOptions, child drift.Object, rule ignoreRule, respect bool, comment string) ([]parentEdit, string) {
	app := drift.Str(child, "metadata", "name")
	dir := strings.Trim(opts.ChartDir, "/")
	var tpls []string
	keys := map[string]bool{}
	for _, f := range sortedFiles(c.Repo) {
		if !inDir(f, path.Join(dir, "templates")) {
			continue
		}
		tpls = append(tpls, f)
		for _, m := range diffKey.FindAllStringSubmatch(string(c.Repo[f]), -1) {
			if strings.Contains(strings.ToLower(m[1]), "ignoredifferences") {
				keys[m[1]] = true
			}
		}
	}
	var keyList []string
	for k := range keys {
		keyList = append(keyList, k)
	}
	sort.Strings(keyList)
	files := []string{path.Join(dir, "values.yaml")}
	if vf, err := render.HelmValueFiles(c.Repo, opts); err == nil {
		files = append(files, vf...)
	}
	var out []parentEdit
	for i := len(files) - 1; i >= 0 && len(keyList) > 0; i-- {
		f := files[i]
		docs, err := yamledit.Documents(c.Repo[f])
		if err != nil || len(docs) != 1 {
			continue
		}
		for _, entry := range entriesNamed(docs[0], app, nil, 0) {
			for _, k := range keyList {
				p := append(append(drift.Pointer{}, entry...), k)
				out = append(out, parentEdit{file: f, how: fmt.Sprintf("values entry %s of %s in %s", p, app, f), steps: []func([]byte) ([]byte, error){
					func(b []byte) ([]byte, error) { return yamledit.AppendItem(b, 0, p, rule, comment) },
				}})
			}
		}
	}
	for _, f := range tpls {
		if templated(rule) {
			break // a chart template would run it
		}
		docs, err := yamledit.Documents(c.Repo[f])
		if err != nil {
			// a template that is YAML once its actions are masked
			// (chart_template.go), when it names this child or masks its name
			masked, ok := maskTemplate(c.Repo[f])
			if !ok || !strings.Contains(string(c.Repo[f]), "kind: Application") {
				continue
			}
			mdocs, err := yamledit.Documents(masked)
			if err != nil {
				continue
			}
			for _, d := range mdocs {
				m, _ := d.(map[string]any)
				if n := drift.Str(m, "metadata", "name"); drift.Str(m, "kind") != "Application" || (n != app && n != "x") {
					continue
				}
				steps := []func([]byte) ([]byte, error){func(b []byte) ([]byte, error) {
					return templateAppend(b, drift.MustPointer("/spec/ignoreDifferences"), rule, comment)
				}}
				if opts := drift.List(child, "spec", "syncPolicy", "syncOptions"); respect && !hasOption(opts, respectIgnore) {
					steps = append(steps, func(b []byte) ([]byte, error) {
						return templateAppend(b, drift.MustPointer("/spec/syncPolicy/syncOptions"), respectIgnore, "")
					})
				}
				out = append(out, parentEdit{file: f, how: fmt.Sprintf("template %s of %s", f, app), steps: steps})
			}
			continue
		}
		for i, d := range docs {
			if m, _ := d.(map[string]any); isApplication(m) && drift.Str(m, "metadata", "name") == app {
				for _, e := range c.mergePatchEdits(located{file: f, doc: i}, false, child, rule, respect, comment) {
					e.how = fmt.Sprintf("template %s of %s", f, app)
					out = append(out, e)
				}
			}
		}
	}
	if len(out) == 0 && !templated(rule) {
		out = append(out, c.rangeCandidates(tpls, files, app, rule, respect && !hasOption(drift.List(child, "spec", "syncPolicy", "syncOptions"), respectIgnore), comment)...)
	}
	if len(out) > 8 {
		out = out[:8] // each is a render; a doubt beyond these is for a person
	}
	none := ""
	if len(out) == 0 {
		switch {
		case len(keyList) == 0:
			none = fmt.Sprintf("Its templates read no ignoreDifferences value per child and hold %s only inside their control flow (a range or condition), so a change scoped to %s needs a template that reads one (for example an ignoreDifferences field of its values entry); driftfix edits nothing.", app, app)
		default:
			none = fmt.Sprintf("Its templates read %s, but no values entry is named after %s.", strings.Join(keyList, ", "), app)
		}
	}
	return out, none
}

// entriesNamed returns the pointers of the values entries named after app: a
// map under a key equal to it, or a list item map whose name (or app,
// appName) is it.
func entriesNamed(v any, app string, at drift.Pointer, depth int) []drift.Pointer {
	if depth > 6 {
		return nil
	}
	var out []drift.Pointer
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(append(drift.Pointer{}, at...), k)
			if _, isMap := x[k].(map[string]any); isMap && k == app {
				out = append(out, p)
				continue
			}
			out = append(out, entriesNamed(x[k], app, p, depth+1)...)
		}
	case []any:
		for i, e := range x {
			p := append(append(drift.Pointer{}, at...), strconv.Itoa(i))
			m, _ := e.(map[string]any)
			if m != nil && (m["name"] == app || m["app"] == app || m["appName"] == app) {
				out = append(out, p)
				continue
			}
			out = append(out, entriesNamed(e, app, p, depth+1)...)
		}
	}
	return out
}

// orderedRule returns an ignore rule read from YAML as an ignoreRule, so it
// is written back in the usual field order, when it has only the fields of
// one; anything else is returned as it is.
func orderedRule(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	var r ignoreRule
	strs := func(x any) ([]string, bool) {
		l, ok := x.([]any)
		if !ok {
			return nil, false
		}
		var out []string
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	for k, x := range m {
		var ok bool
		switch k {
		case "group":
			r.Group, ok = x.(string)
		case "kind":
			r.Kind, ok = x.(string)
		case "name":
			r.Name, ok = x.(string)
		case "namespace":
			r.Namespace, ok = x.(string)
		case "jsonPointers":
			r.JSONPointers, ok = strs(x)
		case "jqPathExpressions":
			r.JQPathExpressions, ok = strs(x)
		case "managedFieldsManagers":
			r.ManagedFieldsManagers, ok = strs(x)
		}
		if !ok {
			return v
		}
	}
	if !drift.Equal(drift.NormalizeNumbers(toPlainYAML(r.object())), drift.NormalizeNumbers(m)) {
		return v
	}
	return r
}

// sharedBase says why a plan's edit reaches other applications when it
// changes the plain manifest of the snapshot's Application that its parent
// builds with a kustomization, and another kustomization of the repository
// reads that manifest too (a base two overlays share); "" otherwise.
func (c *Context) sharedBase(p *Plan) string {
	if len(p.Edits) == 0 {
		return ""
	}
	o := c.applicationOrigin()
	if o.Parent == "" || !o.ok {
		return ""
	}
	parent, _ := c.parentObject(o.Parent)
	for _, src := range drift.Sources(parent) {
		if kustomizationFile(c.Repo, src.Path) == "" {
			continue
		}
		for _, e := range p.Edits {
			if e.File != o.File.file {
				continue
			}
			if other := c.otherKustomization(src.Path, e.File); other != "" {
				return fmt.Sprintf("the edit changes %s, the base of Application %s that parent Application %s builds with %s, and %s reads it too; make the change in %s's overlay (a patch of %s), or let a person decide for both", e.File, o.App, o.Parent, src.Path, other, o.Parent, o.App)
			}
		}
	}
	return ""
}

// rangeCandidates are the edits that make a template ranging over a values
// collection read each element's ignore rules (rangeHook) and give the
// element that renders app the rule: two files, verified together.
func (c *Context) rangeCandidates(tpls, valueFiles []string, app string, rule ignoreRule, respect bool, comment string) []parentEdit {
	var out []parentEdit
	for _, t := range tpls {
		if !strings.Contains(string(c.Repo[t]), "kind: Application") {
			continue
		}
		coll, hook, ok := rangeHook(c.Repo[t], respect)
		if !ok {
			continue
		}
		for i := len(valueFiles) - 1; i >= 0; i-- {
			f := valueFiles[i]
			docs, err := yamledit.Documents(c.Repo[f])
			if err != nil || len(docs) != 1 {
				continue
			}
			v, found := coll.Get(docs[0])
			if !found {
				continue
			}
			el, ok := elementFor(v, app)
			if !ok {
				continue
			}
			p := append(append(append(drift.Pointer{}, coll...), el...), "ignoreDifferences")
			out = append(out, parentEdit{
				file: f, how: fmt.Sprintf("values entry %s of %s in %s, which %s comes to read", p[:len(p)-1], app, f, t),
				steps: []func([]byte) ([]byte, error){func(b []byte) ([]byte, error) { return yamledit.AppendItem(b, 0, p, rule, comment) }},
				also:  &parentEdit{file: t, steps: []func([]byte) ([]byte, error){hook}},
			})
			break
		}
	}
	return out
}
