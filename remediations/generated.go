package remediations

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/appset"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// An ignore rule for an Application the repository does not hold as a plain
// manifest is written where the Application is generated:
//
//   - an ApplicationSet (the Application's ownerReferences): in its
//     template when it makes this Application alone; else scoped to this
//     Application, by the per-element value its templatePatch already reads
//     (a list element's ignoreDifferences), or by a templatePatch condition on
//     a generator parameter only this Application has (goTemplate sets)
//     (appset_ignore.go);
//   - a parent application's Kustomize overlay or Helm chart (parent.go,
//     chart_template.go).
//
// Each edit is verified where Argo CD makes the Application: the set is
// resolved again from the edited file (bot/appset), or the parent rendered
// again (remediations/render), and every Application the edited file makes
// is compared before and after: this one must gain exactly the rule, every
// other one must stay as it was. Only then is the application re-diagnosed
// with the Application as regenerated.

// ignoreEdit is what a generating source's edit produced: the edits, the
// Application as the edited source makes it, and what was checked.
type ignoreEdit struct {
	edits   []Edit
	app     drift.Object // the Application regenerated from the edited source
	checked string       // what re-rendering showed, for the plan's Verification
	undo    string
	// already says the source makes the Application with the rule: no
	// file needs to change.
	already bool
	// rendered is the parent application whose render was checked.
	rendered string
	// note is added to the plan's Why: what a reader of the edit needs to
	// know about its reach (a rule on other Applications that matches
	// nothing there).
	note string
}

// ignoreWhereGenerated writes the rule in the source that generates the
// snapshot's Application when that is an ApplicationSet or a parent
// application's overlay or chart. It reports false when the Application is
// not generated (a plain manifest is edited instead). When it cannot edit, it
// leaves an instruction that names the place and says why.
func (c *Context) ignoreWhereGenerated(p *Plan, o appOrigin, rule ignoreRule, respect bool, comment string) (*drift.Snapshot, bool) {
	var (
		ie      *ignoreEdit
		why     string
		handled bool
	)
	switch {
	case o.AppSet != "":
		ie, why = c.ignoreInAppSet(o, rule, respect, comment)
		handled = true
	case o.Parent != "":
		ie, why, handled = c.ignoreInParent(o, rule, respect, comment)
	}
	if !handled {
		return nil, false
	}
	if ie == nil {
		p.Instructions = o.where("spec.ignoreDifferences") + ", add this entry:\n" + snippet(rule)
		if respect {
			p.Instructions += "and " + respectIgnore + " to its spec.syncPolicy.syncOptions\n"
		}
		p.Instructions += why + "\n"
		app := drift.DeepCopy(c.Snapshot.Application).(map[string]any)
		withRule(app, rule, respect)
		return withApplication(c.Snapshot, app), true
	}
	if ie.already {
		return nil, true // verify says the repository has the fix
	}
	p.Edits = append(p.Edits, ie.edits...)
	p.checked = ie.checked
	if ie.rendered != "" {
		p.rendered = append(p.rendered, ie.rendered)
	} else {
		for _, e := range ie.edits {
			p.reached = append(p.reached, e.File)
		}
	}
	p.Rationale.Undo = ie.undo
	if ie.note != "" {
		p.Rationale.Why += "; " + ie.note
	}
	app := drift.DeepCopy(c.Snapshot.Application).(map[string]any)
	spec := drift.Map(app, "spec")
	if spec == nil {
		spec = map[string]any{}
		app["spec"] = spec
	}
	if l := drift.List(ie.app, "spec", "ignoreDifferences"); l != nil {
		spec["ignoreDifferences"] = l
	}
	if l := drift.List(ie.app, "spec", "syncPolicy", "syncOptions"); l != nil {
		sp, _ := spec["syncPolicy"].(map[string]any)
		if sp == nil {
			sp = map[string]any{}
			spec["syncPolicy"] = sp
		}
		sp["syncOptions"] = l
	}
	return withApplication(c.Snapshot, app), true
}

// withRule adds the rule (and RespectIgnoreDifferences) to an Application object.
func withRule(app map[string]any, rule ignoreRule, respect bool) {
	spec, _ := app["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		app["spec"] = spec
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
}

// compareGenerated checks an edit's reach over what a source makes, by
// Application name: the Application app must differ only by the rule (and
// RespectIgnoreDifferences), every other one must be as before, none may
// appear or vanish. It returns the Application app as made after the edit,
// or why the edit is refused, naming the Applications it would also change.
func compareGenerated(source, app string, before, after []drift.Object, rule ignoreRule, respect bool) (drift.Object, string) {
	byName := func(l []drift.Object) map[string]drift.Object {
		m := map[string]drift.Object{}
		for _, a := range l {
			m[drift.Str(a, "metadata", "name")] = a
		}
		return m
	}
	b, a := byName(before), byName(after)
	var changed []string
	for n, x := range b {
		y, ok := a[n]
		if n == app {
			continue
		}
		if !ok || !drift.Equal(x, y) {
			changed = append(changed, n)
		}
	}
	for n := range a {
		if _, ok := b[n]; !ok {
			changed = append(changed, n)
		}
	}
	sort.Strings(changed)
	if len(changed) > 0 {
		return nil, fmt.Sprintf("it would also change Application %s that %s makes, which was not diagnosed", strings.Join(changed, ", "), source)
	}
	mine, ok := a[app]
	if !ok {
		return nil, fmt.Sprintf("%s no longer makes Application %s after it", source, app)
	}
	want := drift.DeepCopy(b[app]).(map[string]any)
	withRule(want, rule, respect)
	got := drift.DeepCopy(mine).(map[string]any)
	if !sameApart(want, got) {
		return nil, fmt.Sprintf("Application %s as %s makes it after the edit changes more than its ignoreDifferences and syncOptions", app, source)
	}
	if !keeps(drift.List(got, "spec", "ignoreDifferences"), drift.List(b[app], "spec", "ignoreDifferences"), 1) ||
		!keeps(drift.List(got, "spec", "syncPolicy", "syncOptions"), drift.List(b[app], "spec", "syncPolicy", "syncOptions"), 1) {
		return nil, fmt.Sprintf("Application %s as %s makes it after the edit loses or adds ignore rules or sync options besides the new ones", app, source)
	}
	if !hasRule(got, rule) {
		return nil, fmt.Sprintf("Application %s as %s makes it after the edit does not have the rule", app, source)
	}
	if respect && !hasOption(drift.List(got, "spec", "syncPolicy", "syncOptions"), respectIgnore) {
		return nil, fmt.Sprintf("Application %s as %s makes it after the edit lacks %s", app, source, respectIgnore)
	}
	return mine, ""
}

// compareShared checks an edit of a template every Application of a source
// shares: each one, app included, must differ only by the rule (and, with
// addOption, RespectIgnoreDifferences), none may appear or vanish. It
// returns app as made after the edit, or why the edit is refused.
func compareShared(source, app string, before, after []drift.Object, rule ignoreRule, addOption bool) (drift.Object, string) {
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
		respect := addOption && !hasOption(drift.List(b, "spec", "syncPolicy", "syncOptions"), respectIgnore)
		want := drift.DeepCopy(b).(map[string]any)
		withRule(want, rule, respect)
		if !sameApart(want, got) {
			return nil, fmt.Sprintf("Application %s as %s makes it after the edit changes more than its ignoreDifferences and syncOptions", name, source)
		}
		if !keeps(drift.List(got, "spec", "ignoreDifferences"), drift.List(b, "spec", "ignoreDifferences"), 1) || !hasRule(got, rule) {
			return nil, fmt.Sprintf("Application %s as %s makes it after the edit does not have exactly the new rule besides its own", name, source)
		}
		extra := 0
		if respect {
			extra = 1
		}
		opts := drift.List(got, "spec", "syncPolicy", "syncOptions")
		if !keeps(opts, drift.List(b, "spec", "syncPolicy", "syncOptions"), extra) || len(opts) != len(drift.List(b, "spec", "syncPolicy", "syncOptions"))+extra {
			return nil, fmt.Sprintf("Application %s as %s makes it after the edit changes its sync options more than planned", name, source)
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

// managedIdentities are the resources an Application manages: its copy in
// the cluster lists them (status.resources), and its sources in this
// repository render them (a Helm chart, a kustomization, or a directory of
// manifests, read whole: more files only make more resources, never fewer).
// A resource without a namespace takes the Application's destination
// namespace. It fails when neither tells: a source in another repository or
// a chart from a chart repository with no copy in the cluster, or a source
// that does not render.
func (c *Context) managedIdentities(app drift.Object) ([]drift.Ref, error) {
	name, ns := drift.Str(app, "metadata", "name"), drift.Str(app, "metadata", "namespace")
	dest := drift.Str(app, "spec", "destination", "namespace")
	var out []drift.Ref
	live := false
	for _, a := range c.Snapshot.ClusterObjects("Application") {
		if drift.Str(a, "metadata", "name") != name || (ns != "" && drift.Str(a, "metadata", "namespace") != ns) {
			continue
		}
		if rs, ok := drift.Lookup(a, "status", "resources").([]any); ok {
			live = true
			for _, r := range rs {
				out = append(out, drift.Ref{Group: drift.Str(r, "group"), Kind: drift.Str(r, "kind"), Namespace: drift.Str(r, "namespace"), Name: drift.Str(r, "name")})
			}
		}
	}
	mine := map[string]bool{}
	for _, s := range drift.Sources(c.Snapshot.Application) {
		mine[normRepo(s.RepoURL)] = true
	}
	for _, src := range drift.Sources(app) {
		if refOnly(src) {
			continue
		}
		objs, err := c.renderSource(app, src, mine)
		if err != nil {
			if live {
				continue // the cluster's list stands for what Git does not tell
			}
			return nil, err
		}
		for _, o := range objs {
			r := drift.RefOf(o)
			if r.Namespace == "" {
				r.Namespace = dest
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// renderSource renders one source of an Application from the repository:
// a Helm chart, a kustomization, or the manifests of a directory.
func (c *Context) renderSource(app drift.Object, src drift.Source, mine map[string]bool) ([]drift.Object, error) {
	switch {
	case src.Chart != "":
		return nil, fmt.Errorf("its source is chart %s of a chart repository, not at hand", src.Chart)
	case !mine[normRepo(src.RepoURL)]:
		return nil, fmt.Errorf("its source is in repository %s, not at hand", src.RepoURL)
	case drift.Map(src.Spec)["plugin"] != nil:
		return nil, fmt.Errorf("a Config Management Plugin renders its source %s", orDot(src.Path))
	case kustomizationFile(c.Repo, src.Path) != "":
		return render.KustomizeWithLimits(c.Repo, src.Path, c.Render)
	case c.Repo[path.Join(src.Path, "Chart.yaml")] != nil:
		opts := render.HelmOptionsFor(app, src)
		opts.Limits = c.Render
		return render.Helm(c.Repo, opts)
	}
	var out []drift.Object
	found := false
	for _, f := range sortedFiles(c.Repo) {
		if src.Path != "" && !strings.HasPrefix(f, src.Path+"/") {
			continue
		}
		switch path.Ext(f) {
		case ".jsonnet", ".libsonnet":
			return nil, fmt.Errorf("its source %s holds Jsonnet (%s)", orDot(src.Path), f)
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		found = true
		docs, err := yamledit.Documents(c.Repo[f])
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		for _, d := range docs {
			m, ok := d.(map[string]any)
			if !ok || drift.Str(m, "kind") == "" {
				continue
			}
			if strings.HasSuffix(drift.Str(m, "kind"), "List") {
				for _, it := range drift.List(m, "items") {
					if im, ok := it.(map[string]any); ok {
						out = append(out, im)
					}
				}
			}
			out = append(out, m)
		}
	}
	if !found {
		return nil, fmt.Errorf("its source %s holds no manifest in the repository", orDot(src.Path))
	}
	return out, nil
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// sameApart reports whether two Applications are equal but for their ignore
// rules and sync options.
func sameApart(a, b map[string]any) bool {
	strip := func(m map[string]any) any {
		m = drift.DeepCopy(m).(map[string]any)
		if s, ok := m["spec"].(map[string]any); ok {
			delete(s, "ignoreDifferences")
			if sp, ok := s["syncPolicy"].(map[string]any); ok {
				delete(sp, "syncOptions")
				if len(sp) == 0 {
					delete(s, "syncPolicy")
				}
			}
		}
		return drift.NormalizeNumbers(m)
	}
	return drift.Equal(strip(a), strip(b))
}

func hasRule(app drift.Object, rule ignoreRule) bool {
	want := drift.NormalizeNumbers(toPlainYAML(rule.object()))
	for _, r := range drift.List(app, "spec", "ignoreDifferences") {
		if drift.Equal(drift.NormalizeNumbers(r), want) {
			return true
		}
	}
	return false
}

// toPlainYAML makes []string into []any as decoded YAML holds it.
func toPlainYAML(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if l, ok := v.([]string); ok {
			var a []any
			for _, s := range l {
				a = append(a, s)
			}
			out[k] = a
			continue
		}
		out[k] = v
	}
	return out
}

// yamlDoc returns document doc of a YAML file as a map.
func yamlDoc(src []byte, doc int) (map[string]any, error) {
	docs, err := yamledit.Documents(src)
	if err != nil {
		return nil, err
	}
	if doc < 0 || doc >= len(docs) {
		return nil, fmt.Errorf("no document %d", doc)
	}
	m, ok := docs[doc].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("document %d is not a map", doc)
	}
	return m, nil
}

// othersSame says that the other n Applications a source makes are unchanged.
func othersSame(n int) string {
	switch n {
	case 0:
		return ", and it makes no other Application"
	case 1:
		return ", the other Application it makes is unchanged"
	}
	return fmt.Sprintf(", the other %d Applications it makes are unchanged", n)
}

// keeps reports whether list after holds every item of before and at most
// extra more.
func keeps(after, before []any, extra int) bool {
	if len(after) < len(before) || len(after) > len(before)+extra {
		return false
	}
	for _, b := range before {
		found := false
		for _, a := range after {
			if drift.Equal(drift.NormalizeNumbers(a), drift.NormalizeNumbers(b)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// generatedReaders are the Applications the repository's ApplicationSets
// make from Git (resolved as Argo CD's controller would), and those the
// charts and overlays of its Application manifests (and of the parents
// among the cluster objects) render, other than the snapshot's, whose
// source is one of its repositories, with the files each reads: the blast
// radius of an edit reaches them as it reaches an Application whose
// manifest is in the repository. A set that does not resolve, or a parent
// that does not render, adds none; its generators are named where the set
// is edited.
func (c *Context) generatedReaders() []reader {
	return append(c.setReaders(), c.childReaders()...)
}

// childReaders are the children the parents' charts and overlays render
// (see generatedReaders). Only a source one of whose files declares an
// Application is rendered.
func (c *Context) childReaders() []reader {
	me := drift.Str(c.Snapshot.Application, "metadata", "name")
	myRepos := map[string]bool{}
	for _, s := range drift.Sources(c.Snapshot.Application) {
		myRepos[normRepo(s.RepoURL)] = true
	}
	type parent struct {
		obj  drift.Object
		file string
	}
	var parents []parent
	for _, file := range sortedFiles(c.Repo) {
		src := c.Repo[file]
		if !strings.Contains(string(src), "argoproj.io") || !(strings.HasSuffix(file, ".yaml") || strings.HasSuffix(file, ".yml")) {
			continue
		}
		docs, err := yamledit.Documents(src)
		if err != nil {
			continue
		}
		for _, d := range docs {
			if m, _ := d.(map[string]any); isApplication(m) {
				parents = append(parents, parent{m, file})
			}
		}
	}
	for _, a := range c.Snapshot.ClusterObjects("Application") {
		parents = append(parents, parent{a, "as the cluster holds it"})
	}
	var out []reader
	seen := map[string]bool{}
	for _, pa := range parents {
		name := drift.Str(pa.obj, "metadata", "name")
		for _, src := range drift.Sources(pa.obj) {
			if !myRepos[normRepo(src.RepoURL)] || src.Chart != "" || refOnly(src) || seen[name+"\x00"+src.Path] {
				continue
			}
			seen[name+"\x00"+src.Path] = true
			reads := map[string]bool{}
			readsOf(c.Repo, src.Path, reads, 0)
			declares := false
			for f := range reads {
				declares = declares || strings.Contains(string(c.Repo[f]), "Application")
			}
			if !declares {
				continue
			}
			var objs []drift.Object
			var err error
			switch {
			case kustomizationFile(c.Repo, src.Path) != "":
				objs, err = render.KustomizeWithLimits(c.Repo, src.Path, c.Render)
			case c.Repo[path.Join(src.Path, "Chart.yaml")] != nil:
				opts := render.HelmOptionsFor(pa.obj, src)
				opts.Limits = c.Render
				objs, err = render.Helm(c.Repo, opts)
			default:
				continue // a directory's Applications are manifests otherReaders reads
			}
			if err != nil {
				continue
			}
			for _, child := range objs {
				cname := drift.Str(child, "metadata", "name")
				if !isApplication(child) || cname == me {
					continue
				}
				for _, s := range drift.Sources(child) {
					if !myRepos[normRepo(s.RepoURL)] || s.Chart != "" || refOnly(s) {
						continue
					}
					r := reader{app: cname, file: pa.file + ", rendered by Application " + name, path: s.Path, reads: map[string]bool{}}
					readsOf(c.Repo, s.Path, r.reads, 0)
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// setReaders are the Applications the repository's ApplicationSets make
// (see generatedReaders).
func (c *Context) setReaders() []reader {
	me := drift.Str(c.Snapshot.Application, "metadata", "name")
	myRepos := map[string]bool{}
	for _, s := range drift.Sources(c.Snapshot.Application) {
		myRepos[normRepo(s.RepoURL)] = true
	}
	var out []reader
	for _, file := range sortedFiles(c.Repo) {
		src := c.Repo[file]
		if !strings.Contains(string(src), "ApplicationSet") || !(strings.HasSuffix(file, ".yaml") || strings.HasSuffix(file, ".yml")) {
			continue
		}
		docs, err := yamledit.Documents(src)
		if err != nil {
			continue
		}
		for _, d := range docs {
			set, _ := d.(map[string]any)
			g, _ := drift.SplitAPIVersion(drift.Str(set, "apiVersion"))
			if drift.Str(set, "kind") != "ApplicationSet" || g != "argoproj.io" {
				continue
			}
			res, err := appset.Resolve(set, appset.Options{Files: c.repoFiles(c.Repo), Cluster: c.Snapshot.Cluster})
			if err != nil {
				continue
			}
			for _, gen := range res.Applications {
				name := drift.Str(gen.Application, "metadata", "name")
				if name == me {
					continue
				}
				for _, s := range drift.Sources(gen.Application) {
					if !myRepos[normRepo(s.RepoURL)] || s.Chart != "" || refOnly(s) {
						continue
					}
					r := reader{app: name, file: file + ", made by ApplicationSet " + drift.Str(set, "metadata", "name"), path: s.Path, reads: map[string]bool{}}
					readsOf(c.Repo, s.Path, r.reads, 0)
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// generatedApplication makes the snapshot's Application again from the
// source that generates it in repo: the ApplicationSet that owns it,
// resolved, or its parent's overlay or chart, rendered. It returns nil when
// the Application is not generated there (no owning set in the repository,
// no parent whose source is an overlay or chart in it), and an error when
// the source no longer makes it. changed are the files that differ from
// the synced revision: a parent is rendered only when one of them is
// among the files its source reads.
func (c *Context) generatedApplication(changed []string) (drift.Object, error) {
	o := c.applicationOrigin()
	if o.AppSet != "" {
		loc, err := c.locateAppSet(o.AppSet)
		if err != nil {
			return nil, nil
		}
		set, err := yamlDoc(c.Repo[loc.file], loc.doc)
		if err != nil {
			return nil, fmt.Errorf("ApplicationSet %s in %s: %w", o.AppSet, loc.file, err)
		}
		res, err := appset.Resolve(set, appset.Options{Files: c.repoFiles(c.Repo), Cluster: c.Snapshot.Cluster})
		if err != nil {
			return nil, err
		}
		for _, g := range res.Applications {
			if drift.Str(g.Application, "metadata", "name") == o.App {
				return g.Application, nil
			}
		}
		if len(res.Unresolved) > 0 {
			return nil, nil // made by a generator Git alone does not resolve
		}
		return nil, fmt.Errorf("ApplicationSet %s in %s no longer makes Application %s", o.AppSet, loc.file, o.App)
	}
	if o.Parent == "" {
		return nil, nil
	}
	parent, _ := c.parentObject(o.Parent)
	for _, src := range drift.Sources(parent) {
		if src.Chart != "" {
			continue
		}
		reads := map[string]bool{}
		readsOf(c.Repo, src.Path, reads, 0)
		var objs []drift.Object
		var err error
		switch {
		case kustomizationFile(c.Repo, src.Path) != "":
			if !anyIn(changed, reads) {
				return nil, nil
			}
			objs, err = render.KustomizeWithLimits(c.Repo, src.Path, c.Render)
		case c.Repo[path.Join(src.Path, "Chart.yaml")] != nil:
			opts := render.HelmOptionsFor(parent, src)
			opts.Limits = c.Render
			for _, r := range render.HelmReads(c.Repo, opts) {
				reads[r] = true
			}
			if !anyIn(changed, reads) {
				return nil, nil
			}
			objs, err = render.Helm(c.Repo, opts)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("render parent Application %s: %w", o.Parent, err)
		}
		if child := findApplication(objs, o.App); child != nil {
			return child, nil
		}
		return nil, fmt.Errorf("parent Application %s (%s) no longer renders Application %s", o.Parent, src.Path, o.App)
	}
	return nil, nil
}

func anyIn(files []string, set map[string]bool) bool {
	for _, f := range files {
		if set[f] {
			return true
		}
	}
	return false
}

// rebuildGenerated takes the Application's spec from head when the source
// that generates it (generatedApplication) makes it differently there.
// generated is false when the Application is not generated in the
// repository: its plain manifest, if any, decides.
func rebuildGenerated(s *drift.Snapshot, base, head Repo, changed []string, lim render.Limits) (out *drift.Snapshot, appChanged, generated bool, err error) {
	opt := Options{Render: lim}
	was, err := (&Context{Snapshot: s, Repo: base, Options: opt}).generatedApplication(changed)
	if err != nil || was == nil {
		return s, false, false, nil // not generated here, or not from the synced revision
	}
	now, err := (&Context{Snapshot: s, Repo: head, Options: opt}).generatedApplication(changed)
	if err != nil {
		return nil, false, true, fmt.Errorf("the Application's generating source: %w", err)
	}
	if now == nil {
		return nil, false, true, fmt.Errorf("the Application's generating source no longer makes it")
	}
	if drift.Equal(was, now) {
		return s, false, true, nil
	}
	spec, _ := drift.DeepCopy(now["spec"]).(map[string]any)
	if spec == nil {
		return nil, false, true, fmt.Errorf("the Application as its source makes it has no spec")
	}
	app := drift.DeepCopy(s.Application).(map[string]any)
	app["spec"] = spec
	return withApplication(s, app), true, true, nil
}

// templated reports whether a rule holds text a template engine would read
// as an action ({{ or }}): a path from the cluster may hold any key, and
// written into an ApplicationSet's template or a chart's template it would
// run there.
func templated(r ignoreRule) bool {
	for _, l := range [][]string{{r.Group, r.Kind, r.Name, r.Namespace}, r.JSONPointers, r.JQPathExpressions, r.ManagedFieldsManagers} {
		for _, x := range l {
			if strings.Contains(x, "{{") || strings.Contains(x, "}}") {
				return true
			}
		}
	}
	return false
}
