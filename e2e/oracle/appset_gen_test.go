package oracle

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/drift"
)

// AppSetCase is one generated ApplicationSet with the repositories and
// cluster Secrets its generators read, and the features it was built from,
// which name its class when the two resolutions disagree.
type AppSetCase struct {
	Set      drift.Object
	Repos    map[string]map[string]string
	Cluster  []drift.Object
	Features []string
	// Declared gives driftfix the cluster Secrets as the ones the
	// repository declares, with no cluster context (Argo CD holds them).
	Declared bool
}

// Class names the case's kind of input.
func (c AppSetCase) Class() string {
	f := append([]string(nil), c.Features...)
	sort.Strings(f)
	return strings.Join(f, " ")
}

const genRepo = "https://git.example.com/org/gitops.git"

// GenerateAppSet builds case n of the seeded sequence: the same seed and n
// always give the same case.
func GenerateAppSet(seed uint64, n int) AppSetCase {
	g := &asGen{r: rand.New(rand.NewPCG(seed, uint64(n)+1000)), used: map[string]bool{}, cluster: []drift.Object{}}
	g.goT = g.r.IntN(2) == 0
	if g.goT {
		g.note("goTemplate")
	} else {
		g.note("fasttemplate")
	}
	g.tree()
	g.secrets()
	var gens []any
	var names []string
	var refs []string
	for i := range 1 + g.r.IntN(2) {
		_ = i
		o := g.generator(0)
		gens = append(gens, o.gen)
		names = append(names, o.name)
		refs = append(refs, o.refs...)
	}
	// One name template for every generator: each generator's own id where
	// it has one; two top-level generators make names of both parts, so a
	// name missing from one renders as Argo CD renders it.
	name := names[0]
	if len(names) > 1 && g.r.IntN(2) == 0 {
		name += "-" + names[1]
	}
	if g.r.IntN(4) == 0 {
		name = "app-" + name
	}
	spec := map[string]any{
		"goTemplate": g.goT,
		"generators": gens,
		"template":   g.template(name, refs),
	}
	if g.goT && g.r.IntN(5) == 0 {
		spec["goTemplateOptions"] = []any{g.pick("missingkey=error", "missingkey=zero", "missingkey=default")}
		g.note("options")
	}
	if g.r.IntN(3) == 0 {
		spec["templatePatch"] = g.patch(refs)
		g.note("templatePatch")
	}
	if g.r.IntN(6) == 0 {
		spec["syncPolicy"] = map[string]any{"preserveResourcesOnDeletion": true}
		g.note("preserve")
	}
	set := drift.Object{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
		"metadata": map[string]any{"name": "set", "namespace": appsetNamespace},
		"spec":     spec,
	}
	// Through JSON, as the set reaches both from the API server.
	b, _ := json.Marshal(set)
	var out drift.Object
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return AppSetCase{Set: out, Repos: map[string]map[string]string{genRepo: g.files}, Cluster: g.cluster, Features: g.feat}
}

type asGen struct {
	r       *rand.Rand
	goT     bool
	feat    []string
	files   map[string]string
	appDirs []string // apps/<x>, each with config.yaml
	envs    []string // envs/<e>/config.json
	cluster []drift.Object
	used    map[string]bool
	counter int
}

func (g *asGen) note(f string) {
	for _, e := range g.feat {
		if e == f {
			return
		}
	}
	g.feat = append(g.feat, f)
}

func (g *asGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// word is a fresh lower-case name.
func (g *asGen) word() string {
	for {
		b := make([]byte, 3+g.r.IntN(4))
		for i := range b {
			b[i] = byte('a' + g.r.IntN(26))
		}
		w := string(b)
		if !g.used[w] {
			g.used[w] = true
			return w
		}
	}
}

func (g *asGen) key() string {
	g.counter++
	return fmt.Sprintf("k%d", g.counter)
}

// expr is a reference to a parameter in the set's template language.
func (g *asGen) expr(ref string) string {
	if g.goT {
		return "{{ ." + ref + " }}"
	}
	return "{{" + ref + "}}"
}

// fexpr is a reference, sometimes through a function (goTemplate) or with
// spaces (fasttemplate), sometimes to a parameter no generator gives.
func (g *asGen) fexpr(refs []string) string {
	ref := "missing"
	if len(refs) > 0 && g.r.IntN(8) != 0 {
		ref = refs[g.r.IntN(len(refs))]
	} else {
		g.note("missing-key")
	}
	if !g.goT {
		return g.pick("{{"+ref+"}}", "{{ "+ref+" }}", "pre-{{"+ref+"}}-post")
	}
	switch g.r.IntN(6) {
	case 0:
		return "{{ ." + ref + " | toString | upper }}"
	case 1:
		return "{{ default \"dflt\" ." + ref + " }}"
	case 2:
		return "{{ ." + ref + " | toString | normalize }}"
	case 3:
		return "x-{{ ." + ref + " }}"
	}
	return "{{ ." + ref + " }}"
}

// tree makes the repository: apps/<x>[/<y>] each with a config.yaml, envs/<e>
// each with a config.json or a list in config.yaml, a hidden directory, and
// files at the root.
func (g *asGen) tree() {
	g.files = map[string]string{"README.md": "# repo\n", ".github/workflows/ci.yaml": "on: push\n", ".hidden/app/config.yaml": "k0: hidden\n"}
	for range 1 + g.r.IntN(4) {
		d := "apps/" + g.word()
		g.appDirs = append(g.appDirs, d)
		g.files[d+"/config.yaml"] = g.fileContent(false)
		if g.r.IntN(3) == 0 {
			sub := d + "/" + g.word()
			g.appDirs = append(g.appDirs, sub)
			g.files[sub+"/config.yaml"] = g.fileContent(false)
		}
		g.files[d+"/kustomization.yaml"] = "resources: []\n"
	}
	for range 1 + g.r.IntN(3) {
		e := g.word()
		g.envs = append(g.envs, e)
		if g.r.IntN(3) == 0 {
			g.files["envs/"+e+"/config.yaml"] = g.fileContent(true)
		} else {
			b, _ := json.Marshal(g.object())
			g.files["envs/"+e+"/config.json"] = string(b)
		}
	}
}

// object is a file's or element's random values.
func (g *asGen) object() map[string]any {
	o := map[string]any{"fid": g.word()}
	for range g.r.IntN(4) {
		switch g.r.IntN(6) {
		case 0:
			o[g.pick("env", "region", "tier")] = g.pick("prod", "staging", "dev")
		case 1:
			o["replicas"] = g.r.IntN(5)
		case 2:
			o["enabled"] = g.r.IntN(2) == 0
		case 3:
			o["nested"] = map[string]any{"a": g.word(), "b": map[string]any{"c": g.r.IntN(3)}}
		case 4:
			o["list"] = []any{g.word(), g.word()}
		case 5:
			o["cluster"] = map[string]any{"name": g.word(), "address": "https://" + g.word() + ".example.com"}
		}
	}
	return o
}

func (g *asGen) fileContent(list bool) string {
	var v any = g.object()
	if list {
		v = []any{g.object(), g.object()}
	}
	b, _ := yaml.Marshal(v)
	return string(b)
}

// secrets makes the Argo CD cluster Secrets, sometimes none and sometimes
// one for the local cluster.
func (g *asGen) secrets() {
	for i := range g.r.IntN(4) {
		name := g.word()
		server := "https://" + name + ".example.com"
		if i == 0 && g.r.IntN(4) == 0 {
			server = "https://kubernetes.default.svc"
		}
		enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
		g.cluster = append(g.cluster, drift.Object{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "cluster-" + name, "namespace": appsetNamespace,
				"labels":      map[string]any{"argocd.argoproj.io/secret-type": "cluster", "env": g.pick("prod", "staging")},
				"annotations": map[string]any{"team": g.word()}},
			"data": map[string]any{"name": enc(name), "server": enc(server)},
		})
	}
}

// genOut is a generated generator: its YAML, the parameters it gives and
// the one that tells its parameter sets apart.
type genOut struct {
	gen  map[string]any
	refs []string
	id   string // the parameter (a matrix: the first child's)
	name string // the name template that tells the sets apart
}

// generator makes a generator entry at a level (0 top, 1 in a matrix or
// merge, 2 in a nested one).
func (g *asGen) generator(level int) genOut {
	choices := []string{"list", "list", "gitdirs", "gitfiles", "clusters"}
	if level < 2 {
		choices = append(choices, "matrix", "merge")
	}
	var o genOut
	switch k := g.pick(choices...); k {
	case "list":
		o = g.list(nil)
	case "gitdirs":
		o = g.gitDirs()
	case "gitfiles":
		o = g.gitFiles("")
	case "clusters":
		o = g.clusters()
	case "matrix":
		o = g.matrix(level)
	case "merge":
		o = g.merge(level)
	}
	if o.name == "" {
		o.name = g.expr(o.id)
	}
	if g.r.IntN(6) == 0 {
		g.selector(&o)
	}
	if level == 0 && g.r.IntN(5) == 0 {
		for _, v := range o.gen {
			if body, ok := v.(map[string]any); ok {
				body["template"] = g.genTemplate(o.refs)
				g.note("generator-template")
			}
		}
	}
	return o
}

// list makes a list generator; from, when given, are the first matrix
// child's references, which the elements then render.
func (g *asGen) list(from []string) genOut {
	g.note("list")
	id := g.key()
	var elems []any
	extra := []string{"env", "region", "replicas", "enabled", "nested", "values"}
	var refs []string
	for range 1 + g.r.IntN(4) {
		e := map[string]any{id: g.word()}
		for range g.r.IntN(3) {
			k := extra[g.r.IntN(len(extra))]
			switch k {
			case "env", "region":
				e[k] = g.pick("prod", "staging", "dev")
			case "replicas":
				if g.goT || g.r.IntN(10) == 0 {
					e[k] = g.r.IntN(4)
				} else {
					e[k] = fmt.Sprint(g.r.IntN(4))
				}
			case "enabled":
				if g.goT {
					e[k] = g.r.IntN(2) == 0
				} else {
					e[k] = "true"
				}
			case "nested":
				if g.goT {
					e[k] = map[string]any{"a": g.word(), "n": nil}
				} else {
					e[k] = g.word()
				}
			case "values":
				e[k] = map[string]any{"vk": g.word()}
			}
			if len(from) > 0 && g.r.IntN(2) == 0 {
				e[k] = g.fexpr(from)
				g.note("matrix-templated")
			}
		}
		elems = append(elems, e)
	}
	refs = append(refs, id, "env", "region", "replicas")
	if g.goT {
		refs = append(refs, "nested.a", "values.vk")
	} else {
		refs = append(refs, "nested", "values.vk")
	}
	body := map[string]any{"elements": elems}
	if g.r.IntN(5) == 0 {
		b, _ := yaml.Marshal([]any{map[string]any{id: g.word(), "env": "yaml"}})
		body["elementsYaml"] = string(b)
		g.note("elementsYaml")
	}
	return genOut{gen: map[string]any{"list": body}, refs: refs, id: id}
}

func (g *asGen) pathRefs(prefix string, file bool) (refs []string, id string) {
	p := "path"
	if prefix != "" {
		p = prefix + ".path"
	}
	refs = []string{p, p + ".basename", p + ".basenameNormalized"}
	if file {
		refs = append(refs, p+".filename", p+".filenameNormalized")
	}
	if g.goT {
		refs = append(refs, p+".path", p+".segments")
		refs = refs[1:]
	} else {
		refs = append(refs, p+"[0]", p+"[1]")
	}
	return refs, p + ".basenameNormalized"
}

func (g *asGen) gitDirs() genOut {
	g.note("git-directories")
	var items []any
	switch g.r.IntN(4) {
	case 0:
		items = []any{map[string]any{"path": "apps/*"}}
	case 1:
		items = []any{map[string]any{"path": "apps/*"}, map[string]any{"path": "apps/*/*"}}
	case 2:
		items = []any{map[string]any{"path": "*"}, map[string]any{"path": "apps"}}
	default:
		items = []any{map[string]any{"path": "apps/*"}, map[string]any{"path": "envs/*"}}
	}
	if g.r.IntN(3) == 0 && len(g.appDirs) > 0 {
		items = append(items, map[string]any{"path": g.appDirs[g.r.IntN(len(g.appDirs))], "exclude": true})
		g.note("exclude")
	}
	if g.r.IntN(8) == 0 {
		items = append(items, map[string]any{"path": "apps/[", "exclude": false})
		g.note("bad-pattern")
	}
	body := map[string]any{"repoURL": genRepo, "revision": "HEAD", "directories": items}
	prefix := ""
	if g.r.IntN(5) == 0 {
		prefix = "dir"
		body["pathParamPrefix"] = prefix
		g.note("pathParamPrefix")
	}
	refs, id := g.pathRefs(prefix, false)
	if g.r.IntN(3) == 0 {
		body["values"] = map[string]any{"vk": "v-" + g.expr(id)}
		refs = append(refs, "values.vk")
		g.note("values")
	}
	return genOut{gen: map[string]any{"git": body}, refs: refs, id: id}
}

// gitFiles makes a files generator; under, when given, is a template of
// the directory (from a matrix's first child).
func (g *asGen) gitFiles(under string) genOut {
	g.note("git-files")
	var items []any
	if under != "" {
		items = []any{map[string]any{"path": under + "/config.yaml"}}
	} else {
		switch g.r.IntN(5) {
		case 0:
			items = []any{map[string]any{"path": "envs/*/config.json"}}
		case 1:
			items = []any{map[string]any{"path": "envs/**/config.*"}}
		case 2:
			items = []any{map[string]any{"path": "apps/*/config.yaml"}}
		case 3:
			items = []any{map[string]any{"path": "envs/*/config.json"}, map[string]any{"path": "envs/*/config.yaml"}}
		default:
			items = []any{map[string]any{"path": "apps/**.yaml"}}
		}
		if g.r.IntN(3) == 0 && len(g.envs) > 0 {
			items = append(items, map[string]any{"path": "envs/" + g.envs[0] + "/*", "exclude": true})
			g.note("exclude")
		}
	}
	body := map[string]any{"repoURL": genRepo, "revision": "HEAD", "files": items}
	refs, _ := g.pathRefs("", true)
	refs = append(refs, "env", "replicas", "enabled", "fid")
	if g.goT {
		refs = append(refs, "nested.a", "cluster.name")
	} else {
		refs = append(refs, "nested.a", "nested.b.c", "list.0", "cluster.name")
	}
	if g.r.IntN(3) == 0 {
		body["values"] = map[string]any{"vk": "v-" + g.expr("fid")}
		refs = append(refs, "values.vk")
		g.note("values")
	}
	return genOut{gen: map[string]any{"git": body}, refs: refs, id: "fid"}
}

func (g *asGen) clusters() genOut {
	g.note("clusters")
	body := map[string]any{}
	if g.r.IntN(3) == 0 {
		body["selector"] = map[string]any{"matchLabels": map[string]any{"env": g.pick("prod", "staging")}}
		g.note("cluster-selector")
	}
	refs := []string{"name", "nameNormalized", "server", "project"}
	if !g.goT {
		refs = append(refs, "metadata.labels.env", "metadata.annotations.team")
	}
	if g.r.IntN(3) == 0 {
		body["values"] = map[string]any{"vk": "c-" + g.expr("nameNormalized")}
		refs = append(refs, "values.vk")
		g.note("values")
	}
	if g.r.IntN(5) == 0 {
		body["flatList"] = true
		g.note("flatList")
		// Argo CD lists the clusters in a map's (random) order, so the list
		// itself is not compared, only that it makes one Application.
		return genOut{gen: map[string]any{"clusters": body}, id: "clusters", name: "flat"}
	}
	return genOut{gen: map[string]any{"clusters": body}, refs: refs, id: "nameNormalized"}
}

func (g *asGen) matrix(level int) genOut {
	g.note("matrix")
	a := g.generator(level + 1)
	var b genOut
	switch {
	case g.r.IntN(3) == 0 && a.gen["git"] != nil && g.isDirs(a):
		b = g.gitFiles(g.dirExpr(strings.TrimSuffix(a.id, ".basenameNormalized")))
		g.note("matrix-templated")
	case g.r.IntN(3) == 0:
		b = g.list(a.refs)
	default:
		b = g.generator(level + 1)
	}
	if b.name == "" {
		b.name = g.expr(b.id)
	}
	refs := append(append([]string(nil), a.refs...), b.refs...)
	gen := map[string]any{"matrix": map[string]any{"generators": []any{a.gen, b.gen}}}
	return genOut{gen: gen, refs: refs, id: a.id, name: a.name + "-" + b.name}
}

func (g *asGen) isDirs(o genOut) bool {
	body, _ := o.gen["git"].(map[string]any)
	return body != nil && body["directories"] != nil
}

// dirExpr is the template of a directories generator's path parameter.
func (g *asGen) dirExpr(p string) string {
	if g.goT {
		return "{{ ." + p + ".path }}"
	}
	return "{{" + p + "}}"
}

func (g *asGen) merge(level int) genOut {
	g.note("merge")
	key := g.key()
	vals := []string{}
	var base []any
	for range 1 + g.r.IntN(4) {
		v := g.word()
		vals = append(vals, v)
		base = append(base, map[string]any{key: v, "env": g.pick("prod", "dev"), "nested": g.nested()})
	}
	gens := []any{map[string]any{"list": map[string]any{"elements": base}}}
	if level == 0 && g.r.IntN(3) == 0 {
		// The base a matrix: every parameter set shares the second list's
		// maps, which the merge then overrides in place.
		for _, e := range base {
			delete(e.(map[string]any), "nested")
		}
		shared := map[string]any{"nested": g.nested(), "env": "shared"}
		gens[0] = map[string]any{"matrix": map[string]any{"generators": []any{
			map[string]any{"list": map[string]any{"elements": base}},
			map[string]any{"list": map[string]any{"elements": []any{shared}}},
		}}}
		g.note("merge-of-matrix")
	}
	for range 1 + g.r.IntN(2) {
		var over []any
		for _, v := range vals {
			if g.r.IntN(2) == 0 {
				e := map[string]any{key: v, "env": g.pick("prod", "staging"), "extra": g.word()}
				if g.r.IntN(2) == 0 {
					e["nested"] = g.nested()
				}
				over = append(over, e)
			}
		}
		if g.r.IntN(8) == 0 && len(vals) > 0 {
			over = append(over, map[string]any{key: vals[0]}, map[string]any{key: vals[0]})
			g.note("merge-duplicate")
		}
		gens = append(gens, map[string]any{"list": map[string]any{"elements": over}})
	}
	keys := []any{key}
	if g.r.IntN(5) == 0 {
		keys = append(keys, key)
	}
	refs := []string{key, "env", "extra"}
	if g.goT {
		refs = append(refs, "nested.a", "nested.b")
	} else {
		refs = append(refs, "nested")
	}
	return genOut{gen: map[string]any{"merge": map[string]any{"generators": gens, "mergeKeys": keys}}, refs: refs, id: key}
}

func (g *asGen) nested() any {
	if !g.goT {
		return g.word()
	}
	m := map[string]any{"a": g.word()}
	if g.r.IntN(2) == 0 {
		m["b"] = g.word()
	}
	if g.r.IntN(4) == 0 {
		m["c"] = nil
	}
	return m
}

func (g *asGen) selector(o *genOut) {
	g.note("selector")
	var ref string
	if len(o.refs) > 0 {
		ref = o.refs[g.r.IntN(len(o.refs))]
	}
	if strings.ContainsAny(ref, "[]") || ref == "" {
		ref = "env"
	}
	switch g.r.IntN(3) {
	case 0:
		o.gen["selector"] = map[string]any{"matchLabels": map[string]any{ref: g.pick("prod", "staging", "dev")}}
	case 1:
		o.gen["selector"] = map[string]any{"matchExpressions": []any{map[string]any{"key": ref, "operator": g.pick("In", "NotIn"), "values": []any{"prod", "dev"}}}}
	default:
		o.gen["selector"] = map[string]any{"matchExpressions": []any{map[string]any{"key": ref, "operator": g.pick("Exists", "DoesNotExist")}}}
	}
}

// template is the set's template; name is the metadata.name template.
func (g *asGen) template(name string, refs []string) map[string]any {
	meta := map[string]any{"name": name}
	if g.r.IntN(2) == 0 {
		meta["labels"] = map[string]any{"app": g.fexpr(refs), "team": "platform"}
	}
	if g.r.IntN(3) == 0 {
		meta["annotations"] = map[string]any{"note": g.fexpr(refs)}
	}
	if g.r.IntN(5) == 0 {
		meta["finalizers"] = []any{"example.com/keep"}
		g.note("finalizers")
	}
	source := map[string]any{
		"repoURL":        genRepo,
		"targetRevision": g.pick("HEAD", "main", g.fexpr(refs)),
		"path":           g.fexpr(refs),
	}
	if g.r.IntN(2) == 0 {
		source["helm"] = map[string]any{
			"valueFiles": []any{"values.yaml", "values-" + g.fexpr(refs) + ".yaml"},
			"parameters": []any{map[string]any{"name": "image.tag", "value": g.fexpr(refs)}},
		}
		if g.r.IntN(2) == 0 {
			source["helm"].(map[string]any)["valuesObject"] = map[string]any{"a": g.fexpr(refs), "n": 3, "drop": nil, "l": []any{"x", g.fexpr(refs)}}
			g.note("valuesObject")
		}
	}
	spec := map[string]any{
		"project":     g.pick("default", "default", g.fexpr(refs)),
		"source":      source,
		"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": g.fexpr(refs)},
	}
	if g.r.IntN(2) == 0 {
		spec["syncPolicy"] = map[string]any{"automated": map[string]any{"prune": g.r.IntN(2) == 0, "selfHeal": true}, "syncOptions": []any{"CreateNamespace=true"}}
	}
	return map[string]any{"metadata": meta, "spec": spec}
}

// genTemplate is a generator's own template: a few fields over the set's.
func (g *asGen) genTemplate(refs []string) map[string]any {
	t := map[string]any{"metadata": map[string]any{}, "spec": map[string]any{}}
	if g.r.IntN(2) == 0 {
		t["metadata"].(map[string]any)["labels"] = map[string]any{"generator": "own", "app": ""}
	}
	spec := t["spec"].(map[string]any)
	switch g.r.IntN(3) {
	case 0:
		spec["destination"] = map[string]any{"namespace": "own-" + g.fexpr(refs)}
	case 1:
		spec["source"] = map[string]any{"repoURL": genRepo, "path": "own/" + g.fexpr(refs)}
	default:
		spec["syncPolicy"] = map[string]any{"automated": map[string]any{"prune": false}}
	}
	return t
}

// patch is a templatePatch: YAML with template expressions, sometimes
// conditionals with goTemplate.
func (g *asGen) patch(refs []string) string {
	var b strings.Builder
	b.WriteString("metadata:\n  annotations:\n    patched: '" + g.fexpr(refs) + "'\n")
	if g.r.IntN(2) == 0 {
		b.WriteString("  finalizers:\n    - example.com/patched\n")
	}
	b.WriteString("spec:\n")
	if g.goT && g.r.IntN(2) == 0 && len(refs) > 0 {
		ref := refs[g.r.IntN(len(refs))]
		b.WriteString("  {{- if ." + ref + " }}\n  syncPolicy:\n    automated:\n      prune: true\n  {{- end }}\n")
	}
	if g.r.IntN(6) == 0 {
		g.note("json-patch")
		return `{"metadata": {"labels": {"json": "` + g.fexpr(refs) + `", "team": null}}, "spec": {"destination": {"name": "in-cluster", "server": null}}}`
	}
	switch g.r.IntN(4) {
	case 3:
		g.note("patch-replace")
		b.WriteString("  source:\n    $patch: replace\n    repoURL: https://example.com/replaced.git\n    path: " + g.fexpr(refs) + "\n")
	case 0:
		b.WriteString("  source:\n    helm:\n      valueFiles:\n        - patched-" + g.fexpr(refs) + ".yaml\n")
	case 1:
		b.WriteString("  destination:\n    namespace: patched\n  project: other\n")
	default:
		b.WriteString("  source:\n    targetRevision: patched\n    helm: null\n")
	}
	return b.String()
}
