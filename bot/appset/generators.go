package appset

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/drift"
)

// transformResult is one generator's parameter sets and the template they render.
type transformResult struct {
	params   []map[string]any
	template map[string]any
	where    string
}

// kinds are the generator kinds in the order Argo CD's generator type lists
// them, which is the order it runs two kinds given in one entry.
var kinds = []string{"list", "clusters", "git", "scmProvider", "clusterDecisionResource", "pullRequest", "matrix", "merge", "plugin", "oci"}

// withValues are the kinds whose values map is pre-rendered leniently when
// a matrix child is rendered with its sibling's parameters.
var withValues = map[string]bool{"clusters": true, "git": true, "scmProvider": true, "clusterDecisionResource": true, "pullRequest": true, "plugin": true, "oci": true}

// needsArgoCD are the kinds only Argo CD (an SCM API, a plugin, a cluster
// resource, a registry) can resolve, with why.
var needsArgoCD = map[string]string{
	"scmProvider":             "an SCM provider generator lists repositories through the provider's API",
	"pullRequest":             "a pull request generator lists pull requests through the provider's API",
	"plugin":                  "a plugin generator asks a plugin service",
	"clusterDecisionResource": "a cluster decision resource generator reads a resource in the cluster",
	"oci":                     "an OCI generator reads an artifact from a registry",
}

// transform is Argo CD's Transform: each generator kind in the entry, its
// template merged over base, rendered with a matrix sibling's parameters
// when given, its parameters filtered by the entry's selector. level is 0 for
// spec.generators, 1 under a matrix or merge, 2 under a nested one (which
// takes no matrix or merge).
func (r *resolver) transform(gen map[string]any, where string, base map[string]any, genParams map[string]any, level int) ([]transformResult, error) {
	for k, v := range gen {
		if k == "selector" {
			continue
		}
		if (k == "matrix" || k == "merge") && level >= 2 {
			if v != nil {
				return nil, fmt.Errorf("%s.%s: a matrix or merge nested inside a nested matrix or merge, which Argo CD does not read", where, k)
			}
			continue
		}
		if !contains(kinds, k) {
			return nil, fmt.Errorf("%s: %q is not a generator (one of %s)", where, k, strings.Join(kinds, ", "))
		}
	}
	var sel selector
	if s, ok := gen["selector"]; ok && s != nil {
		var err error
		if sel, err = parseSelector(s, where+".selector"); err != nil {
			return nil, err
		}
	}
	var out []transformResult
	for _, kind := range kinds {
		v, ok := gen[kind]
		if !ok || v == nil {
			continue
		}
		w := where + "." + kind
		body, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is a %s, not a map", w, kindOf(v))
		}
		own, err := templateField(body, "template", w+".template")
		if err != nil {
			return nil, err
		}
		tmpl := mergeTemplate(own, base)
		if len(genParams) != 0 {
			b, err := r.renderGenerator(kind, body, genParams, level)
			if err != nil {
				return nil, fmt.Errorf("%s: render with the first matrix generator's parameters: %w", w, err)
			}
			body = b
		}
		params, err := r.generate(kind, body, w, level)
		if err != nil {
			return nil, err
		}
		if len(params) > r.maxParams {
			return nil, fmt.Errorf("%s: %d parameter sets, more than %d (ten times MaxApplications)", w, len(params), r.maxParams)
		}
		if sel != nil {
			var kept []map[string]any
			for _, p := range params {
				if sel.matches(flattenParams(p)) {
					kept = append(kept, p)
				}
			}
			params = kept
		}
		out = append(out, transformResult{params: params, template: tmpl, where: w})
	}
	if len(out) == 0 && level == 0 {
		return nil, fmt.Errorf("%s: no generator (one of %s)", where, strings.Join(kinds, ", "))
	}
	return out, nil
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// generate is one generator kind's GenerateParams.
func (r *resolver) generate(kind string, body map[string]any, where string, level int) ([]map[string]any, error) {
	switch kind {
	case "list":
		return r.list(body, where)
	case "git":
		return r.git(body, where)
	case "clusters":
		return r.clusters(body, where)
	case "matrix":
		return r.matrix(body, where, level)
	case "merge":
		return r.merge(body, where, level)
	}
	return nil, &unresolvedError{Unresolved{Generator: where, Reason: needsArgoCD[kind], Needs: NeedsArgoCD}}
}

// jsonValue gives a value the types Argo CD reads it with: through JSON,
// numbers as float64.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *resolver) list(body map[string]any, where string) ([]map[string]any, error) {
	var elems []any
	if e, ok := body["elements"]; ok && e != nil {
		if elems, ok = e.([]any); !ok {
			return nil, fmt.Errorf("%s.elements is a %s, not a list", where, kindOf(e))
		}
	}
	res := make([]map[string]any, len(elems))
	for i, e := range elems {
		v, err := jsonValue(e)
		if err != nil {
			return nil, fmt.Errorf("%s.elements[%d]: %w", where, i, err)
		}
		if v == nil {
			continue
		}
		elem, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s.elements[%d] is a %s, not a map", where, i, kindOf(v))
		}
		if r.goTemplate {
			res[i] = elem
			continue
		}
		params := map[string]any{}
		for k, val := range elem {
			if k == "values" {
				vals, ok := val.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s.elements[%d].values is a %s, not a map (goTemplate is off, so values are strings)", where, i, kindOf(val))
				}
				for vk, vv := range vals {
					s, ok := vv.(string)
					if !ok {
						return nil, fmt.Errorf("%s.elements[%d].values.%s is a %s, not a string (goTemplate is off)", where, i, vk, kindOf(vv))
					}
					params["values."+vk] = s
				}
				continue
			}
			s, ok := val.(string)
			if !ok {
				return nil, fmt.Errorf("%s.elements[%d].%s is a %s, not a string (goTemplate is off, so element values are strings)", where, i, k, kindOf(val))
			}
			params[k] = s
		}
		if len(elem) > 0 {
			res[i] = params
		}
	}
	if y, ok := body["elementsYaml"]; ok && y != nil {
		s, ok := y.(string)
		if !ok {
			return nil, fmt.Errorf("%s.elementsYaml is a %s, not a string", where, kindOf(y))
		}
		if s != "" {
			var more []map[string]any
			if err := yaml.Unmarshal([]byte(s), &more); err != nil {
				return nil, fmt.Errorf("%s.elementsYaml is not a YAML list of maps: %w", where, err)
			}
			res = append(res, more...)
		}
	}
	return res, nil
}

type pathPattern struct {
	path    string
	exclude bool
}

func patterns(v any, where string) ([]pathPattern, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is a %s, not a list", where, kindOf(v))
	}
	out := make([]pathPattern, len(l))
	for i, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is a %s, not a map with path", where, i, kindOf(e))
		}
		p, ok := m["path"].(string)
		if !ok && m["path"] != nil {
			return nil, fmt.Errorf("%s[%d].path is a %s, not a string", where, i, kindOf(m["path"]))
		}
		ex, err := boolField(m, "exclude")
		if err != nil {
			return nil, fmt.Errorf("%s[%d].%w", where, i, err)
		}
		out[i] = pathPattern{p, ex}
	}
	return out, nil
}

func strField(m map[string]any, key, where string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s.%s is a %s, not a string", where, key, kindOf(v))
	}
	return s, nil
}

func (r *resolver) git(body map[string]any, where string) ([]map[string]any, error) {
	repo, err := strField(body, "repoURL", where)
	if err != nil {
		return nil, err
	}
	rev, err := strField(body, "revision", where)
	if err != nil {
		return nil, err
	}
	prefix, err := strField(body, "pathParamPrefix", where)
	if err != nil {
		return nil, err
	}
	dirs, err := patterns(body["directories"], where+".directories")
	if err != nil {
		return nil, err
	}
	files, err := patterns(body["files"], where+".files")
	if err != nil {
		return nil, err
	}
	values, err := stringMap(body["values"], where+".values")
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 && len(files) == 0 {
		return nil, fmt.Errorf("%s: neither directories nor files", where)
	}
	var tree map[string]string
	ok := false
	if r.opt.Files != nil {
		tree, ok = r.opt.Files(repo, rev)
	}
	if !ok {
		shown := rev
		if shown == "" {
			shown = "HEAD"
		}
		return nil, &unresolvedError{Unresolved{Generator: where,
			Reason: fmt.Sprintf("the files of %s at %s are not at hand", repo, shown),
			Needs:  fmt.Sprintf("a checkout of %s at %s", repo, shown)}}
	}
	tree = cleanTree(tree)
	if len(dirs) != 0 {
		var res []map[string]any
		for _, d := range filterPaths(dirs, directories(tree)) {
			p := pathParams(d, prefix, r.goTemplate, false)
			if err := r.appendValues(values, p); err != nil {
				return nil, fmt.Errorf("%s.values: %w", where, err)
			}
			res = append(res, p)
		}
		return res, nil
	}
	matched := map[string]bool{}
	for _, f := range files {
		if !f.exclude {
			for _, name := range lsFiles(tree, f.path) {
				matched[name] = true
			}
		}
	}
	for _, f := range files {
		if f.exclude {
			for _, name := range lsFiles(tree, f.path) {
				delete(matched, name)
			}
		}
	}
	var res []map[string]any
	for _, name := range sortedKeys(matched) {
		ps, err := r.fileParams(name, tree[name], prefix, values)
		if err != nil {
			return nil, fmt.Errorf("%s: file %s in %s: %w", where, name, repo, err)
		}
		res = append(res, ps...)
		if len(res) > r.maxParams {
			return nil, fmt.Errorf("%s: more than %d parameter sets (ten times MaxApplications)", where, r.maxParams)
		}
	}
	return res, nil
}

// fileParams reads one git file generator file: a map, or a list of maps
// each one parameter set, with its path parameters.
func (r *resolver) fileParams(name, content, prefix string, values map[string]string) ([]map[string]any, error) {
	var objs []map[string]any
	single := map[string]any{}
	if err := yaml.Unmarshal([]byte(content), &single); err == nil {
		objs = append(objs, single)
	} else if err := yaml.Unmarshal([]byte(content), &objs); err != nil {
		return nil, fmt.Errorf("not a YAML or JSON map or list of maps: %w", err)
	}
	var res []map[string]any
	for _, o := range objs {
		var p map[string]any
		if r.goTemplate {
			p = map[string]any{}
			for k, v := range o {
				p[k] = v
			}
			for k, v := range pathParams(name, prefix, true, true) {
				p[k] = v
			}
		} else {
			p = map[string]any{}
			for k, v := range flatten(o) {
				p[k] = fmt.Sprintf("%v", v)
			}
			for k, v := range pathParams(name, prefix, false, true) {
				p[k] = v
			}
		}
		if err := r.appendValues(values, p); err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
		res = append(res, p)
	}
	return res, nil
}

// appendValues adds a generator's values, each rendered with the parameters
// so far: values.KEY, or a values map with goTemplate.
func (r *resolver) appendValues(values map[string]string, params map[string]any) error {
	if len(values) == 0 {
		return nil
	}
	rendered := map[string]string{}
	for _, k := range sortedKeys(values) {
		s, err := r.replace(values[k], params, r.options)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		rendered[k] = s
	}
	if r.goTemplate {
		params["values"] = rendered
		return nil
	}
	for k, s := range rendered {
		params["values."+k] = s
	}
	return nil
}

// clusterSecrets are the Argo CD cluster Secrets of the cluster context
// and those the repository declares, by cluster name (the cluster
// context's first), that sel matches.
func (r *resolver) clusterSecrets(sel selector) ([]drift.Object, error) {
	byName := map[string]drift.Object{}
	for _, o := range append(append([]drift.Object(nil), r.opt.Cluster...), r.opt.Declared...) {
		if drift.Str(o, "kind") != "Secret" {
			continue
		}
		labels := drift.Labels(o)
		if labels["argocd.argoproj.io/secret-type"] != "cluster" {
			continue
		}
		if sel != nil && !sel.matches(labels) {
			continue
		}
		data := map[string]string{}
		for k, v := range drift.Map(o, "data") {
			s, _ := v.(string)
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("cluster Secret %s: data.%s is not base64: %w", drift.Str(o, "metadata", "name"), k, err)
			}
			data[k] = string(b)
		}
		for k, v := range drift.Map(o, "stringData") {
			s, _ := v.(string)
			data[k] = s
		}
		if _, seen := byName[data["name"]]; seen {
			continue
		}
		byName[data["name"]] = drift.Object{"data": data, "labels": labels, "annotations": drift.Annotations(o)}
	}
	var out []drift.Object
	for _, n := range sortedKeys(byName) {
		out = append(out, byName[n])
	}
	return out, nil
}

// excludedClusterAnnotations are the annotations Argo CD does not pass on as parameters.
var excludedClusterAnnotations = map[string]bool{
	"argocd.argoproj.io/refresh": true, "argocd.argoproj.io/refresh-timestamp": true,
	"argocd.argoproj.io/hydrate": true, "argocd.argoproj.io/hydrate-timestamp": true,
	"argocd.argoproj.io/instance": true, "argocd.argoproj.io/installation-id": true,
	"kubectl.kubernetes.io/last-applied-configuration": true,
}

// clusters is Argo CD's clusters generator: a parameter set per cluster
// Secret the selector matches and, without a selector, the local cluster
// (in-cluster, https://kubernetes.default.svc) when no Secret names that
// server. Without a cluster context, the Secrets are those the
// repository declares: the generator resolves, named in r.partial, unless
// it has a selector that none of them matches (then the clusters it makes
// are all outside Git, and it is unresolved).
func (r *resolver) clusters(body map[string]any, where string) ([]map[string]any, error) {
	values, err := stringMap(body["values"], where+".values")
	if err != nil {
		return nil, err
	}
	flat, err := boolField(body, "flatList")
	if err != nil {
		return nil, fmt.Errorf("%s.%w", where, err)
	}
	var sel selector
	ignoreLocal := false
	if s, ok := body["selector"]; ok && s != nil {
		if sel, err = parseSelector(s, where+".selector"); err != nil {
			return nil, err
		}
		ignoreLocal = len(sel) > 0
	}
	secrets, err := r.clusterSecrets(sel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if r.opt.Cluster == nil {
		if ignoreLocal && len(secrets) == 0 {
			return nil, &unresolvedError{Unresolved{Generator: where, Reason: "a clusters generator with a selector lists the cluster Secrets Argo CD holds, and no cluster Secret in the repository matches it", Needs: NeedsCluster}}
		}
		r.notePartial(Unresolved{Generator: where, Reason: fmt.Sprintf("resolved from %s alone; clusters registered with Argo CD outside the repository are not known", knownClusters(len(secrets), ignoreLocal)), Needs: NeedsCluster})
	}
	var res []map[string]any
	hasLocal := false
	for _, c := range secrets {
		data := c["data"].(map[string]string)
		if data["server"] == "https://kubernetes.default.svc" {
			hasLocal = true
		}
		p := map[string]any{"name": data["name"], "nameNormalized": sanitizeName(data["name"]), "server": data["server"], "project": data["project"]}
		labels, annotations := c["labels"].(map[string]string), map[string]string{}
		for k, v := range c["annotations"].(map[string]string) {
			if !excludedClusterAnnotations[k] {
				annotations[k] = v
			}
		}
		if r.goTemplate {
			meta := map[string]any{}
			if len(c["annotations"].(map[string]string)) > 0 {
				meta["annotations"] = annotations
			}
			if len(labels) > 0 {
				meta["labels"] = labels
			}
			p["metadata"] = meta
		} else {
			for k, v := range annotations {
				p["metadata.annotations."+k] = v
			}
			for k, v := range labels {
				p["metadata.labels."+k] = v
			}
		}
		if err := r.appendValues(values, p); err != nil {
			return nil, fmt.Errorf("%s.values: %w", where, err)
		}
		res = append(res, p)
	}
	if !ignoreLocal && !hasLocal {
		p := map[string]any{"name": "in-cluster", "nameNormalized": "in-cluster", "server": "https://kubernetes.default.svc", "project": ""}
		if err := r.appendValues(values, p); err != nil {
			return nil, fmt.Errorf("%s.values: %w", where, err)
		}
		res = append(res, p)
	}
	if flat {
		l := make([]any, len(res))
		for i, p := range res {
			l[i] = p
		}
		res = []map[string]any{{"clusters": l}}
	}
	return res, nil
}

// knownClusters says which clusters a generator without a cluster context
// was resolved from.
func knownClusters(declared int, ignoreLocal bool) string {
	switch {
	case ignoreLocal:
		return fmt.Sprintf("the %d cluster Secret(s) the repository declares that its selector matches", declared)
	case declared == 0:
		return "the local cluster (in-cluster, which Argo CD lists without a Secret)"
	}
	return fmt.Sprintf("the local cluster and the %d cluster Secret(s) the repository declares", declared)
}

// notePartial records a generator resolved from Git alone, once (a
// matrix's second generator is resolved once per parameter set of the
// first).
func (r *resolver) notePartial(u Unresolved) {
	for _, p := range r.partial {
		if p.Generator == u.Generator {
			return
		}
	}
	r.partial = append(r.partial, u)
}

// children reads a matrix's or merge's generators.
func children(body map[string]any, where string) ([]map[string]any, error) {
	v := body["generators"]
	l, ok := v.([]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("%s.generators is a %s, not a list", where, kindOf(v))
	}
	out := make([]map[string]any, len(l))
	for i, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s.generators[%d] is a %s, not a map", where, i, kindOf(e))
		}
		out[i] = m
	}
	return out, nil
}

// childParams is one matrix or merge child's parameter sets.
func (r *resolver) childParams(child map[string]any, where string, genParams map[string]any, level int) ([]map[string]any, error) {
	t, err := r.transform(child, where, map[string]any{}, genParams, level)
	if err != nil {
		return nil, err
	}
	if len(t) == 0 {
		return nil, fmt.Errorf("%s: no generator", where)
	}
	if len(t) > 1 {
		return nil, fmt.Errorf("%s: more than one generator in one entry", where)
	}
	return t[0].params, nil
}

func (r *resolver) matrix(body map[string]any, where string, level int) ([]map[string]any, error) {
	gens, err := children(body, where)
	if err != nil {
		return nil, err
	}
	if len(gens) != 2 {
		return nil, fmt.Errorf("%s: %d generators; a matrix takes exactly two", where, len(gens))
	}
	w0, w1 := where+".generators[0]", where+".generators[1]"
	g0, err := r.childParams(gens[0], w0, nil, level+1)
	if err != nil {
		return nil, err
	}
	// As Argo CD: a second child without {{ is generated once, with the
	// first parameter set, and copied for each.
	b, _ := json.Marshal(gens[1])
	reusable := !bytes.Contains(b, []byte("{{"))
	var reused []map[string]any
	if reusable && len(g0) > 0 {
		if reused, err = r.childParams(gens[1], w1, g0[0], level+1); err != nil {
			return nil, err
		}
	}
	res := []map[string]any{}
	for _, a := range g0 {
		var g1 []map[string]any
		if reusable {
			g1 = make([]map[string]any, len(reused))
			for i, p := range reused {
				g1[i] = copyParams(p)
			}
		} else if g1, err = r.childParams(gens[1], w1, a, level+1); err != nil {
			return nil, err
		}
		for _, b := range g1 {
			if r.goTemplate {
				tmp := map[string]any{}
				if err := mergeOverride(tmp, b); err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
				if err := mergeOverride(tmp, a); err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
				res = append(res, tmp)
			} else {
				c := map[string]any{}
				for k, v := range a {
					c[k] = fmt.Sprintf("%v", v)
				}
				for k, v := range b {
					s := fmt.Sprintf("%v", v)
					if cur, ok := c[k]; ok && cur != s {
						return nil, fmt.Errorf("%s: both generators give the parameter %s, with different values (%q and %q)", where, k, cur, s)
					}
					c[k] = s
				}
				res = append(res, c)
			}
			if len(res) > r.maxParams {
				return nil, fmt.Errorf("%s: more than %d parameter sets (ten times MaxApplications)", where, r.maxParams)
			}
		}
	}
	return res, nil
}

func (r *resolver) merge(body map[string]any, where string, level int) ([]map[string]any, error) {
	gens, err := children(body, where)
	if err != nil {
		return nil, err
	}
	if len(gens) < 2 {
		return nil, fmt.Errorf("%s: %d generators; a merge takes two or more", where, len(gens))
	}
	keys, err := stringList(body["mergeKeys"], where+".mergeKeys")
	if err != nil {
		return nil, err
	}
	sets := make([][]map[string]any, len(gens))
	for i, g := range gens {
		if sets[i], err = r.childParams(g, fmt.Sprintf("%s.generators[%d]", where, i), nil, level+1); err != nil {
			return nil, err
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no mergeKeys; a merge needs at least one", where)
	}
	baseOrder, base, err := byMergeKey(keys, sets[0], where+".generators[0]")
	if err != nil {
		return nil, err
	}
	for i, s := range sets[1:] {
		_, over, err := byMergeKey(keys, s, fmt.Sprintf("%s.generators[%d]", where, i+1))
		if err != nil {
			return nil, err
		}
		for _, k := range baseOrder {
			o, ok := over[k]
			if !ok {
				continue
			}
			b := base[k]
			if r.goTemplate {
				if err := mergeOverride(b, o); err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
			} else {
				for ok, ov := range o {
					b[ok] = ov
				}
			}
		}
	}
	out := make([]map[string]any, len(baseOrder))
	for i, k := range baseOrder {
		out[i] = base[k]
	}
	return out, nil
}

func byMergeKey(keys []string, sets []map[string]any, where string) ([]string, map[string]map[string]any, error) {
	uniq := map[string]bool{}
	for _, k := range keys {
		uniq[k] = true
	}
	var order []string
	out := make(map[string]map[string]any, len(sets))
	for _, p := range sets {
		key := map[string]any{}
		for k := range uniq {
			key[k] = p[k]
		}
		b, err := json.Marshal(key)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: merge key: %w", where, err)
		}
		if _, dup := out[string(b)]; dup {
			return nil, nil, fmt.Errorf("%s: two parameter sets with the same mergeKeys %s; a merge needs them unique", where, b)
		}
		if p == nil {
			p = map[string]any{}
		}
		out[string(b)] = p
		order = append(order, string(b))
	}
	return order, out, nil
}

// renderGenerator renders a matrix's second child with the first child's
// parameters, as Argo CD's RenderGeneratorParams does: every string, with a
// generator's values rendered leniently (a value naming a key the
// parameters lack is kept for the generator's own parameters).
func (r *resolver) renderGenerator(kind string, body map[string]any, params map[string]any, level int) (map[string]any, error) {
	out := map[string]any{}
	for _, k := range sortedKeys(body) {
		v := body[k]
		if v == nil {
			continue
		}
		switch {
		case k == "values" && withValues[kind]:
			vals, err := stringMap(v, kind+".values")
			if err != nil {
				return nil, err
			}
			opts := r.options
			if r.goTemplate {
				opts = nil
				for _, o := range r.options {
					if !strings.HasPrefix(o, "missingkey=") {
						opts = append(opts, o)
					}
				}
				opts = append(opts, "missingkey=error")
			}
			m := map[string]any{}
			for vk, vv := range vals {
				s, err := r.replace(vv, params, opts)
				if err != nil {
					if msg := err.Error(); strings.Contains(msg, "map has no entry for key") || strings.Contains(msg, "can't evaluate field") {
						s = vv
					} else {
						return nil, fmt.Errorf("values.%s: %w", vk, err)
					}
				}
				m[vk] = s
			}
			out[k] = m
		case k == "generators" && (kind == "matrix" || kind == "merge"):
			l, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%s.generators is a %s, not a list", kind, kindOf(v))
			}
			gl := make([]any, len(l))
			for i, g := range l {
				gm, ok := g.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s.generators[%d] is a %s, not a map", kind, i, kindOf(g))
				}
				rg := map[string]any{}
				for _, gk := range sortedKeys(gm) {
					gv := gm[gk]
					if gv == nil {
						continue
					}
					if gb, ok := gv.(map[string]any); ok && contains(kinds, gk) {
						x, err := r.renderGenerator(gk, gb, params, level+1)
						if err != nil {
							return nil, err
						}
						rg[gk] = x
						continue
					}
					x, err := r.renderValue(gv, params)
					if err != nil {
						return nil, err
					}
					rg[gk] = x
				}
				gl[i] = rg
			}
			out[k] = gl
		default:
			x, err := r.renderValue(v, params)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
	}
	return out, nil
}

// copyParams deep-copies a parameter set, keeping its value types.
func copyParams(p map[string]any) map[string]any {
	if p == nil {
		return nil
	}
	out := make(map[string]any, len(p))
	for k, v := range p {
		out[k] = copyParam(v)
	}
	return out
}

func copyParam(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyParams(x)
	case map[string]string:
		m := make(map[string]string, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = copyParam(e)
		}
		return l
	case []string:
		return append([]string(nil), x...)
	}
	return v
}

// flatten is the flatten library's dot style: nested maps and lists as a.b
// and a.0, other values as they are.
func flatten(m map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v any, top bool)
	walk = func(prefix string, v any, top bool) {
		key := func(k string) string {
			if top {
				return prefix + k
			}
			return prefix + "." + k
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				assign(out, key(k), e, walk)
			}
		case []any:
			for i, e := range x {
				assign(out, key(fmt.Sprint(i)), e, walk)
			}
		}
	}
	walk("", m, true)
	return out
}

func assign(out map[string]any, k string, v any, walk func(string, any, bool)) {
	switch v.(type) {
	case map[string]any, []any:
		walk(k, v, false)
	default:
		out[k] = v
	}
}

// flattenParams is the label set a generator's selector is matched
// against: the parameters flattened, each value printed.
func flattenParams(p map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range flatten(normalizeForFlatten(p)) {
		out[k] = fmt.Sprintf("%v", v)
	}
	return out
}

func normalizeForFlatten(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		switch x := v.(type) {
		case map[string]string:
			m := make(map[string]any, len(x))
			for ik, iv := range x {
				m[ik] = iv
			}
			out[k] = m
		case map[string]any:
			out[k] = normalizeForFlatten(x)
		default:
			out[k] = v
		}
	}
	return out
}
