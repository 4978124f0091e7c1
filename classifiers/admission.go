package classifiers

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"

	"github.com/driftfix/driftfix/bot/drift"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/namespace"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/object"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"
	"k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// This file decides which mutating webhooks admit an object the way the API
// server does, by calling the API server's own matchers (k8s.io/apiserver's
// webhook predicates): rules with their wildcards and subresources, scope,
// namespaceSelector against the namespace's labels, objectSelector against the
// old and the new object's labels, matchPolicy Equivalent, and matchConditions
// (CEL) that read only the object and the old object.

// webhookMatch is one webhook of a MutatingWebhookConfiguration that admits an object.
type webhookMatch struct {
	config   string
	webhook  string
	evidence []drift.Evidence
}

// parsedWebhook is one webhook of a collected configuration, read once per
// diagnosis into the API's own type with the defaults the API server applies.
type parsedWebhook struct {
	config string
	hook   admissionv1.MutatingWebhook
	nsSel  labels.Selector
	objSel labels.Selector
	err    error // the configuration could not be read: it is never taken to match
	// conds are the webhook's matchConditions that read only the object and
	// the old object, compiled; nil when it has none.
	conds *matchConditions
	// undecidable names the matchConditions that read the request or the
	// authorizer, which a snapshot cannot decide.
	undecidable []string
}

// GetParsedNamespaceSelector gives the API server's matcher the webhook's
// namespaceSelector.
func (w *parsedWebhook) GetParsedNamespaceSelector() (labels.Selector, error) { return w.nsSel, nil }

// GetParsedObjectSelector gives the API server's matcher the webhook's objectSelector.
func (w *parsedWebhook) GetParsedObjectSelector() (labels.Selector, error) { return w.objSel, nil }

// parseWebhooks reads every webhook of the collected configurations. An
// unset selector is the empty selector, and an unset matchPolicy is
// Equivalent, as admissionregistration.k8s.io/v1 defaults them.
func parseWebhooks(cfgs []drift.Object) []*parsedWebhook {
	var out []*parsedWebhook
	for _, cfg := range cfgs {
		name := drift.Str(cfg, "metadata", "name")
		var typed admissionv1.MutatingWebhookConfiguration
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cfg, &typed); err != nil {
			out = append(out, &parsedWebhook{config: name, err: fmt.Errorf("read MutatingWebhookConfiguration %s: %w", name, err)})
			continue
		}
		for _, h := range typed.Webhooks {
			w := &parsedWebhook{config: name, hook: h}
			if w.hook.MatchPolicy == nil {
				eq := admissionv1.Equivalent
				w.hook.MatchPolicy = &eq
			}
			w.nsSel, w.err = selectorOf(h.NamespaceSelector)
			if w.err == nil {
				w.objSel, w.err = selectorOf(h.ObjectSelector)
			}
			var decidable []admissionv1.MatchCondition
			for _, c := range w.hook.MatchConditions {
				if readsRequest.MatchString(c.Expression) {
					w.undecidable = append(w.undecidable, c.Name)
				} else {
					decidable = append(decidable, c)
				}
			}
			if len(decidable) > 0 {
				w.conds = compileConditions(decidable)
			}
			out = append(out, w)
		}
	}
	return out
}

// readsRequest matches a CEL expression that reads more than the object and
// the old object: the request (who sent it, its dry-run flag, ...), the
// authorizer, parameters or variables, which a snapshot does not hold.
var readsRequest = regexp.MustCompile(`\b(request|authorizer|params|namespaceObject|variables)\b`)

// conditionEnv is the CEL environment of matchConditions that read only the
// object and the old object, as the API server declares them (dynamic
// values; oldObject is null on a create).
var conditionEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType))
})

// matchConditions are a webhook's compiled matchConditions.
type matchConditions struct {
	progs []cel.Program
	err   error // one could not be compiled here (a Kubernetes CEL library function, a non-boolean result)
}

// compileConditions compiles a webhook's matchConditions.
func compileConditions(conds []admissionv1.MatchCondition) *matchConditions {
	m := &matchConditions{}
	env, err := conditionEnv()
	if err != nil {
		m.err = err
		return m
	}
	for _, c := range conds {
		ast, iss := env.Compile(c.Expression)
		if iss.Err() != nil {
			m.err = fmt.Errorf("%s: %w", c.Name, iss.Err())
			continue
		}
		if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
			m.err = fmt.Errorf("%s: the expression is not boolean", c.Name)
			continue
		}
		prg, err := env.Program(ast)
		if err != nil {
			m.err = fmt.Errorf("%s: %w", c.Name, err)
			continue
		}
		m.progs = append(m.progs, prg)
	}
	return m
}

// eval evaluates the conditions as the API server does before it calls the
// webhook: any false excludes the object; otherwise an error leaves the
// answer open.
func (m *matchConditions) eval(obj, old map[string]any) (held bool, err error) {
	vars := map[string]any{"object": obj, "oldObject": nil}
	if old != nil {
		vars["oldObject"] = old
	}
	err = m.err
	for _, p := range m.progs {
		out, _, e := p.Eval(vars)
		if e != nil {
			err = e
			continue
		}
		if b, ok := out.Value().(bool); ok && !b {
			return false, nil
		} else if !ok {
			err = fmt.Errorf("a condition gave %v, not a boolean", out.Value())
		}
	}
	return err == nil, err
}

// conditionsHold evaluates the webhook's matchConditions on the requests
// that could have admitted the object: a create of Git's object or of the
// live one, and an update from Git's object to the live one. It is false
// when they exclude the object on every one. Conditions that read the
// request or cannot be evaluated here leave the webhook matching, and the
// evidence says so.
func (w *parsedWebhook) conditionsHold(res *drift.Resource) (bool, string) {
	var names []string
	for _, c := range w.hook.MatchConditions {
		names = append(names, c.Name)
	}
	list := strings.Join(names, ", ")
	notEvaluated := ""
	if len(w.undecidable) > 0 {
		notEvaluated = fmt.Sprintf("; %s, which read the request or the authorizer, not evaluated here (the snapshot does not hold them): the webhook is called only when they hold", strings.Join(w.undecidable, ", "))
	}
	if w.conds == nil {
		return true, fmt.Sprintf("it also has %d matchConditions (%s)%s", len(names), list, notEvaluated)
	}
	type request struct {
		what     string
		obj, old map[string]any
	}
	var reqs []request
	if res.Target != nil {
		reqs = append(reqs, request{"a create of Git's object", res.Target, nil})
	}
	if res.Live != nil {
		reqs = append(reqs, request{"a create of the live object", res.Live, nil})
		if res.Target != nil {
			reqs = append(reqs, request{"an update from Git's object to the live one", res.Live, res.Target})
		}
	}
	var firstErr error
	for _, r := range reqs {
		held, err := w.conds.eval(r.obj, r.old)
		if held {
			return true, fmt.Sprintf("its matchConditions (%s) hold on %s (CEL, evaluated on object and oldObject as the API server binds them)%s", list, r.what, notEvaluated)
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return true, fmt.Sprintf("it also has %d matchConditions (%s), which could not be evaluated here (%v): the webhook is called only when they hold", len(names), list, firstErr)
	}
	return false, ""
}

func selectorOf(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// namespaceLabels returns the labels a namespace is known to have, and
// whether its object was collected: the API server sets
// kubernetes.io/metadata.name on every namespace, so that one is always known.
func (in *Input) namespaceLabels(name string) (map[string]string, bool) {
	out := map[string]string{"kubernetes.io/metadata.name": name}
	ns := in.namespaces[name]
	for k, v := range drift.Labels(ns) {
		out[k] = v
	}
	return out, ns != nil
}

// matchingWebhooks returns the mutating webhooks that admit the resource on
// create or update, as the API server decides it. The answer depends on the
// resource alone, so it is worked out once per resource, not per difference.
func (in *Input) matchingWebhooks(ref drift.Ref, res *drift.Resource) []webhookMatch {
	if len(in.webhooks) == 0 {
		return nil
	}
	if m, ok := in.admitted[res]; ok {
		return m
	}
	if in.parsed == nil {
		in.parsed = parseWebhooks(in.webhooks)
		in.admitted = map[*drift.Resource][]webhookMatch{}
	}
	m := in.admit(ref, res)
	in.admitted[res] = m
	return m
}

// admit asks the API server's matchers about every collected webhook.
func (in *Input) admit(ref drift.Ref, res *drift.Resource) []webhookMatch {
	obj := res.Live
	if obj == nil {
		obj = res.Target
	}
	_, version := drift.SplitAPIVersion(drift.Str(obj, "apiVersion"))
	gvk := schema.GroupVersionKind{Group: ref.Group, Version: version, Kind: ref.Kind}
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	if r, ok := irregularResources[ref.Kind]; ok && ref.Group == "" {
		gvr.Resource = r
	}
	var versions []string // the versions the API server serves the resource in, when known
	if crd := in.CRD(ref); crd != nil {
		if p := drift.Str(crd, "spec", "names", "plural"); p != "" {
			gvr.Resource = p
		}
		for _, v := range drift.List(crd, "spec", "versions") {
			if n := drift.Str(v, "name"); n != "" && drift.Lookup(v, "served") != false {
				versions = append(versions, n)
			}
		}
	}
	nsLabels, nsKnown := in.namespaceLabels(ref.Namespace)
	lister := namespaceLister(ref.Namespace, nsLabels)
	nsMatcher := &namespace.Matcher{NamespaceLister: lister}
	var objMatcher object.Matcher

	newObj := &unstructured.Unstructured{Object: obj}
	var oldObj runtime.Object
	if res.Live != nil && res.Target != nil {
		oldObj = &unstructured.Unstructured{Object: res.Target}
	}
	var out []webhookMatch
	for _, w := range in.parsed {
		if w.err != nil {
			continue
		}
		rule, ok := admitsOnWrite(w, gvk, gvr, versions, ref, newObj, oldObj)
		if !ok {
			continue
		}
		attr := attributes(newObj, oldObj, gvk, gvr, ref, admission.Update)
		if ok, err := nsMatcher.MatchNamespaceSelector(w, attr); err != nil || !ok {
			continue
		}
		if ok, err := objMatcher.MatchObjectSelector(w, attr); err != nil || !ok {
			continue
		}
		cfg := drift.Ref{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", Name: w.config}
		ev := []drift.Evidence{{Kind: drift.EvidenceWebhook, Object: &cfg, Webhook: w.hook.Name,
			Text: fmt.Sprintf("MutatingWebhookConfiguration %s (webhook %s) admits this object: rule %s", w.config, w.hook.Name, rule)}}
		if ref.Namespace != "" && !w.nsSel.Empty() {
			where := fmt.Sprintf("Namespace %s (%s)", ref.Namespace, labelsText(nsLabels))
			if !nsKnown {
				where = fmt.Sprintf("Namespace %s (labels not collected; only kubernetes.io/metadata.name known)", ref.Namespace)
			}
			ev = append(ev, drift.Evidence{Kind: drift.EvidenceWebhook, Object: &cfg, Webhook: w.hook.Name,
				Text: fmt.Sprintf("its namespaceSelector %s matches %s", w.nsSel, where)})
		}
		if !w.objSel.Empty() {
			ev = append(ev, drift.Evidence{Kind: drift.EvidenceWebhook, Object: &cfg, Webhook: w.hook.Name,
				Text: fmt.Sprintf("its objectSelector %s matches the object's labels", w.objSel)})
		}
		if len(w.hook.MatchConditions) > 0 {
			held, note := w.conditionsHold(res)
			if !held {
				continue
			}
			ev = append(ev, drift.Evidence{Kind: drift.EvidenceWebhook, Object: &cfg, Webhook: w.hook.Name, Text: note})
		}
		out = append(out, webhookMatch{config: w.config, webhook: w.hook.Name, evidence: ev})
	}
	return out
}

// admitsOnWrite asks the API server's rule matcher whether one of the
// webhook's rules sends a create or an update of the object to it, through
// the object's own version or, under matchPolicy Equivalent, through another
// version of the same resource the API server serves. It returns the rule
// that matched, as text.
func admitsOnWrite(w *parsedWebhook, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, served []string, ref drift.Ref, obj, old runtime.Object) (string, bool) {
	try := []schema.GroupVersionResource{gvr}
	if w.hook.MatchPolicy != nil && *w.hook.MatchPolicy == admissionv1.Equivalent {
		for _, v := range equivalentVersions(w.hook.Rules, gvr, served) {
			try = append(try, schema.GroupVersionResource{Group: gvr.Group, Version: v, Resource: gvr.Resource})
		}
	}
	for _, op := range []admission.Operation{admission.Create, admission.Update} {
		for i, r := range try {
			attr := attributes(obj, old, gvk, r, ref, op)
			for _, rule := range w.hook.Rules {
				m := rules.Matcher{Rule: rule, Attr: attr}
				if !m.Matches() {
					continue
				}
				text := ruleText(rule, gvr)
				if i > 0 {
					text += fmt.Sprintf(" (matchPolicy Equivalent: the API server sends the %s/%s object converted to %s)", gvr.Group, gvr.Version, r.Version)
				}
				return text, true
			}
		}
	}
	return "", false
}

// equivalentVersions lists the other versions of the resource's group that
// the rules name and the API server serves the resource in: under
// matchPolicy Equivalent the API server converts the object to such a
// version and calls the webhook. For a custom resource the served versions
// come from its CRD; for a built-in resource every version a rule names is
// taken as served, and the evidence says which version it was.
func equivalentVersions(rs []admissionv1.RuleWithOperations, gvr schema.GroupVersionResource, served []string) []string {
	seen := map[string]bool{gvr.Version: true}
	var out []string
	for _, r := range rs {
		for _, v := range r.APIVersions {
			if v == "*" || seen[v] {
				continue
			}
			if served != nil && !contains(served, v) {
				continue
			}
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

func attributes(obj, old runtime.Object, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, ref drift.Ref, op admission.Operation) admission.Attributes {
	if op == admission.Create {
		old = nil
	}
	return admission.NewAttributesRecord(obj, old, gvk, ref.Namespace, ref.Name, gvr, "", op, nil, false, nil)
}

// namespaceLister serves the API server's namespace matcher the one
// namespace it asks about, with the labels known for it.
func namespaceLister(name string, l map[string]string) v1.NamespaceLister {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if name != "" {
		_ = idx.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}})
	}
	return v1.NewNamespaceLister(idx)
}

// irregularResources are the built-in kinds whose resource name is not the
// guessed plural of the kind.
var irregularResources = map[string]string{"Endpoints": "endpoints"}

// ruleText renders the request a rule admits for evidence, "apps/v1
// deployments on CREATE, UPDATE", and the rule's own words where it admits
// it through a wildcard.
func ruleText(r admissionv1.RuleWithOperations, gvr schema.GroupVersionResource) string {
	g := gvr.Group
	if g == "" {
		g = "core"
	}
	ops := make([]string, len(r.Operations))
	for i, o := range r.Operations {
		ops[i] = string(o)
	}
	text := fmt.Sprintf("%s/%s %s on %s", g, gvr.Version, gvr.Resource, strings.Join(ops, ", "))
	for _, list := range [][]string{r.APIGroups, r.Resources} {
		for _, v := range list {
			if strings.Contains(v, "*") {
				return text + fmt.Sprintf(" (the rule names apiGroups %q, apiVersions %q, resources %q)", r.APIGroups, r.APIVersions, r.Resources)
			}
		}
	}
	return text
}

func labelsText(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + l[k]
	}
	return strings.Join(parts, ", ")
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
