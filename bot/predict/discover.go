package predict

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/yamledit"
	"go.yaml.in/yaml/v3"
)

// maxParentDepth bounds how deep an app-of-apps is followed: a root's
// children, their children and theirs, as Argo CD users nest them.
const maxParentDepth = 3

// application is one Application found at a revision, and where it comes
// from.
type application struct {
	obj drift.Object
	// manifest is the file that defines it: its own manifest, the
	// ApplicationSet's, the parent's template or the overlay's base; ""
	// when made for a directory or known from Argo CD only.
	manifest string
	// from says how it was found when not from its own manifest: "overlay
	// DIR", "application PARENT", "ApplicationSet NAME".
	from string
	// parent is the identity (idOf) of the Application or ApplicationSet
	// that produced it; "" for a manifest.
	parent string
}

// idOf is an Application's or ApplicationSet's identity within a run.
func idOf(obj drift.Object) string { return drift.Str(obj, "kind") + "/" + appKey(obj) }

// key is an Application's identity in Argo CD: its namespace (the
// control plane's when unset) and name.
func appKey(obj drift.Object) string {
	return drift.Str(obj, "metadata", "namespace") + "/" + drift.Str(obj, "metadata", "name")
}

// discovery is the finding of one revision's applications.
type discovery struct {
	rev Revision
	opt Options
	rr  *renderer
	// renders counts what discovery renders (overlays, parents, charts of
	// Application templates), bounded by maxDiscoveryRenders: a
	// repository an author controls cannot make it render without end.
	renders   int
	exhausted bool
	apps      []application
	sets      []application // ApplicationSets, their manifests and origins
	not       []NotPredicted
	// notFiles are, for an entry of not, the other files that define it or
	// that it may read: a change to any of them makes it worth reporting.
	// An entry ending in "/" is a folder (every file under it); "/" alone
	// is the whole repository.
	notFiles map[int][]string
	notes    []string
}

// touchedNot are the entries of not whose files the change touches.
func (d *discovery) touchedNot(changed []string) []NotPredicted {
	var out []NotPredicted
	for i, n := range d.not {
		hit := n.File == "" || touchedFile(n.File, changed)
		for _, f := range d.notFiles[i] {
			if dir, ok := strings.CutSuffix(f, "/"); ok {
				for _, c := range changed {
					hit = hit || dir == "" || strings.HasPrefix(c, dir+"/")
				}
				continue
			}
			hit = hit || touchedFile(f, changed)
		}
		if hit {
			out = append(out, n)
		}
	}
	return out
}

// defined is one Application or ApplicationSet document of a file.
type defined struct {
	obj  drift.Object
	file string
}

// maxDiscoveryRenders bounds the renders one revision's discovery makes;
// past it, the rest is named in a note and taken as written. A variable
// so that a test can reach the bound without hundreds of renders.
var maxDiscoveryRenders = 400

// render renders a source for discovery, within maxDiscoveryRenders.
func (d *discovery) render(app drift.Object, src drift.Source) ([]drift.Object, error) {
	if d.renders >= maxDiscoveryRenders {
		if !d.exhausted {
			d.exhausted = true
			d.notes = append(d.notes, fmt.Sprintf("finding applications at %s stopped after %d renders of overlays and app-of-apps parents: applications they would add are not predicted", d.rev.Name, maxDiscoveryRenders))
		}
		return nil, fmt.Errorf("over the %d renders finding applications may make", maxDiscoveryRenders)
	}
	d.renders++
	return d.rr.render(d.rev, app, src, d.opt)
}

// discover finds the revision's Applications as Argo CD would have them:
// the Application manifests in the repository (those a Kustomize overlay
// patches as the overlay renders them; patch files are not applications),
// the Applications and ApplicationSets a parent's sources render (an
// app-of-apps, followed maxParentDepth deep, also for a chart of
// Application templates no manifest points at), and the Applications each
// ApplicationSet generates. Two different definitions of one application
// are named, and neither is predicted.
func discover(rev Revision, opt Options, rr *renderer) *discovery {
	d := &discovery{rev: rev, opt: opt, rr: rr}
	raw := d.manifests()
	d.overlays(raw)
	d.parents()
	d.generate()
	d.dedupe()
	rr.crds.setApps(rev.Name, d.apps)
	return d
}

// manifests are the Application and ApplicationSet documents of every
// YAML or JSON file, but a chart's templates and vendored charts (a
// template is rendered, not read) and the files a kustomization names as
// patches.
func (d *discovery) manifests() []defined {
	charts := map[string]bool{}
	patches := map[string]bool{}
	for f, c := range d.rev.Files {
		switch path.Base(f) {
		case "Chart.yaml":
			charts[path.Dir(f)] = true
		case "kustomization.yaml", "kustomization.yml", "Kustomization":
			for _, p := range patchFiles(c) {
				patches[path.Clean(path.Join(path.Dir(f), p))] = true
			}
		}
	}
	var names []string
	for f := range d.rev.Files {
		if !yamlOrJSON(f) || patches[f] || inChart(f, charts) {
			continue
		}
		names = append(names, f)
	}
	sort.Strings(names)
	var out []defined
	for _, f := range names {
		c := d.rev.Files[f]
		if !strings.Contains(c, "Application") {
			continue
		}
		for _, obj := range argoObjects(c) {
			out = append(out, defined{obj: obj, file: f})
		}
	}
	return out
}

// yamlOrJSON says whether a file may hold Application manifests.
func yamlOrJSON(f string) bool {
	return strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") || strings.HasSuffix(f, ".json")
}

// inChart says whether a file is a chart's template or inside a chart's
// charts/ folder: Helm renders it, it is not a manifest.
func inChart(f string, charts map[string]bool) bool {
	for dir := path.Dir(f); ; dir = path.Dir(dir) {
		rel := strings.TrimPrefix(f, dir+"/")
		if dir == "." {
			rel = f
		}
		if (charts[dir] || (dir == "." && charts["."])) && (strings.HasPrefix(rel, "templates/") || strings.HasPrefix(rel, "charts/")) {
			return true
		}
		if dir == "." || dir == "/" || dir == "" {
			return false
		}
	}
}

// patchFiles are the files a kustomization names as patches.
func patchFiles(kustomization string) []string {
	var k struct {
		Patches               []map[string]any `yaml:"patches"`
		PatchesStrategicMerge []string         `yaml:"patchesStrategicMerge"`
		PatchesJSON6902       []map[string]any `yaml:"patchesJson6902"`
	}
	if yaml.Unmarshal([]byte(kustomization), &k) != nil {
		return nil
	}
	var out []string
	for _, p := range append(k.Patches, k.PatchesJSON6902...) {
		if s, ok := p["path"].(string); ok && s != "" {
			out = append(out, s)
		}
	}
	for _, p := range k.PatchesStrategicMerge {
		if !strings.Contains(p, "\n") { // an inline patch is not a file
			out = append(out, p)
		}
	}
	return out
}

// argoObjects are the named Applications and ApplicationSets of a file; a
// file that is not YAML holds none.
func argoObjects(content string) []drift.Object {
	docs, err := yamledit.Documents([]byte(content))
	if err != nil {
		return nil
	}
	var out []drift.Object
	for _, doc := range docs {
		m, _ := doc.(map[string]any)
		if m == nil || !isArgoApp(m) || drift.Str(m, "metadata", "name") == "" {
			continue
		}
		out = append(out, drift.NormalizeNumbers(m).(map[string]any))
	}
	return out
}

func isArgoApp(m map[string]any) bool { return isApplication(m) || isApplicationSet(m) }

func isApplicationSet(m map[string]any) bool {
	g, _ := drift.SplitAPIVersion(drift.Str(m, "apiVersion"))
	return drift.Str(m, "kind") == "ApplicationSet" && g == "argoproj.io"
}

// overlays takes the Applications that a kustomization reads as that
// kustomization renders them (an overlay patching a base Application):
// each kustomization no other one reads as a base, whose files hold an
// Application or ApplicationSet, is rendered, and its objects replace the
// documents it read. The others are taken as written.
func (d *discovery) overlays(raw []defined) {
	holds := map[string]bool{}
	for _, r := range raw {
		holds[r.file] = true
	}
	var dirs []string
	reads := map[string]map[string]bool{}
	for f := range d.rev.Files {
		if isKustomizationName(f) {
			dir := dirOf(f)
			reads[dir] = d.rr.reads(d.rev, dir)
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	readByOther := map[string]bool{}
	for _, dir := range dirs {
		for f := range reads[dir] {
			if isKustomizationName(f) && dirOf(f) != dir {
				readByOther[dirOf(f)] = true
			}
		}
	}
	taken := map[string]bool{}
	for _, dir := range dirs {
		if readByOther[dir] {
			continue
		}
		var mine []string
		for f := range reads[dir] {
			if holds[f] {
				mine = append(mine, f)
			}
		}
		if len(mine) == 0 {
			continue
		}
		sort.Strings(mine)
		src := drift.Source{Path: dir}
		objs, err := d.render(parentApp(dir), src)
		if err != nil {
			d.notes = append(d.notes, fmt.Sprintf("kustomization %s does not render (%v): the Applications of %s are taken as written", orRoot(dir), err, strings.Join(mine, ", ")))
			continue
		}
		for _, f := range mine {
			taken[f] = true
		}
		for _, obj := range objs {
			if !isArgoApp(obj) {
				continue
			}
			manifest := definedIn(raw, obj, mine)
			if manifest == "" {
				manifest = path.Join(dir, "kustomization.yaml")
			}
			d.add(application{obj: obj, manifest: manifest, from: "overlay " + orRoot(dir)})
		}
	}
	for _, r := range raw {
		if !taken[r.file] {
			d.add(application{obj: r.obj, manifest: r.file})
		}
	}
}

// dirOf is a file's directory, "" for the repository root.
func dirOf(f string) string {
	dir := path.Dir(f)
	if dir == "." {
		return ""
	}
	return dir
}

func isKustomizationName(f string) bool {
	switch path.Base(f) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

func orRoot(dir string) string {
	if dir == "" {
		return "(the repository root)"
	}
	return dir
}

// definedIn is the file among files that holds a document of obj's kind
// and name.
func definedIn(raw []defined, obj drift.Object, files []string) string {
	for _, r := range raw {
		if drift.Str(r.obj, "kind") == drift.Str(obj, "kind") && drift.Str(r.obj, "metadata", "name") == drift.Str(obj, "metadata", "name") {
			for _, f := range files {
				if f == r.file {
					return f
				}
			}
		}
	}
	return ""
}

// parentApp is an Application made for a directory, as --app DIR makes it.
func parentApp(dir string) drift.Object {
	name := path.Base(dir)
	if dir == "" {
		name = "root"
	}
	return map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"project": "default", "source": map[string]any{"path": dir},
			"destination": map[string]any{}}}
}

// add records an Application or an ApplicationSet.
func (d *discovery) add(a application) {
	if isApplicationSet(a.obj) {
		d.sets = append(d.sets, a)
		return
	}
	d.apps = append(d.apps, a)
}

// parents renders the local sources of every Application that may be an
// app-of-apps (a source holding an Application or ApplicationSet document
// or template) and adds what they render, maxParentDepth deep. A chart of
// Application templates that no Application points at is rendered with
// its defaults as a parent of its own (the root applied by hand).
func (d *discovery) parents() {
	used := map[string]bool{}
	queue := make([]int, 0, len(d.apps))
	for i := range d.apps {
		queue = append(queue, i)
	}
	depth := map[int]int{}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		a := d.apps[i]
		srcs, notes := localSources(a.obj, d.rev.Files, d.opt)
		for _, src := range srcs {
			used[src.Path] = true
		}
		if depth[i] >= maxParentDepth {
			continue
		}
		name := drift.Str(a.obj, "metadata", "name")
		type rendered struct {
			src  drift.Source
			objs []drift.Object
		}
		var renders []rendered
		switch {
		case len(notes) > 0 && d.remote(a.obj) && d.describesApps(a.obj):
			// a parent whose chart Argo CD fetches: its render there
			objs, err := d.rr.remote(d.opt, a.obj, d.rev)
			if err != nil {
				d.notes = append(d.notes, fmt.Sprintf("application %s: Argo CD's render at %s, for the applications it makes, failed: %v", name, d.rev.Name, err))
			}
			renders = append(renders, rendered{objs: objs})
		case d.mayHoldApps(srcs):
			for _, src := range srcs {
				objs, err := d.render(a.obj, src)
				if err != nil {
					continue // the application's own prediction says why
				}
				renders = append(renders, rendered{src: src, objs: objs})
			}
		}
		for _, r := range renders {
			src := r.src
			for _, obj := range r.objs {
				if !isArgoApp(obj) {
					continue
				}
				before := len(d.apps)
				d.add(application{obj: obj, manifest: d.childFile(src, obj), from: "application " + name, parent: idOf(a.obj)})
				if len(d.apps) > before {
					depth[len(d.apps)-1] = depth[i] + 1
					queue = append(queue, len(d.apps)-1)
				}
			}
		}
	}
	// charts of Application templates with no Application pointing at them
	var roots []string
	for f := range d.rev.Files {
		dir := dirOf(f)
		if path.Base(f) != "Chart.yaml" || used[dir] || !templatesHoldApps(dir, d.rev.Files) {
			continue
		}
		roots = append(roots, dir)
	}
	sort.Strings(roots)
	d.jsonnetRoots(used)
	for _, dir := range roots {
		src := drift.Source{Path: dir, Helm: true, Spec: map[string]any{"path": dir}}
		app := parentApp(dir)
		objs, err := d.render(app, src)
		if err != nil {
			d.not = append(d.not, NotPredicted{Application: path.Base(dir), Kind: "Application", File: path.Join(dir, "Chart.yaml"),
				Reason: fmt.Sprintf("chart %s renders Applications but does not render with its default values (%v), so its applications are not found", orRoot(dir), err),
				Needs:  "an Application manifest for the chart in the repository with the values it is installed with, or --app for one child's manifest"})
			continue
		}
		for _, obj := range objs {
			if isArgoApp(obj) {
				d.add(application{obj: obj, manifest: d.childFile(drift.Source{Path: dir}, obj), from: "chart " + orRoot(dir)})
			}
		}
	}
}

// jsonnetSaid is a Jsonnet error in one line: what failed and where,
// without the evaluation's stack, which a note lists among others.
func jsonnetSaid(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	said := strings.TrimSpace(lines[0])
	if len(lines) > 1 {
		if at := strings.Fields(lines[1]); len(at) > 0 && strings.Contains(at[0], ".jsonnet:") {
			said += " at " + at[0]
		}
	}
	return said
}

// jsonnetRoots renders each folder whose Jsonnet files name an Application
// or ApplicationSet kind and that no Application's source path names (a
// root applied by hand) as a directory source without options: its
// Applications and ApplicationSets are added. One that does not render so
// (a top-level argument without a default, an external variable: only the
// Application applying it gives them) is listed as not predicted, with
// what would let it be.
func (d *discovery) jsonnetRoots(used map[string]bool) {
	dirs := map[string]bool{}
	for f, c := range d.rev.Files {
		if strings.HasSuffix(f, ".jsonnet") && !used[dirOf(f)] && strings.Contains(c, "argoproj.io") && strings.Contains(c, "Application") {
			dirs[dirOf(f)] = true
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		src := drift.Source{Path: dir, Spec: map[string]any{"path": dir}}
		objs, err := d.render(parentApp(dir), src)
		if err != nil {
			// what its applications read is unknown: any change may touch them
			if d.notFiles == nil {
				d.notFiles = map[int][]string{}
			}
			d.notFiles[len(d.not)] = []string{"/"}
			d.not = append(d.not, NotPredicted{Application: path.Base(orRoot(dir)), Kind: "Application", File: jsonnetFile(dir, d.rev.Files),
				Reason: fmt.Sprintf("the Jsonnet of %s renders Applications or ApplicationSets, but no Application in the repository points at it and it does not render without one (%s), so its applications are not found", orRoot(dir), jsonnetSaid(err)),
				Needs:  "the Application that applies it, with its directory.jsonnet tlas and extVars, in the repository"})
			continue
		}
		for _, obj := range objs {
			if isArgoApp(obj) {
				d.add(application{obj: obj, manifest: jsonnetFile(dir, d.rev.Files), from: "Jsonnet " + orRoot(dir)})
			}
		}
	}
}

// jsonnetFile is the first Jsonnet file of a folder naming an Argo CD kind.
func jsonnetFile(dir string, files map[string]string) string {
	var names []string
	for f, c := range files {
		if dirOf(f) == dir && strings.HasSuffix(f, ".jsonnet") && strings.Contains(c, "argoproj.io") {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// remote says whether Options.Remote may render an application at this
// revision: Argo CD knows it as the revision has it, and can fetch the
// revision.
func (d *discovery) remote(app drift.Object) bool {
	for _, k := range d.opt.Applications {
		if appKey(k) == appKey(app) {
			return argoRenders(d.opt, d.rev, k, app)
		}
	}
	return false
}

// describesApps says whether the application's value files in this
// repository describe Applications (a source's repoURL and a destination):
// the values of an app-of-apps chart from a chart repository.
func (d *discovery) describesApps(app drift.Object) bool {
	for _, src := range drift.Sources(app) {
		for _, vf := range src.ValueFiles {
			c := d.rev.Files[valueFilePath(src.Path, vf)]
			if strings.Contains(c, "repoURL") && strings.Contains(c, "destination") {
				return true
			}
		}
	}
	return false
}

// mayHoldApps says whether a source can render an Application or an
// ApplicationSet: a file it reads names the kind (cheap, before any render).
func (d *discovery) mayHoldApps(srcs []drift.Source) bool {
	for _, src := range srcs {
		reads := map[string]bool{}
		if kustomization(src.Path, d.rev.Files) {
			reads = d.rr.reads(d.rev, src.Path)
		}
		for f, c := range d.rev.Files {
			if (inDir(f, src.Path) || reads[f]) && strings.Contains(c, "argoproj.io") && (strings.Contains(c, "Application")) {
				return true
			}
		}
	}
	return false
}

// templatesHoldApps says whether a chart's templates name an Application
// or ApplicationSet kind.
func templatesHoldApps(dir string, files map[string]string) bool {
	prefix := strings.TrimPrefix(dir+"/templates/", "/")
	for f, c := range files {
		if strings.HasPrefix(f, prefix) && strings.Contains(c, "argoproj.io") &&
			(strings.Contains(c, "kind: Application") || strings.Contains(c, "kind: ApplicationSet")) {
			return true
		}
	}
	return false
}

// childFile is the file of a parent's source that defines a child: the
// manifest holding its name, else the one template of the source that
// names its kind, else "".
func (d *discovery) childFile(src drift.Source, obj drift.Object) string {
	name, kind := drift.Str(obj, "metadata", "name"), drift.Str(obj, "kind")
	var templates []string
	var names []string
	for f := range d.rev.Files {
		if inDir(f, src.Path) {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	for _, f := range names {
		c := d.rev.Files[f]
		if !strings.Contains(c, "kind: "+kind) {
			continue
		}
		if strings.Contains(f, "/templates/") || strings.HasPrefix(f, "templates/") {
			templates = append(templates, f)
			continue
		}
		for _, o := range argoObjects(c) {
			if drift.Str(o, "kind") == kind && drift.Str(o, "metadata", "name") == name {
				return f
			}
		}
	}
	if len(templates) == 1 {
		return templates[0]
	}
	return ""
}

// only keeps the applications defined in one file and what they produce
// (an app-of-apps' children, an ApplicationSet's applications).
func (d *discovery) only(file string) {
	keep := map[string]bool{}
	all := append(append([]application(nil), d.apps...), d.sets...)
	for grew := true; grew; {
		grew = false
		for _, a := range all {
			if id := idOf(a.obj); !keep[id] && (a.manifest == file || keep[a.parent]) {
				keep[id], grew = true, true
			}
		}
	}
	var apps []application
	for _, a := range d.apps {
		if keep[idOf(a.obj)] {
			apps = append(apps, a)
		}
	}
	var not []NotPredicted
	notFiles := map[int][]string{}
	for i, n := range d.not {
		if n.File == file || slices.Contains(d.notFiles[i], file) {
			notFiles[len(not)] = d.notFiles[i]
			not = append(not, n)
		}
	}
	d.apps, d.not, d.notFiles = apps, not, notFiles
}

// generate resolves every ApplicationSet found into the Applications it
// generates where Git alone decides; the others are listed as not
// predicted with what they need.
func (d *discovery) generate() {
	var declared []declaredSecret
	if len(d.sets) > 0 {
		declared = d.declaredClusters()
	}
	for _, s := range d.sets {
		var mine []drift.Object
		ns := d.setsNamespace(s)
		for _, c := range declared {
			if c.namespace == ns {
				mine = append(mine, c.obj)
			}
		}
		gen, not, notes := resolveSet(s, d.rev, d.opt, mine)
		d.notes = append(d.notes, notes...)
		reads := templateReads(s.obj)
		for _, n := range not {
			if d.notFiles == nil {
				d.notFiles = map[int][]string{}
			}
			d.notFiles[len(d.not)] = reads
			d.not = append(d.not, n)
		}
		for _, g := range gen {
			d.apps = append(d.apps, g)
		}
	}
}

// dedupe keeps one application per definition. Definitions that are
// equal, or that come from one file (an overlay's render of its base, a
// parent's render of a manifest), are one. Different definitions from
// different files (an app-of-apps list and an ApplicationSet, one per
// Argo CD instance) are each predicted, never one chosen: a note names
// them all, as one Argo CD instance keeps only the last applied.
func (d *discovery) dedupe() {
	byKey := map[string][]application{}
	var order []string
	for _, a := range d.apps {
		k := appKey(a.obj)
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], a)
	}
	d.apps = d.apps[:0]
	for _, k := range order {
		var kept []application
		for _, o := range byKey[k] {
			same := false
			for i, c := range kept {
				switch {
				case reflect.DeepEqual(o.obj, c.obj):
					same = true
				case o.manifest != "" && o.manifest == c.manifest:
					kept[i], same = o, true // the later stage of the same file
				}
				if same {
					break
				}
			}
			if !same {
				kept = append(kept, o)
			}
		}
		d.apps = append(d.apps, kept...)
		if len(kept) < 2 {
			continue
		}
		var where []string
		for _, c := range kept {
			where = append(where, describe(c))
		}
		d.notes = append(d.notes, fmt.Sprintf("application %s is defined more than once, differently: %s; each definition is predicted (one Argo CD instance keeps only the one applied last)",
			drift.Str(kept[0].obj, "metadata", "name"), strings.Join(where, " and ")))
	}
}

// describe names where an application is defined.
func describe(a application) string {
	s := a.manifest
	if s == "" {
		s = "Argo CD"
	}
	if a.from != "" {
		s += " (" + a.from + ")"
	}
	return s
}

// renderer renders sources within one run, each (revision, application,
// source) once: discovery and prediction ask for the same parents.
type renderer struct {
	mu    sync.Mutex                   // the maps below; renders run side by side
	cfMu  sync.Mutex                   // Options.ClusterFor is called one at a time
	bytes map[string]map[string][]byte // revision name -> files as bytes
	repos map[string]remediations.Repo
	done  map[string]rendered
	// read holds remediations.SourceReads by revision and directory:
	// discovery, touches and every application of a shared base ask again.
	read map[[2]string]map[string]bool
	// crds are the CRDs other applications of the revision install.
	crds siblingCRDs
}

type rendered struct {
	objs []drift.Object
	err  error
}

func newRenderer() *renderer {
	return &renderer{bytes: map[string]map[string][]byte{}, repos: map[string]remediations.Repo{}, done: map[string]rendered{}, read: map[[2]string]map[string]bool{}}
}

// files are the revision's files as bytes, converted once.
func (r *renderer) files(rev Revision) map[string][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.bytes[rev.Name]; ok {
		return b
	}
	b := make(map[string][]byte, len(rev.Files))
	for k, v := range rev.Files {
		b[k] = []byte(v)
	}
	r.bytes[rev.Name] = b
	r.repos[rev.Name] = remediations.Repo(b)
	return b
}

func (r *renderer) repo(rev Revision) remediations.Repo {
	r.files(rev)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.repos[rev.Name]
}

// remote renders an application through opt.Remote, each (revision,
// application) once: discovery and prediction ask for the same parents.
func (r *renderer) remote(opt Options, app drift.Object, rev Revision) ([]drift.Object, error) {
	key := "remote\x00" + rev.Name + "\x00" + idOf(app)
	r.mu.Lock()
	got, ok := r.done[key]
	r.mu.Unlock()
	if ok {
		return copyObjects(got.objs), got.err
	}
	objs, err := opt.Remote(app, rev)
	r.mu.Lock()
	r.done[key] = rendered{objs: copyObjects(objs), err: err}
	r.mu.Unlock()
	return objs, err
}

// reads is remediations.SourceReads of a directory at a revision, each
// once; callers only read the map.
func (r *renderer) reads(rev Revision, dir string) map[string]bool {
	k := [2]string{rev.Name, dir}
	r.mu.Lock()
	got, ok := r.read[k]
	r.mu.Unlock()
	if ok {
		return got
	}
	got = remediations.SourceReads(r.repo(rev), dir)
	r.mu.Lock()
	r.read[k] = got
	r.mu.Unlock()
	return got
}

// clusterFor calls opt.ClusterFor, one call at a time.
func (r *renderer) clusterFor(opt Options, s *drift.Snapshot) []drift.Object {
	r.cfMu.Lock()
	defer r.cfMu.Unlock()
	return opt.ClusterFor(s)
}

// render renders one source of an application at a revision, through the
// cache; the settings of argocd-cm come from opt.Cluster (or ClusterFor's
// answer for the application).
func (r *renderer) render(rev Revision, app drift.Object, src drift.Source, opt Options) ([]drift.Object, error) {
	settings := opt.Cluster
	if opt.ClusterFor != nil {
		settings = r.clusterFor(opt, &drift.Snapshot{Application: app})
	}
	key, err := json.Marshal([]any{rev.Name, drift.Str(app, "metadata", "name"), drift.Str(app, "spec", "destination", "namespace"), src.Path, src.Spec, drift.Map(app, "spec", "source"), drift.List(app, "spec", "sources"), opt.ClusterFor != nil})
	if err == nil {
		r.mu.Lock()
		got, ok := r.done[string(key)]
		r.mu.Unlock()
		if ok {
			return copyObjects(got.objs), got.err
		}
	}
	objs, rerr := renderSourceIn(app, src, r.files(rev), rev, settings, opt)
	if err == nil && opt.ClusterFor == nil {
		r.mu.Lock()
		r.done[string(key)] = rendered{objs: copyObjects(objs), err: rerr}
		r.mu.Unlock()
	}
	return objs, rerr
}

// copyObjects copies a render, so that what one application's prediction
// does with its objects never reaches another's.
func copyObjects(objs []drift.Object) []drift.Object {
	if objs == nil {
		return nil
	}
	out := make([]drift.Object, len(objs))
	for i, o := range objs {
		out[i], _ = drift.DeepCopy(o).(map[string]any)
	}
	return out
}

// templateReads are the folders an ApplicationSet's generated Applications
// may read, from its template's source paths: the part before the first
// template expression ("/" for the whole repository when a path starts
// with one or the template has none).
func templateReads(set drift.Object) []string {
	tmpl := drift.Map(set, "spec", "template")
	var out []string
	srcs := drift.List(tmpl, "spec", "sources")
	if s := drift.Map(tmpl, "spec", "source"); s != nil {
		srcs = append(srcs, s)
	}
	for _, src := range srcs {
		p := drift.Str(src, "path")
		if i := strings.Index(p, "{{"); i >= 0 {
			p = p[:i]
			if j := strings.LastIndex(p, "/"); j >= 0 {
				p = p[:j]
			} else {
				p = ""
			}
		}
		p = drift.CleanSourcePath(p)
		if p == "" {
			return []string{"/"}
		}
		out = append(out, p+"/")
	}
	if len(out) == 0 || drift.Map(set, "spec", "templatePatch") != nil || drift.Str(set, "spec", "templatePatch") != "" {
		return []string{"/"}
	}
	return out
}
