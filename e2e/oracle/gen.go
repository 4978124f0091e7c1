package oracle

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	gescheme "github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube/scheme"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/driftfix/driftfix/bot/drift"
)

// Case is one generated comparison: a one-resource application snapshot and
// the features it was built from, which name its class when the two diffs
// disagree.
type Case struct {
	Snapshot *drift.Snapshot
	Features []string
}

// Class names the case's kind of input: the kind and what was varied.
func (c Case) Class() string { return strings.Join(c.Features, " ") }

// Generate builds case n of the seeded sequence: the same seed and n always
// give the same case.
func Generate(seed uint64, n int) Case {
	g := &gen{r: rand.New(rand.NewPCG(seed, uint64(n)))}
	c := g.build(n)
	// Through the snapshot parser, so values have the types a snapshot file
	// gives them.
	b, err := json.Marshal(map[string]any{
		"apiVersion": "driftfix/v1", "kind": "Snapshot",
		"application": c.Snapshot.Application, "cluster": c.Snapshot.Cluster,
		"resources": []any{resourceJSON(c.Snapshot.Resources[0])},
	})
	if err != nil {
		panic(err)
	}
	s, err := drift.ParseSnapshot(b)
	if err != nil {
		panic(fmt.Sprintf("generated case %d does not parse: %v", n, err))
	}
	c.Snapshot = s
	return c
}

type gen struct {
	r    *rand.Rand
	feat []string
}

func (g *gen) note(f string) { g.feat = append(g.feat, f) }

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// base objects: built-in kinds the API server's scheme knows, and a custom
// kind it does not.
func (g *gen) base(name string) (map[string]any, string) {
	kind := g.pick("Deployment", "Service", "ConfigMap", "Secret", "ClusterRole", "Gadget", "CronJob", "Ingress", "StatefulSet")
	g.note(kind)
	cpu := g.pick("100m", "0.1", "1", "1000m", "250m", "2")
	mem := g.pick("64Mi", "128Mi", "1Gi", "1024Mi", "0.5Gi", "512M")
	ctr := map[string]any{
		"name":  "app",
		"image": g.pick("nginx:1.27", "registry.example.com/app@sha256:"+strings.Repeat("a", 64)),
		"resources": map[string]any{
			"limits":   map[string]any{"cpu": cpu, "memory": mem},
			"requests": map[string]any{"cpu": g.pick("50m", "0.05", "100m")},
		},
		"ports": []any{map[string]any{"containerPort": g.pick2int(8080, 80), "name": "http"}},
		"env":   []any{map[string]any{"name": "MODE", "value": g.pick("prod", "1", "true")}},
	}
	podSpec := map[string]any{"containers": []any{ctr}}
	labels := map[string]any{"app": name}
	meta := map[string]any{"name": name, "namespace": "shop"}
	switch kind {
	case "Deployment", "StatefulSet":
		spec := map[string]any{
			"replicas": g.pick2int(1, 3),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec},
		}
		if kind == "StatefulSet" {
			spec["serviceName"] = name
		}
		return map[string]any{"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}, ""
	case "CronJob":
		podSpec["restartPolicy"] = "OnFailure"
		return map[string]any{"apiVersion": "batch/v1", "kind": kind, "metadata": meta, "spec": map[string]any{
			"schedule":    g.pick("*/5 * * * *", "0 3 * * *"),
			"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": podSpec}}},
		}}, ""
	case "Service":
		var target any = 8080
		if g.chance(0.5) {
			target = "http"
		}
		return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": meta, "spec": map[string]any{
			"selector": labels,
			"ports":    []any{map[string]any{"port": 80, "targetPort": target, "name": "http"}},
		}}, ""
	case "ConfigMap":
		return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": meta, "data": map[string]any{"a": "1", "b": g.pick("x", "true", "2.0")}}, ""
	case "Secret":
		o := map[string]any{"apiVersion": "v1", "kind": kind, "metadata": meta, "type": "Opaque"}
		if g.chance(0.5) {
			o["data"] = map[string]any{"token": "c2VjcmV0"}
		} else {
			o["stringData"] = map[string]any{"token": "secret"}
		}
		return o, ""
	case "ClusterRole":
		delete(meta, "namespace")
		o := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta}
		if g.chance(0.3) {
			g.note("aggregated")
			o["aggregationRule"] = map[string]any{"clusterRoleSelectors": []any{map[string]any{"matchLabels": map[string]any{"agg": "true"}}}}
		} else {
			o["rules"] = []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get", "list"}}}
		}
		return o, ""
	case "Ingress":
		return map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": kind, "metadata": meta, "spec": map[string]any{
			"rules": []any{map[string]any{"host": "shop.example.com", "http": map[string]any{"paths": []any{map[string]any{
				"path": "/", "pathType": "Prefix",
				"backend": map[string]any{"service": map[string]any{"name": name, "port": map[string]any{"number": 80}}},
			}}}}},
		}}, ""
	default: // Gadget
		return map[string]any{"apiVersion": "diff.example.com/v1", "kind": "Gadget", "metadata": meta, "spec": map[string]any{
			"size":   g.pick2int(1, 3),
			"limits": map[string]any{"cpu": cpu, "memory": mem},
			"tags":   []any{"a", "b"},
			"port":   g.pick2int(80, 8080),
		}}, "diff.example.com"
	}
}

func (g *gen) pick2int(a, b int) any {
	if g.chance(0.5) {
		return a
	}
	return b
}

// leaves lists the pointer of every scalar of o (maps and lists walked).
func leaves(prefix drift.Pointer, v any, out *[]drift.Pointer) {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			leaves(append(append(drift.Pointer{}, prefix...), k), y, out)
		}
	case []any:
		for i, y := range x {
			leaves(append(append(drift.Pointer{}, prefix...), fmt.Sprint(i)), y, out)
		}
	default:
		*out = append(*out, prefix)
	}
}

func (g *gen) build(n int) Case {
	name := fmt.Sprintf("g%d", n)
	target, group := g.base(name)
	live := drift.DeepCopy(target).(map[string]any)
	if sd, ok := live["stringData"].(map[string]any); ok {
		// The API server stores stringData into data, base64-encoded.
		live["data"] = map[string]any{"token": "c2VjcmV0"}
		delete(live, "stringData")
		_ = sd
	}

	// The API server stores a built-in kind decoded into its type (known
	// fields only, quantities in canonical form) with the scheme's defaults
	// filled in: Kubernetes' own defaulters, as Argo CD's scheme has them.
	if group == "" {
		live = stored(live)
	} else if g.chance(0.6) {
		g.note("server-defaults")
		setAt(drift.Pointer{"spec", "mode"}, live, "auto")
	}

	// What Git declares that is then changed live (or stored otherwise).
	var specLeaves []drift.Pointer
	for _, top := range []string{"spec", "data", "rules"} {
		if v, ok := target[top]; ok {
			leaves(drift.Pointer{top}, v, &specLeaves)
		}
	}
	// Sorted, so the same seed and n give the same case (maps iterate in
	// random order).
	sort.Slice(specLeaves, func(i, j int) bool { return specLeaves[i].String() < specLeaves[j].String() })
	var mutated drift.Pointer
	switch m := g.pick("none", "none", "leaf", "leaf", "int-string", "quantity", "git-extra", "live-drop", "empty-map", "null", "empty-list", "label"); m {
	case "none":
		g.note("in-sync")
	case "leaf":
		if len(specLeaves) > 0 {
			p := specLeaves[g.r.IntN(len(specLeaves))]
			old, _ := p.Get(live)
			setAt(p, live, changed(old))
			mutated = p
			g.note("changed-leaf")
		}
	case "int-string":
		// Git writes a number as a string or a string as a number, where a
		// custom resource's schema (int-or-string) lets the API server keep it.
		if len(specLeaves) > 0 && group != "" {
			p := specLeaves[g.r.IntN(len(specLeaves))]
			v, _ := p.Get(target)
			switch x := v.(type) {
			case int, float64:
				setAt(p, target, fmt.Sprint(x))
				g.note("git-number-as-string")
			case string:
				var f float64
				if _, err := fmt.Sscan(x, &f); err == nil && !strings.ContainsAny(x, "mMiGK") {
					setAt(p, target, f)
					g.note("git-string-as-number")
				} else {
					g.note("in-sync")
				}
			}
			mutated = p
		}
	case "quantity":
		// The same quantity written another way in Git.
		for _, p := range specLeaves {
			v, _ := p.Get(target)
			if s, ok := v.(string); ok {
				if alt, ok := quantityAlt[s]; ok {
					setAt(p, target, alt)
					mutated = p
					g.note("quantity-form")
					break
				}
			}
		}
	case "git-extra":
		// Git declares a field live does not have (dropped or pruned).
		p := drift.Pointer{"metadata", "annotations", "example.com/note"}
		if g.chance(0.5) {
			if _, ok := target["spec"].(map[string]any); ok {
				p = drift.Pointer{"spec", "extraField"}
			}
		}
		setAt(p, target, "x")
		mutated = p
		g.note("git-extra-field")
	case "live-drop":
		if len(specLeaves) > 0 {
			p := specLeaves[g.r.IntN(len(specLeaves))]
			if mergeKeys[p.Last()] {
				// the API server refuses a list item without its merge key
				break
			}
			p.Delete(live)
			mutated = p
			g.note("live-missing-leaf")
		}
	case "empty-map":
		p := g.pick("metadata/annotations", "metadata/labels", "data", "spec/template/metadata/annotations", "spec/nodeSelector")
		ptr := drift.Pointer(strings.Split(p, "/"))
		if parent, ok := ptr[:len(ptr)-1].Get(target); ok || len(ptr) == 1 {
			if _, isMap := parent.(map[string]any); isMap || len(ptr) == 1 {
				if _, exists := ptr.Get(target); !exists {
					setAt(ptr, target, map[string]any{})
					g.note("git-empty-map:" + p)
					mutated = ptr
				}
			}
		}
	case "null":
		p := g.pick("metadata/annotations", "spec/strategy", "data", "spec/template/spec/nodeSelector")
		ptr := drift.Pointer(strings.Split(p, "/"))
		if parent, ok := ptr[:len(ptr)-1].Get(target); ok || len(ptr) == 1 {
			if _, isMap := parent.(map[string]any); isMap || len(ptr) == 1 {
				if _, exists := ptr.Get(target); !exists {
					setAt(ptr, target, nil)
					g.note("git-null:" + p)
					mutated = ptr
				}
			}
		}
	case "empty-list":
		p := drift.Pointer{"spec", "template", "spec", "containers", "0", "args"}
		if _, ok := p[:len(p)-1].Get(target); ok {
			setAt(p, target, []any{})
			g.note("git-empty-list")
			mutated = p
		}
	case "label":
		// Another writer adds a label live.
		setAt(drift.Pointer{"metadata", "labels", "team"}, live, "x")
		g.note("live-extra-label")
	}

	// Every write to a built-in object is stored through its type again.
	if group == "" {
		live = stored(live)
	}

	// The tracking metadata Argo CD wrote at the last sync.
	tracking := g.pick("annotation", "label", "annotation+label")
	g.note("tracking:" + tracking)
	cmData := map[string]any{}
	if tracking != "annotation" || g.chance(0.5) {
		cmData["application.resourceTrackingMethod"] = tracking
	}
	if tracking != "annotation" {
		setAt(drift.Pointer{"metadata", "labels", "app.kubernetes.io/instance"}, live, "shop")
	}
	if tracking != "label" {
		ns := drift.Str(target, "metadata", "namespace")
		tgroup, _ := drift.SplitAPIVersion(drift.Str(target, "apiVersion"))
		setAt(drift.Pointer{"metadata", "annotations", "argocd.argoproj.io/tracking-id"}, live,
			fmt.Sprintf("shop:%s/%s:%s/%s", tgroup, drift.Str(target, "kind"), ns, name))
	}

	// Server-side apply: the application compares with Server-Side Diff, or
	// only the resource asks for ServerSideApply=true in its own annotation.
	// A server-side sync writes no last-applied.
	ssa := g.pickSSA(target, live)
	la := g.pick("absent", "absent", "current", "current", "stale", "empty", "invalid", "empty-map")
	if ssa != nil {
		la = "absent"
	}
	if tracking == "annotation" && la != "stale" && g.chance(0.1) {
		// Label tracking before: live still carries the instance label, and
		// last-applied (if any) is from the label days; Argo CD normalizes
		// both away under annotation tracking.
		g.note("label-to-annotation")
		cmData["application.resourceTrackingMethod"] = "annotation"
		setAt(drift.Pointer{"metadata", "labels", "app.kubernetes.io/instance"}, live, "shop")
		if g.chance(0.5) {
			delete(drift.Map(live, "metadata", "annotations"), "argocd.argoproj.io/tracking-id")
		}
	}
	// kubectl's last-applied annotation, as a client-side sync writes it.
	switch la {
	case "current":
		g.note("last-applied")
		applied := target
		if _, ok := drift.Labels(live)["app.kubernetes.io/instance"]; ok && tracking == "annotation" {
			applied = drift.DeepCopy(target).(map[string]any)
			setAt(drift.Pointer{"metadata", "labels", "app.kubernetes.io/instance"}, applied, "shop")
		}
		setLastApplied(live, applied)
	case "stale":
		// Git has since removed a field the last sync applied.
		g.note("last-applied-stale")
		old := drift.DeepCopy(target).(map[string]any)
		setAt(drift.Pointer{"metadata", "labels", "old"}, old, "1")
		setAt(drift.Pointer{"metadata", "labels", "old"}, live, "1")
		setLastApplied(live, old)
	case "empty":
		g.note("last-applied-empty")
		setAt(drift.Pointer{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}, live, "{}")
	case "invalid":
		g.note("last-applied-invalid")
		setAt(drift.Pointer{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}, live, "{not json")
	case "empty-map":
		// Git and last-applied both write an empty (or null) map; another
		// writer has since put a key there live (argo-cd#3150).
		p := drift.Pointer(strings.Split(g.pick("spec/template/metadata/annotations", "data", "metadata/labels", "metadata/annotations", "spec/selector", "spec/template/spec/nodeSelector"), "/"))
		kind := drift.Str(target, "kind")
		if p[0] == "data" && kind != "ConfigMap" && kind != "Secret" || p.String() == "/spec/selector" && kind != "Service" {
			break // a field the kind does not have
		}
		parent, ok := p[:len(p)-1].Get(target)
		if _, isMap := parent.(map[string]any); !ok || !isMap {
			break
		}
		if _, exists := p.Get(target); exists {
			break
		}
		var empty any = map[string]any{}
		form := "empty"
		if g.chance(0.3) {
			empty, form = nil, "null"
		}
		setAt(p, target, empty)
		g.note("last-applied-" + form + "-map:" + p.String())
		setLastApplied(live, target)
		setAt(append(append(drift.Pointer{}, p...), "other"), live, "eA==")
	}

	// Who wrote what: the sync's manager owns what Git declares, another
	// manager what the mutation changed.
	other := g.pick("kube-controller-manager", "kubectl-edit", "hpa-controller", "mutator")
	managed := []any{
		map[string]any{"manager": "argocd-controller", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{}}}},
	}
	if _, inLive := mutated.Get(live); mutated != nil && inLive && !hasIndex(mutated) {
		managed = append(managed, map[string]any{"manager": other, "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
			"fieldsV1": fieldsFor(mutated)})
	}
	if ssa != nil {
		managed = ssa.managedFields(live, managed[1:])
	}
	setAt(drift.Pointer{"metadata", "managedFields"}, live, managed)
	md := live["metadata"].(map[string]any)
	md["uid"] = "00000000-0000-0000-0000-000000000001"
	md["resourceVersion"] = "100"
	md["creationTimestamp"] = "2026-01-01T00:00:00Z"
	md["generation"] = 2

	app := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "shop", "namespace": "argocd"},
		"spec": map[string]any{
			"project":     "default",
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "shop"},
			"source":      map[string]any{"repoURL": "https://git.example.com/shop.git", "path": "shop", "targetRevision": "main"},
		},
	}
	if rule := g.rule(target, mutated, group, other); rule != nil && !(ssa != nil && ssa.appLevel && rule["managedFieldsManagers"] != nil) {
		// (A managers rule changes the manifest the controller sends to the
		// dry run; a recorded dry-run answer cannot follow it.)
		setAt(drift.Pointer{"spec", "ignoreDifferences"}, app, []any{rule})
	}
	if group != "" && g.chance(0.3) {
		// A knownTypeFields customization types a custom field as a Kubernetes type.
		cmData["resource.customizations.knownTypeFields.diff.example.com_Gadget"] = "- field: spec.limits\n  type: core/v1/ResourceList\n"
		g.note("knownTypeFields")
	}
	if g.chance(0.15) {
		cmData["resource.compareoptions"] = "ignoreAggregatedRoles: true\n"
		g.note("ignoreAggregatedRoles")
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"}, "data": cmData}
	res := drift.Resource{Target: target, Live: live}
	if ssa != nil {
		res.DryRun = ssa.finish(g, app, &res, tracking, group == "")
	}
	return Case{
		Snapshot: &drift.Snapshot{Application: app, Resources: []drift.Resource{res}, Cluster: []drift.Object{cm}},
		Features: g.feat,
	}
}

// rule draws an ignore rule for the application, or none: a JSON pointer or
// jq expression on the changed path or elsewhere, one that fails at run time
// or does not parse, a managers rule, with exact or glob group and kind.
func (g *gen) rule(target map[string]any, mutated drift.Pointer, group, other string) map[string]any {
	if !g.chance(0.45) {
		return nil
	}
	kind := drift.Str(target, "kind")
	r := map[string]any{"kind": kind}
	if group != "" || strings.Contains(drift.Str(target, "apiVersion"), "/") {
		r["group"] = strings.Split(drift.Str(target, "apiVersion"), "/")[0]
	}
	if g.chance(0.2) {
		r["kind"] = kind[:2] + "*"
		g.note("rule-kind-glob")
	}
	if g.chance(0.2) {
		r["name"] = drift.Str(target, "metadata", "name")
	}
	p := mutated
	if p == nil || g.chance(0.3) {
		p = drift.Pointer{"spec", "unrelated"}
	}
	switch f := g.pick("pointer", "pointer", "jq", "jq-error", "jq-parse", "managers"); f {
	case "pointer":
		r["jsonPointers"] = []any{p.String()}
	case "jq":
		r["jqPathExpressions"] = []any{jqOf(p)}
	case "jq-error":
		r["jqPathExpressions"] = []any{jqOf(p) + ` | error("boom")`}
	case "jq-parse":
		r["jqPathExpressions"] = []any{".spec[" + "unclosed"}
	case "managers":
		r["managedFieldsManagers"] = []any{g.pick(other, "someone-else")}
	}
	g.note("rule:" + strings.Join(keysOf(r), ","))
	return r
}

func keysOf(m map[string]any) []string {
	var out []string
	for _, k := range []string{"group", "name", "jsonPointers", "jqPathExpressions", "managedFieldsManagers"} {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

func jqOf(p drift.Pointer) string {
	var b strings.Builder
	for _, s := range p {
		var i int
		if _, err := fmt.Sscan(s, &i); err == nil && fmt.Sprint(i) == s {
			fmt.Fprintf(&b, "[%d]", i)
		} else {
			fmt.Fprintf(&b, "[%q]", s)
		}
	}
	return "." + strings.TrimPrefix(b.String(), "")
}

// fieldsFor is a managedFields set holding exactly p.
func fieldsFor(p drift.Pointer) map[string]any {
	root := map[string]any{}
	cur := root
	for _, s := range p {
		next := map[string]any{}
		var i int
		if _, err := fmt.Sscan(s, &i); err == nil && fmt.Sprint(i) == s {
			// list elements are keyed by value in FieldsV1; a generic
			// placeholder keeps the set well formed.
			cur[`i:`+s] = next
		} else {
			cur["f:"+s] = next
		}
		cur = next
	}
	cur["."] = map[string]any{}
	return root
}

var mergeKeys = map[string]bool{"name": true, "containerPort": true, "port": true}

var quantityAlt = map[string]string{
	"100m": "0.1", "0.1": "100m", "1": "1000m", "1000m": "1", "250m": "0.25", "2": "2000m",
	"1Gi": "1024Mi", "1024Mi": "1Gi", "64Mi": "65536Ki", "128Mi": "131072Ki", "512M": "0.5G",
	"50m": "0.05", "0.05": "50m",
}

func changed(v any) any {
	switch x := v.(type) {
	case string:
		if _, err := resource.ParseQuantity(x); err == nil {
			// still a quantity, which the API server would accept
			return "777m"
		}
		return x + "-live"
	case int:
		return x + 1
	case int64:
		return x + 1
	case int32:
		return x + 1
	case float64:
		return x + 1
	case bool:
		return !x
	}
	return "changed"
}

// stored is a built-in object as the API server stores it: decoded into its
// Go type, defaulted by the scheme's defaulters, encoded again.
func stored(o map[string]any) map[string]any {
	u := &unstructured.Unstructured{Object: o}
	obj, err := gescheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return o
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, obj); err != nil {
		return o
	}
	gescheme.Scheme.Default(obj)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return o
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return m
}

func setLastApplied(live, applied map[string]any) {
	c := drift.DeepCopy(applied).(map[string]any)
	b, _ := json.Marshal(c)
	setAt(drift.Pointer{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}, live, string(b))
}

// setAt sets the value p names in doc, creating the maps on the way; a list
// index must exist.
func setAt(p drift.Pointer, doc map[string]any, v any) {
	var cur any = doc
	for i, tok := range p {
		last := i == len(p)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[tok] = v
				return
			}
			next, ok := c[tok]
			if !ok || next == nil {
				next = map[string]any{}
				c[tok] = next
			}
			cur = next
		case []any:
			var j int
			if _, err := fmt.Sscan(tok, &j); err != nil || j < 0 || j >= len(c) {
				return
			}
			if last {
				c[j] = v
				return
			}
			cur = c[j]
		default:
			return
		}
	}
}

// hasIndex says p passes through a list item: a managedFields set names one
// by its key or value, which the generator does not write.
func hasIndex(p drift.Pointer) bool {
	for _, t := range p {
		if t != "" && strings.Trim(t, "0123456789") == "" {
			return true
		}
	}
	return false
}
