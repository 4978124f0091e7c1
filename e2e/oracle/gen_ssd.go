package oracle

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/driftfix/driftfix/bot/drift"
)

// parseable returns the schema type of an object's kind from the controller's
// schema, or the type deduced from the object for a kind it lacks.
func parseable(o map[string]any) typed.ParseableType {
	p, err := gvkParser()
	if err == nil {
		if pt := p.Type((&unstructured.Unstructured{Object: o}).GroupVersionKind()); pt != nil {
			return *pt
		}
	}
	return typed.DeducedParseableType
}

// fieldSet is the set of fields an apply of o owns.
func fieldSet(o map[string]any) (*fieldpath.Set, error) {
	c := drift.DeepCopy(o).(map[string]any)
	if md, ok := c["metadata"].(map[string]any); ok {
		for _, k := range []string{"name", "namespace", "managedFields", "uid", "resourceVersion", "creationTimestamp", "generation"} {
			delete(md, k)
		}
	}
	delete(c, "apiVersion")
	delete(c, "kind")
	tv, err := parseable(o).FromUnstructured(c)
	if err != nil {
		return nil, err
	}
	return tv.ToFieldSet()
}

func fieldsV1(s *fieldpath.Set) (map[string]any, error) {
	b, err := s.ToJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

func applyEntry(manager string, s *fieldpath.Set) (map[string]any, error) {
	f, err := fieldsV1(s)
	if err != nil {
		return nil, err
	}
	return map[string]any{"manager": manager, "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": f}, nil
}

// dryRunApply is the API server's answer to a server-side apply of git by
// argocd-controller (with force) onto live, where argocd-controller owned
// prev before: Git's fields set, the fields it owned alone and Git no longer
// sets removed (and defaulted again for a built-in kind), what others own
// kept; argocd-controller then owns exactly Git's fields. coOwned are fields
// another applier owns too, which the apply keeps.
func dryRunApply(git, live map[string]any, prev, coOwned *fieldpath.Set, builtin bool) (map[string]any, error) {
	pt := parseable(git)
	strip := func(o map[string]any) map[string]any {
		c := drift.DeepCopy(o).(map[string]any)
		if md, ok := c["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
		return c
	}
	tvLive, err := pt.FromUnstructured(strip(live))
	if err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	tvGit, err := pt.FromUnstructured(strip(git))
	if err != nil {
		return nil, fmt.Errorf("git: %w", err)
	}
	gitSet, err := fieldSet(git)
	if err != nil {
		return nil, err
	}
	merged, err := tvLive.Merge(tvGit)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	removed := prev.Difference(gitSet).Difference(coOwned)
	merged = merged.RemoveItems(removed)
	out, ok := merged.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("dry run: not an object")
	}
	if builtin {
		out = stored(out)
	}
	md, _ := out["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		out["metadata"] = md
	}
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation"} {
		if v, ok := drift.Map(live, "metadata")[k]; ok {
			md[k] = v
		}
	}
	e, err := applyEntry(argoManager, gitSet)
	if err != nil {
		return nil, err
	}
	mf := []any{e}
	for _, m := range drift.List(live, "metadata", "managedFields") {
		if drift.Str(m, "manager") != argoManager {
			mf = append(mf, m)
		}
	}
	md["managedFields"] = mf
	return out, nil
}

const argoManager = "argocd-controller"

// ssaCase is a generated case's server-side apply: whether the application
// compares with Server-Side Diff (else only the resource's own annotation asks
// for ServerSideApply=true), a field an earlier Git set that this one does not
// (owned by argocd-controller alone, or with another applier too), and a
// mutating webhook rewriting an annotation in the dry run.
type ssaCase struct {
	appLevel bool
	prev     map[string]any // the earlier Git argocd-controller applied
	dropped  drift.Pointer
	coOwned  bool
	webhook  bool
}

// droppable are fields an earlier Git may have set, per kind, with a value.
var droppable = map[string][]struct {
	path  string
	value any
}{
	"Deployment":  {{"spec/revisionHistoryLimit", 10}, {"spec/template/spec/terminationGracePeriodSeconds", 60}, {"spec/progressDeadlineSeconds", 600}},
	"StatefulSet": {{"spec/revisionHistoryLimit", 10}, {"spec/podManagementPolicy", "Parallel"}},
	"Service":     {{"spec/sessionAffinity", "None"}, {"spec/publishNotReadyAddresses", true}},
	"ConfigMap":   {{"data/extra", "x"}},
	"Secret":      {{"data/extra", "eA=="}},
	"Gadget":      {{"spec/extra", "x"}},
	"CronJob":     {{"spec/successfulJobsHistoryLimit", 3}, {"spec/suspend", true}},
	"Ingress":     {{"spec/ingressClassName", "nginx"}},
}

func (g *gen) pickSSA(target, live map[string]any) *ssaCase {
	if !g.chance(0.15) || drift.Str(target, "kind") == "Gadget" {
		// A custom kind needs its CRD's schema, which the controller reads
		// from the cluster and the oracle's schema document lacks.
		return nil
	}
	// Git writes each port's protocol, so Git's list items carry the keys
	// the API server merges them by (containerPort or port, and protocol).
	for _, t := range []map[string]any{target} {
		var ptrs []drift.Pointer
		leaves(nil, t, &ptrs)
		for _, p := range ptrs {
			if len(p) >= 3 && p[len(p)-3] == "ports" && (p.Last() == "containerPort" || p.Last() == "port") {
				setAt(append(append(drift.Pointer{}, p[:len(p)-1]...), "protocol"), t, "TCP")
			}
		}
	}
	c := &ssaCase{appLevel: g.chance(0.8), prev: drift.DeepCopy(target).(map[string]any)}
	if c.appLevel {
		g.note("server-side-diff")
	} else {
		g.note("ssa-annotation-only")
		setAt(drift.Pointer{"metadata", "annotations", "argocd.argoproj.io/sync-options"}, target, "ServerSideApply=true")
		setAt(drift.Pointer{"metadata", "annotations", "argocd.argoproj.io/sync-options"}, live, "ServerSideApply=true")
		c.prev = drift.DeepCopy(target).(map[string]any)
	}
	if opts := droppable[drift.Str(target, "kind")]; len(opts) > 0 && g.chance(0.6) {
		o := opts[g.r.IntN(len(opts))]
		p := drift.Pointer(strings.Split(o.path, "/"))
		if _, ok := p[:len(p)-1].Get(target); ok {
			c.dropped = p
			setAt(p, c.prev, o.value)
			setAt(p, live, o.value)
			c.coOwned = g.chance(0.3)
			if c.coOwned {
				g.note("ssa-git-dropped-co-owned")
			} else {
				g.note("ssa-git-dropped")
			}
		}
	}
	c.webhook = g.chance(0.3)
	return c
}

// withTracking is o with the tracking metadata live carries, as the sync
// applied it.
func withTracking(o, live map[string]any) map[string]any {
	c := drift.DeepCopy(o).(map[string]any)
	if v, ok := drift.Annotations(live)["argocd.argoproj.io/tracking-id"]; ok {
		setAt(drift.Pointer{"metadata", "annotations", "argocd.argoproj.io/tracking-id"}, c, v)
	}
	if v, ok := drift.Labels(live)["app.kubernetes.io/instance"]; ok {
		setAt(drift.Pointer{"metadata", "labels", "app.kubernetes.io/instance"}, c, v)
	}
	return c
}

// managedFields are live's entries under server-side apply:
// argocd-controller's apply of the earlier Git, the co-owning applier, and
// the others'.
func (c *ssaCase) managedFields(live map[string]any, others []any) []any {
	set, err := fieldSet(withTracking(c.prev, live))
	if err != nil {
		return others
	}
	e, err := applyEntry(argoManager, set)
	if err != nil {
		return others
	}
	out := []any{e}
	if c.coOwned {
		out = append(out, map[string]any{"manager": "platform-applier", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fieldsFor(c.dropped)})
	}
	return append(out, others...)
}

// finish sets the application's Server-Side Diff options and returns the API
// server's answer to the dry-run apply of Git, or nil when the case cannot
// have one (the application then compares client-side).
func (c *ssaCase) finish(g *gen, app map[string]any, r *drift.Resource, tracking string, builtin bool) drift.Object {
	git := drift.DeepCopy(r.Target).(map[string]any)
	ref := drift.RefOf(git)
	id := fmt.Sprintf("shop:%s/%s:%s/%s", ref.Group, ref.Kind, ref.Namespace, ref.Name)
	if tracking != "label" {
		setAt(drift.Pointer{"metadata", "annotations", "argocd.argoproj.io/tracking-id"}, git, id)
	}
	if tracking != "annotation" {
		setAt(drift.Pointer{"metadata", "labels", "app.kubernetes.io/instance"}, git, "shop")
	}
	if c.webhook {
		setAt(drift.Pointer{"metadata", "annotations", "example.com/injected"}, r.Live, "v1")
	}
	prev, err := fieldSet(withTracking(c.prev, r.Live))
	if err != nil {
		return nil
	}
	co := &fieldpath.Set{}
	if c.coOwned {
		if s, err := fieldSet(onlyAt(c.prev, c.dropped)); err == nil {
			co = s
		}
	}
	dry, err := dryRunApply(git, r.Live, prev, co, builtin)
	if err != nil {
		return nil
	}
	if c.webhook {
		g.note("ssd-webhook")
		setAt(drift.Pointer{"metadata", "annotations", "example.com/injected"}, dry, "v2")
	}
	if !c.appLevel {
		return dry
	}
	if g.chance(0.3) {
		ann := "ServerSideDiff=true"
		if g.chance(0.4) {
			ann += ",IncludeMutationWebhook=true"
			g.note("include-mutation-webhook")
		}
		setAt(drift.Pointer{"metadata", "annotations", "argocd.argoproj.io/compare-options"}, app, ann)
	} else {
		setAt(drift.Pointer{"spec", "syncPolicy", "syncOptions"}, app, []any{"ServerSideApply=true"})
	}
	return dry
}

// onlyAt is o with only the value at p (and the maps on the way).
func onlyAt(o map[string]any, p drift.Pointer) map[string]any {
	out := map[string]any{"apiVersion": o["apiVersion"], "kind": o["kind"]}
	if v, ok := p.Get(o); ok {
		setAt(p, out, v)
	}
	return out
}

// resourceJSON is a generated resource as a snapshot file writes it.
func resourceJSON(r drift.Resource) map[string]any {
	m := map[string]any{"target": r.Target, "live": r.Live}
	if r.DryRun != nil {
		m["dryRun"] = r.DryRun
	}
	return m
}
