package classifiers

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// This file is driftfix's one model of who wrote a field. A field manager is
// placed as a controller, a person or nobody known, from, in order: the
// policy's writers (a platform lead's word), the writer catalog
// (bot/drift/writers.yaml: a name, which any client can take: a claim), and what Kubernetes shows of the writer in
// general (it writes the object's status, it runs in a container of the
// cluster as a program of that name, it keeps another object that references
// this one). What is only claimed may name a cause; only a rule that says the
// writer owns the path (the catalog's or the policy's owns, or a field
// Kubernetes' design hands to another writer) lets a fix hand it over.

// lookupWriter returns the first entry for a manager: the policy's writers,
// then the catalog.
func lookupWriter(policy []drift.Writer, manager string) *drift.Writer {
	for i := range policy {
		if policy[i].MatchesManager(manager) {
			return &policy[i]
		}
	}
	return drift.CatalogWriter(manager)
}

// IsManualManager reports whether the catalog places a field manager as a
// person or a person's tool (the kubectl family, dashboards, argocd-server,
// the helm CLI). A policy may place more; Input.isPerson asks it too.
func IsManualManager(m string) bool {
	w := lookupWriter(nil, m)
	return w != nil && w.Is == drift.WriterPerson
}

// isPerson is IsManualManager with the policy's writers first.
func (in *Input) isPerson(m string) bool {
	w := lookupWriter(in.Sensitivity.Writers, m)
	return w != nil && w.Is == drift.WriterPerson
}

// genericManager reports whether a field manager names no one program: a
// person's tool, a client library's default name, or an applier of whole
// objects (a controller that owns no path and is neither Argo CD's nor
// Kubernetes' own). A managedFieldsManagers rule for it hides whatever
// anyone writes with it.
func genericManager(m string) bool {
	w := lookupWriter(nil, m)
	return w != nil && (w.Is != drift.WriterController || (len(w.Owns) == 0 && w.Part == ""))
}

// placement is what driftfix knows of one writer of one path.
type placement struct {
	is drift.WriterKind // "" when nothing places it
	// grant is the rule that lets the writer keep the path, "" when none.
	grant string
	// shown is what Kubernetes shows of the writer; claimed is what the
	// writer says of itself (its name, owner references, names of things).
	shown, claimed []string
}

// evidence returns the placement's evidence lines, claims marked as such.
func (p placement) evidence() []string {
	out := append([]string{}, p.shown...)
	for _, c := range p.claimed {
		out = append(out, c+" (claimed: the writer sets this itself, so it names a cause but proves nothing)")
	}
	return out
}

// place decides what the writer o of the case's path is.
func (c *Case) place(o drift.Owner) placement {
	var p placement
	d := c.Diff
	if lm, v, ok := c.labelledBy(); ok && c.isPerson(o.Manager) {
		return placement{is: drift.WriterController, shown: []string{labelledEvidence(lm, v).Text}}
	}
	if s := c.shownByRBAC(o.Manager); s != "" && c.isPerson(o.Manager) {
		return placement{is: drift.WriterController, shown: []string{s}}
	}
	w := lookupWriter(c.Sensitivity.Writers, o.Manager)
	var op drift.OwnedPath
	owns := false
	if w != nil {
		op, owns = w.OwnsPath(d.Resource, d.Path)
	}
	if w != nil && !w.Policy && w.Is == drift.WriterController && len(w.Owns) > 0 && !owns {
		// A documented component's name is no evidence outside the fields
		// it is documented to write: anyone can take the name.
		w = nil
	}
	if w != nil {
		p.is = w.Is
		if w.Policy {
			p.shown = append(p.shown, fmt.Sprintf("the policy's writers place %s as a %s (%s)", o.Manager, w.Is, w.Source))
		} else {
			p.claimed = append(p.claimed, fmt.Sprintf("%s is the field manager name of %s", o.Manager, w.Component))
		}
		if w.Is == drift.WriterController && owns {
			who := fmt.Sprintf("the writer catalog documents %s as the owner of %s", o.Manager, op.Text)
			if w.Policy {
				who = fmt.Sprintf("the policy's writers say %s owns %s", o.Manager, op.Text)
			}
			p.grant = who + " (" + w.Source + ")"
		}
		if w.Is == drift.WriterPerson {
			return p
		}
	}
	design := c.designGrant()
	if p.grant == "" {
		p.grant = design
	}
	if o.Subresource == "scale" {
		p.shown = append(p.shown, fmt.Sprintf("%s writes through the scale subresource, as an autoscaler does", o.Manager))
	}
	p.shown = append(p.shown, c.shownController(o.Manager)...)
	if design != "" {
		p.shown = append(p.shown, design)
	}
	p.claimed = append(p.claimed, c.claimedController(o.Manager)...)
	if (p.is == "" || p.is == drift.WriterClient) && len(p.shown)+len(p.claimed) > 0 {
		if p.is == drift.WriterClient && len(p.shown) == 0 {
			return p // a library's default name and a name that matches: nothing shown
		}
		p.is = drift.WriterController
	}
	if p.is != drift.WriterController {
		p.grant = ""
	}
	return p
}

// designGrant returns the rule by which Kubernetes' design hands the case's
// path to a writer other than the one who applies the object, whoever that
// writer is: the CA bundle of a webhook, a conversion webhook or an
// aggregated API (written by the server behind it or a CA injector), and the
// rules of a ClusterRole whose aggregationRule Git declares.
func (c *Case) designGrant() string {
	d := c.Diff
	p := d.Path.String()
	switch {
	case d.Resource.Group == "admissionregistration.k8s.io" && (d.Resource.Kind == "MutatingWebhookConfiguration" || d.Resource.Kind == "ValidatingWebhookConfiguration") &&
		len(d.Path) == 4 && d.Path[0] == "webhooks" && strings.HasSuffix(p, "/clientConfig/caBundle"),
		d.Resource.Group == "apiextensions.k8s.io" && p == "/spec/conversion/webhook/clientConfig/caBundle",
		d.Resource.Group == "apiregistration.k8s.io" && p == "/spec/caBundle":
		return "a caBundle is written, by design, by the server it trusts or by a CA injector, which rotate the certificate"
	case d.Resource.Group == "rbac.authorization.k8s.io" && d.Resource.Kind == "ClusterRole" && d.Path.HasPrefix(drift.Pointer{"rules"}) &&
		drift.Map(c.Resource().Target, "aggregationRule") != nil:
		return "the ClusterRole's aggregationRule, which Git declares, has Kubernetes fill its rules"
	}
	return ""
}

// shownController returns what Kubernetes shows of manager as a controller
// of this object: each line is a general rule with its own table test.
func (c *Case) shownController(manager string) []string {
	var out []string
	for _, rule := range []func(*Case, string) string{
		(*Case).writesStatus,
		(*Case).writesCertificates,
		(*Case).runsAsProgram,
		(*Case).keepsAReferrer,
	} {
		if s := rule(c, manager); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// claimedController returns what the object or the cluster says of manager
// that the writer could have set itself.
func (c *Case) claimedController(manager string) []string {
	var out []string
	for _, ref := range drift.List(c.Resource().Live, "metadata", "ownerReferences") {
		if drift.Lookup(ref, "controller") == true {
			out = append(out, fmt.Sprintf("the object names %s %s its controller (ownerReferences, controller: true)", drift.Str(ref, "kind"), drift.Str(ref, "name")))
			break
		}
	}
	if wl := c.workloadNamed(manager); wl != "" {
		out = append(out, fmt.Sprintf("%s is named like the writer", wl))
	}
	return out
}

// managedEntries returns the live object's managedFields entries of manager.
func managedEntries(o drift.Object, manager string) []map[string]any {
	var out []map[string]any
	for _, e := range drift.List(o, "metadata", "managedFields") {
		m := drift.Map(e)
		if drift.Str(m, "manager") == manager {
			out = append(out, m)
		}
	}
	return out
}

// writesStatus: controllers write the status of the objects they reconcile;
// an entry of the same manager on the object's status says it keeps the object.
func (c *Case) writesStatus(manager string) string {
	for _, e := range managedEntries(c.Resource().Live, manager) {
		if drift.Str(e, "subresource") == "status" || drift.Map(e, "fieldsV1", "f:status") != nil {
			return fmt.Sprintf("%s also writes this object's status, which the controller that reconciles an object writes", manager)
		}
	}
	return ""
}

// certificateFields are the managedFields keys of certificate material.
var certificateFields = map[string]bool{"f:caBundle": true, "f:tls.crt": true, "f:ca.crt": true}

// writesCertificates: the same entry of the manager also writes certificate
// material of this object (a CA bundle, a TLS certificate): what a CA
// injector or a server that makes its own certificate does.
func (c *Case) writesCertificates(manager string) string {
	if strings.Contains(c.Diff.Path.String(), "caBundle") {
		return "" // the path itself; the design rule says it
	}
	for _, e := range managedEntries(c.Resource().Live, manager) {
		if hasKey(drift.Map(e, "fieldsV1"), certificateFields, 0) {
			return fmt.Sprintf("%s also writes certificate material of this object (a CA bundle or a TLS certificate), as a CA injector or a webhook server making its own certificate does", manager)
		}
	}
	return ""
}

func hasKey(m map[string]any, keys map[string]bool, depth int) bool {
	if depth > 32 {
		return false
	}
	for k, v := range m {
		if keys[k] {
			return true
		}
		if sub, ok := v.(map[string]any); ok && hasKey(sub, keys, depth+1) {
			return true
		}
	}
	return false
}

// writerIndex answers, for every field manager at once, what the cluster
// context says of a program, workload or referrer of that name: built once
// per diagnosis, on first use, where each question used to read every
// object of the context again.
type writerIndex struct {
	// programs: a container's program base name, with the evidence of the
	// first container running it (runsAsProgram).
	programs map[string]string
	// workloads: the first Deployment, StatefulSet or DaemonSet named so,
	// or running a container named so (workloadNamed).
	workloads map[string]string
	// referrers: the objects whose spec.workloadRef or spec.scaleTargetRef
	// names an object, by its kind, namespace and name (keepsAReferrer).
	referrers map[referent][]referrer
}

// referent is an object another names: its kind, namespace and name.
type referent struct{ kind, namespace, name string }

// referrer is an object of the context naming another in field.
type referrer struct {
	o     drift.Object
	field string
}

// writers returns the index of the cluster context, building it once.
func (in *Input) writers() *writerIndex {
	in.writersOnce.Do(func() {
		x := newWriterIndex()
		for _, o := range in.context {
			x.add(o)
		}
		in.writerIdx = x
	})
	return in.writerIdx
}

func newWriterIndex() *writerIndex {
	return &writerIndex{programs: map[string]string{}, workloads: map[string]string{}, referrers: map[referent][]referrer{}}
}

// add indexes one object of the context, in order (the first of a name
// wins). A referrer keeps only what keepsAReferrer reads of it: its
// identity and its managed fields' managers, subresources and whether they
// hold the status.
func (x *writerIndex) add(o drift.Object) {
	if spec, ok := podSpec(o); ok {
		for _, list := range []string{"containers", "initContainers"} {
			for _, ct := range drift.List(spec, list) {
				prog := ""
				if cmd := drift.List(ct, "command"); len(cmd) > 0 {
					prog, _ = cmd[0].(string)
				}
				if prog == "" {
					continue
				}
				if base := path.Base(prog); x.programs[base] == "" {
					x.programs[base] = fmt.Sprintf("container %s of %s runs %s, and client-go names a program's writes after the base name of its path: %s is that program", drift.Str(ct, "name"), drift.RefOf(o), prog, base)
				}
			}
		}
	}
	switch drift.Str(o, "kind") {
	case "Deployment", "StatefulSet", "DaemonSet":
		ref := drift.RefOf(o)
		if x.workloads[ref.Name] == "" {
			x.workloads[ref.Name] = ref.String()
		}
		for _, ct := range drift.List(o, "spec", "template", "spec", "containers") {
			if name := drift.Str(ct, "name"); x.workloads[name] == "" {
				x.workloads[name] = fmt.Sprintf("%s (container %s)", ref, name)
			}
		}
	}
	for _, field := range []string{"workloadRef", "scaleTargetRef"} {
		if t := drift.Map(o, "spec", field); t != nil {
			k := referent{drift.Str(t, "kind"), drift.Str(o, "metadata", "namespace"), drift.Str(t, "name")}
			x.referrers[k] = append(x.referrers[k], referrer{referrerObject(o), "spec." + field})
		}
	}
	// The catalog's object graph: a field of this kind naming another object.
	kind := drift.KindOf(o)
	for _, ref := range drift.Graph.References {
		if ref.From != kind {
			continue
		}
		name, to := "", ref.To
		v, set := ref.Field.Get(map[string]any(o))
		switch t := v.(type) {
		case string:
			name = t
		case map[string]any:
			name = drift.Str(t, "name")
			if k := drift.Str(t, "kind"); k != "" {
				to = "/" + k
			}
		}
		if !set && ref.Default == "name" {
			name = drift.Str(o, "metadata", "name")
		}
		if name == "" {
			continue
		}
		field := strings.ReplaceAll(strings.TrimPrefix(ref.Field.String(), "/"), "/", ".")
		k := referent{to[strings.Index(to, "/")+1:], drift.Str(o, "metadata", "namespace"), name}
		if !slices.ContainsFunc(x.referrers[k], func(r referrer) bool { return r.field == field && drift.RefOf(r.o) == drift.RefOf(o) }) {
			x.referrers[k] = append(x.referrers[k], referrer{referrerObject(o), field})
		}
	}
}

// referrerObject is what keepsAReferrer reads of a referrer.
func referrerObject(o drift.Object) drift.Object {
	md := map[string]any{}
	for _, k := range []string{"name", "namespace"} {
		if v, ok := drift.Map(o, "metadata")[k]; ok {
			md[k] = v
		}
	}
	var entries []any
	for _, e := range drift.List(o, "metadata", "managedFields") {
		m := drift.Map(e)
		small := map[string]any{}
		for _, k := range []string{"manager", "subresource"} {
			if v, ok := m[k]; ok {
				small[k] = v
			}
		}
		if drift.Map(m, "fieldsV1", "f:status") != nil {
			small["fieldsV1"] = map[string]any{"f:status": map[string]any{}}
		}
		entries = append(entries, small)
	}
	if entries != nil {
		md["managedFields"] = entries
	}
	out := drift.Object{"metadata": md}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := o[k]; ok {
			out[k] = v
		}
	}
	return out
}

// runsAsProgram: client-go's default field manager is the base name of the
// program's path (it names the request's user agent after os.Args[0]); a
// container of a workload in the cluster that runs a program of that name is
// what wrote it.
func (c *Case) runsAsProgram(manager string) string {
	return c.writers().programs[manager]
}

// podSpec returns the pod spec of a workload object.
func podSpec(o drift.Object) (map[string]any, bool) {
	switch drift.Str(o, "kind") {
	case "Pod":
		return drift.Map(o, "spec"), true
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
		return drift.Map(o, "spec", "template", "spec"), true
	case "CronJob":
		return drift.Map(o, "spec", "jobTemplate", "spec", "template", "spec"), true
	}
	return nil, false
}

// keepsAReferrer: the manager writes the status of another object that
// references this one as the object it acts on (an Argo Rollout's
// workloadRef, a scaler's scaleTargetRef): the controller of that object
// keeps this one.
func (c *Case) keepsAReferrer(manager string) string {
	ref := c.Diff.Resource
	for _, r := range c.writers().referrers[referent{ref.Kind, ref.Namespace, ref.Name}] {
		for _, e := range managedEntries(r.o, manager) {
			if drift.Str(e, "subresource") == "status" || drift.Map(e, "fieldsV1", "f:status") != nil {
				return fmt.Sprintf("%s writes the status of %s, whose %s names this object: the controller of that object keeps this one", manager, drift.RefOf(r.o), r.field)
			}
		}
	}
	return ""
}

// workloadNamed finds a Deployment, StatefulSet or DaemonSet, in the cluster
// context or among the application's resources, named like a field manager or
// running a container of that name.
func (c *Case) workloadNamed(manager string) string {
	return c.writers().workloads[manager]
}

// hypotheses says, for a writer nothing places, what it could be and what
// would decide between them.
func hypotheses(manager string) string {
	w := lookupWriter(nil, manager)
	lib := ""
	if w != nil && w.Is == drift.WriterClient {
		lib = fmt.Sprintf(" (%s is the default name of %s, so it says nothing of the program)", manager, w.Component)
	}
	return fmt.Sprintf("hypotheses left for %s%s: a controller (it would also write the object's status, or run in the cluster as a program of that name), a script or CI job, or a person; "+
		"name it in the policy's writers (is: controller with the paths it owns, or is: person) to decide", manager, lib)
}
