// Package appset resolves an ApplicationSet's generators into the
// Applications Argo CD 3.6's ApplicationSet controller would make of them,
// where Git alone (or a cluster context file) decides: list, git directories
// and files, clusters from cluster Secrets (a cluster context's and those
// the repository declares; without a cluster context, the local cluster
// and the declared ones, named as partial), and matrix and merge of those,
// with goTemplate, goTemplateOptions, per-generator templates, selectors and
// templatePatch. Generators that need an API (SCM providers, pull requests,
// plugins, cluster decision resources, OCI) are named as not resolved with
// what would resolve them. It does no I/O: a repository's files come from
// the caller.
package appset

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// Files gives a repository's files at a revision (path -> content), and
// whether they are at hand.
type Files func(repoURL, revision string) (map[string]string, bool)

// Options are what Resolve may read besides the ApplicationSet.
type Options struct {
	// Files gives the git generators' repositories.
	Files Files
	// Cluster holds Argo CD cluster Secrets (and other objects) from a
	// cluster context file; nil when none was given.
	Cluster []drift.Object
	// Declared holds the cluster Secrets the repository itself declares
	// and the same Argo CD applies (the caller decides which). With
	// Cluster, they are added to its Secrets (a cluster named in both is
	// the cluster context's); without it, a clusters generator resolves
	// from them and the local cluster alone, as far as Git tells, and
	// says so in Result.Partial.
	Declared []drift.Object
	// MaxApplications bounds the Applications one set may make (default 1000).
	MaxApplications int
}

// Generated is one Application an ApplicationSet makes.
type Generated struct {
	// Application is the full argoproj.io/v1alpha1 Application: metadata
	// (name, the set's namespace, labels, annotations, finalizers) and spec,
	// numbers as drift.NormalizeNumbers leaves them. Without a namespace on
	// the set, it has none (Argo CD puts it in the set's).
	Application drift.Object
	// Params are the generator's parameters it was rendered with (a copy).
	Params map[string]any
	// Generator is the path of the top-level generator that made it, e.g.
	// "generators[0].matrix".
	Generator string
}

// Unresolved names a generator Resolve could not resolve from Git alone.
type Unresolved struct {
	// Generator is the generator's path, e.g. "generators[1].matrix.generators[0].clusters".
	Generator string
	// Reason says why.
	Reason string
	// Needs says what would let it resolve.
	Needs string
}

// Result is what an ApplicationSet resolves to.
type Result struct {
	Applications []Generated
	Unresolved   []Unresolved
	// Partial names the generators resolved from what Git tells alone (a
	// clusters generator without a cluster context: the cluster Secrets
	// the repository declares and the local cluster); Reason says what
	// may be missing, Needs what would tell it.
	Partial []Unresolved
}

// NeedsCluster and NeedsArgoCD are the Needs of unresolved generators.
const (
	NeedsCluster = "--cluster FILE with Argo CD cluster Secrets"
	NeedsArgoCD  = "Argo CD at hand (argocd appset generate)"
)

// DefaultMaxApplications is MaxApplications when it is not set.
const DefaultMaxApplications = 1000

// unresolvedError stops one top-level generator; Resolve lists it and goes on.
type unresolvedError struct{ u Unresolved }

func (e *unresolvedError) Error() string { return e.u.Generator + ": " + e.u.Reason }

type resolver struct {
	opt        Options
	partial    []Unresolved
	goTemplate bool
	options    []string
	maxParams  int
	ticks      int // loop iterations and template calls so far, see maxTicks
}

// Resolve makes the Applications an ApplicationSet's generators make, in
// generator order, then each generator's order. An error means the set is
// one Argo CD would refuse (an invalid generator or template, a template that
// does not render, more Applications than MaxApplications); generators
// needing what is not at hand are listed in Result.Unresolved.
func Resolve(set drift.Object, opt Options) (Result, error) {
	if opt.MaxApplications <= 0 {
		opt.MaxApplications = DefaultMaxApplications
	}
	name := drift.Str(set, "metadata", "name")
	if k := drift.Str(set, "kind"); k != "ApplicationSet" {
		return Result{}, fmt.Errorf("resolve ApplicationSet %s: kind is %q", name, k)
	}
	spec, ok := set["spec"].(map[string]any)
	if !ok {
		return Result{}, fmt.Errorf("resolve ApplicationSet %s: spec is not a map", name)
	}
	r := &resolver{opt: opt, maxParams: 10 * opt.MaxApplications}
	var err error
	if r.goTemplate, err = boolField(spec, "goTemplate"); err != nil {
		return Result{}, fmt.Errorf("resolve ApplicationSet %s: spec.%w", name, err)
	}
	if r.options, err = stringList(spec["goTemplateOptions"], "spec.goTemplateOptions"); err != nil {
		return Result{}, fmt.Errorf("resolve ApplicationSet %s: %w", name, err)
	}
	if err := checkOptions(r.options); err != nil {
		return Result{}, fmt.Errorf("resolve ApplicationSet %s: spec.%w", name, err)
	}
	base, err := templateField(spec, "template", "spec.template")
	if err != nil {
		return Result{}, fmt.Errorf("resolve ApplicationSet %s: %w", name, err)
	}
	var patch *string
	if p, ok := spec["templatePatch"]; ok && p != nil {
		s, ok := p.(string)
		if !ok {
			return Result{}, fmt.Errorf("resolve ApplicationSet %s: spec.templatePatch is a %s, not a string", name, kindOf(p))
		}
		patch = &s
	}
	preserve := false
	if sp, ok := spec["syncPolicy"].(map[string]any); ok {
		if preserve, err = boolField(sp, "preserveResourcesOnDeletion"); err != nil {
			return Result{}, fmt.Errorf("resolve ApplicationSet %s: spec.syncPolicy.%w", name, err)
		}
	}
	gens, ok := spec["generators"].([]any)
	if !ok && spec["generators"] != nil {
		return Result{}, fmt.Errorf("resolve ApplicationSet %s: spec.generators is a %s, not a list", name, kindOf(spec["generators"]))
	}
	namespace := drift.Str(set, "metadata", "namespace")
	var res Result
	names := map[string]string{}
	for i, g := range gens {
		where := fmt.Sprintf("generators[%d]", i)
		gm, ok := g.(map[string]any)
		if !ok {
			return Result{}, fmt.Errorf("resolve ApplicationSet %s: %s is a %s, not a map", name, where, kindOf(g))
		}
		trs, err := r.transform(gm, where, base, nil, 0)
		var ue *unresolvedError
		if errors.As(err, &ue) {
			res.Unresolved = append(res.Unresolved, ue.u)
			continue
		}
		if err != nil {
			return Result{}, fmt.Errorf("resolve ApplicationSet %s: %w", name, err)
		}
		for _, tr := range trs {
			for j, p := range tr.params {
				app, err := r.render(tr.template, p, preserve, patch)
				if err != nil {
					return Result{}, fmt.Errorf("resolve ApplicationSet %s: %s, parameters %d (%s): %w", name, tr.where, j+1, describe(p), err)
				}
				if namespace != "" {
					app["metadata"].(map[string]any)["namespace"] = namespace
				} else {
					delete(app["metadata"].(map[string]any), "namespace")
				}
				appName := drift.Str(app, "metadata", "name")
				if appName == "" {
					return Result{}, fmt.Errorf("resolve ApplicationSet %s: %s, parameters %d (%s): the Application has no name; set the template's metadata.name", name, tr.where, j+1, describe(p))
				}
				if err := validName(appName); err != nil {
					return Result{}, fmt.Errorf("resolve ApplicationSet %s: %s, parameters %d (%s): Application name %q: %w", name, tr.where, j+1, describe(p), appName, err)
				}
				if prev, dup := names[appName]; dup {
					return Result{}, fmt.Errorf("resolve ApplicationSet %s: %s and %s both make an Application named %q; Argo CD refuses the set", name, prev, tr.where, appName)
				}
				names[appName] = tr.where
				if err := checkApplication(app); err != nil {
					return Result{}, fmt.Errorf("resolve ApplicationSet %s: %s, parameters %d (%s): %w", name, tr.where, j+1, describe(p), err)
				}
				if len(res.Applications) >= opt.MaxApplications {
					return Result{}, fmt.Errorf("resolve ApplicationSet %s: more than %d Applications (the limit MaxApplications)", name, opt.MaxApplications)
				}
				drift.NormalizeNumbers(app)
				res.Applications = append(res.Applications, Generated{Application: app, Params: copyParams(p), Generator: tr.where})
			}
		}
	}
	res.Partial = r.partial
	return res, nil
}

// render makes one Application of a template and one parameter set, as
// Argo CD's GenerateApplications does: every string rendered, the resources
// finalizer added when the template names none, then the templatePatch.
func (r *resolver) render(tmpl map[string]any, params map[string]any, preserve bool, patch *string) (drift.Object, error) {
	meta := map[string]any{}
	tm, _ := tmpl["metadata"].(map[string]any)
	for _, k := range []string{"name", "namespace", "labels", "annotations", "finalizers"} {
		if v, ok := tm[k]; ok && v != nil {
			meta[k] = drift.DeepCopy(v)
		}
	}
	app := map[string]any{"metadata": meta}
	if s, ok := tmpl["spec"]; ok && s != nil {
		app["spec"] = drift.DeepCopy(s)
	}
	if len(params) > 0 {
		out, err := r.renderValue(app, params)
		if err != nil {
			return nil, fmt.Errorf("render the template: %w", err)
		}
		app = out.(map[string]any)
		if _, ok := app["metadata"]; !ok {
			app["metadata"] = map[string]any{}
		}
		meta = app["metadata"].(map[string]any)
		if fs, _ := meta["finalizers"].([]any); !preserve && len(fs) == 0 {
			meta["finalizers"] = []any{"resources-finalizer.argocd.argoproj.io"}
		}
	}
	if patch != nil {
		text, err := r.replace(*patch, params, r.options)
		if err != nil {
			return nil, fmt.Errorf("render templatePatch: %w", err)
		}
		if app, err = applyPatch(app, text); err != nil {
			return nil, fmt.Errorf("apply templatePatch: %w", err)
		}
	}
	out := drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application"}
	for k, v := range app {
		if k == "metadata" || k == "spec" || k == "operation" {
			out[k] = v
		}
	}
	if _, ok := out["metadata"].(map[string]any); !ok {
		out["metadata"] = map[string]any{}
	}
	return out, nil
}

// describe prints a parameter set briefly for an error message.
func describe(p map[string]any) string {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Sprint(p)
	}
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any:
		return "map"
	case []any:
		return "list"
	case int, int64, float64, uint64, json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func boolField(m map[string]any, key string) (bool, error) {
	switch v := m[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, fmt.Errorf("%s is a %s, not true or false", key, kindOf(v))
	}
}

func stringList(v any, where string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is a %s, not a list of strings", where, kindOf(v))
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is a %s, not a string", where, i, kindOf(e))
		}
		out[i] = s
	}
	return out, nil
}

func stringMap(v any, where string) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is a %s, not a map of strings", where, kindOf(v))
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := e.(string)
		if !ok && e != nil {
			return nil, fmt.Errorf("%s.%s is a %s, not a string", where, k, kindOf(e))
		}
		out[k] = s
	}
	return out, nil
}

// templateField reads an ApplicationSetTemplate (metadata and spec) and
// checks the shape Argo CD's type gives it.
func templateField(m map[string]any, key, where string) (map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return map[string]any{}, nil
	}
	t, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is a %s, not a map", where, kindOf(v))
	}
	t = drift.DeepCopy(t).(map[string]any)
	if md, ok := t["metadata"]; ok && md != nil {
		mm, ok := md.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s.metadata is a %s, not a map", where, kindOf(md))
		}
		for _, f := range []string{"name", "namespace"} {
			if x, ok := mm[f]; ok && x != nil {
				if _, ok := x.(string); !ok {
					return nil, fmt.Errorf("%s.metadata.%s is a %s, not a string", where, f, kindOf(x))
				}
			}
		}
		for _, f := range []string{"labels", "annotations"} {
			if _, err := stringMap(mm[f], where+".metadata."+f); err != nil {
				return nil, err
			}
		}
		if _, err := stringList(mm["finalizers"], where+".metadata.finalizers"); err != nil {
			return nil, err
		}
	}
	if s, ok := t["spec"]; ok && s != nil {
		if _, ok := s.(map[string]any); !ok {
			return nil, fmt.Errorf("%s.spec is a %s, not a map", where, kindOf(s))
		}
	}
	return t, nil
}

// checkApplication checks the fields of a rendered Application a consumer
// reads have the types Argo CD's Application type gives them.
func checkApplication(app drift.Object) error {
	spec, ok := app["spec"].(map[string]any)
	if !ok {
		if app["spec"] == nil {
			return nil
		}
		return fmt.Errorf("the Application's spec is a %s, not a map", kindOf(app["spec"]))
	}
	str := func(m map[string]any, where string, keys ...string) error {
		for _, k := range keys {
			if v, ok := m[k]; ok && v != nil {
				if _, ok := v.(string); !ok {
					return fmt.Errorf("the Application's %s.%s is a %s, not a string", where, k, kindOf(v))
				}
			}
		}
		return nil
	}
	if err := str(spec, "spec", "project"); err != nil {
		return err
	}
	if d, ok := spec["destination"]; ok && d != nil {
		dm, ok := d.(map[string]any)
		if !ok {
			return fmt.Errorf("the Application's spec.destination is a %s, not a map", kindOf(d))
		}
		if err := str(dm, "spec.destination", "server", "name", "namespace"); err != nil {
			return err
		}
	}
	srcs := []any{}
	if s, ok := spec["source"]; ok && s != nil {
		srcs = append(srcs, s)
	}
	if s, ok := spec["sources"]; ok && s != nil {
		l, ok := s.([]any)
		if !ok {
			return fmt.Errorf("the Application's spec.sources is a %s, not a list", kindOf(s))
		}
		srcs = append(srcs, l...)
	}
	for _, s := range srcs {
		sm, ok := s.(map[string]any)
		if !ok {
			return fmt.Errorf("an Application source is a %s, not a map", kindOf(s))
		}
		if err := str(sm, "source", "repoURL", "path", "targetRevision", "chart", "ref", "name"); err != nil {
			return err
		}
	}
	return nil
}

// validName checks an Application name is one the API server takes for a
// custom resource: a path segment.
func validName(n string) error {
	if n == "." || n == ".." {
		return errors.New("not a name the API server takes")
	}
	if strings.ContainsAny(n, "/%") {
		return errors.New("holds '/' or '%', which the API server refuses in a name")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
