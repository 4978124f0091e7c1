// Package classifiers names the cause of each difference the diff found. Each
// cause is one Classifier value in its own file; Registry lists them in the order
// they are asked. A classifier is a pure function of its Case: no I/O, no clock.
package classifiers

import (
	"slices"
	"strings"
	"sync"

	"github.com/driftfix/driftfix/bot/drift"
)

// Classifier decides whether one cause explains a case.
type Classifier struct {
	// Name is the cause, as used in config, labels, PRs and Slack.
	Name drift.Cause
	// Doc says in one line what the cause means.
	Doc string
	// Classify returns the evidence and suggested fix when the cause applies.
	Classify func(c *Case) (Verdict, bool)

	// What the later stages know of the cause, said here and nowhere else
	// (read through Of). The zero value of each is the cautious answer.

	// Predicted says Git alone decides the cause, so `driftfix predict`
	// names it before a merge. Another writer's change, a person's and an
	// unexplained difference are not predictions.
	Predicted bool
	// MayStayIgnored says an ignore rule may keep hiding the cause's paths
	// when a broad rule is narrowed: another system legitimately owns them.
	MayStayIgnored bool
	// Suggest are the fix kinds a prediction's one-line suggestion may
	// carry for the cause: each writes nothing but Git's own value.
	Suggest []drift.FixKind
	// Fleet says what findings of the cause share across applications, so
	// one platform fix of the Argo CD instance ends them all.
	Fleet FleetBy
	// Error says Git itself is wrong whatever the cluster does, so a
	// review reports a prediction of the cause as an error (SARIF level
	// error), not a warning.
	Error bool
	// Risk is the risk a remove-field plan states for the cause: what the
	// cluster does once Git stops declaring the field ("" for the general
	// one, that the field is then whatever the cluster holds).
	Risk string
}

// FleetBy is what findings of one cause share across applications.
type FleetBy string

// How a cause's findings group into one platform fix.
const (
	// FleetNone: each application's finding is its own.
	FleetNone FleetBy = ""
	// FleetWebhook: the mutating webhook the evidence names
	// (drift.EvidenceWebhook) writes the same fields everywhere.
	FleetWebhook FleetBy = "webhook"
	// FleetWriter: the field manager that last wrote the field, a
	// controller, writes the same kind everywhere.
	FleetWriter FleetBy = "writer"
)

// Of returns the registered classifier of a cause: what the later stages
// read of it. A cause no classifier names (a memo of an older version,
// a typo in a policy) gets the zero value: predicted never, ignorable
// never, no suggestion, no fleet, the general risk.
func Of(cause drift.Cause) Classifier {
	for _, cl := range Registry {
		if cl.Name == cause {
			return cl
		}
	}
	return Classifier{Name: cause}
}

// FleetSource names what a finding of a cause comes from, as fleets group
// them: the mutating webhook configuration its evidence names, or the
// controller (field manager) that wrote it last. ok is false for a cause
// that does not group, or when the evidence names no source.
func FleetSource(cause drift.Cause, ev []drift.Evidence, writer string) (source string, ok bool) {
	switch Of(cause).Fleet {
	case FleetWebhook:
		if e, found := drift.FirstOf(ev, drift.EvidenceWebhook); found && e.Object != nil {
			return e.Object.Kind + " " + e.Object.Name, true
		}
	case FleetWriter:
		if writer != "" {
			return "controller " + writer, true
		}
	}
	return "", false
}

// Verdict is a classifier's answer: the evidence a reviewer can check and the
// kind of fix it suggests.
type Verdict struct {
	Evidence []drift.Evidence
	Fix      drift.FixKind
	Reason   string // why no fix, when Fix is none
	// Grant is the rule that lets another writer keep the field, for a fix
	// that hands it over (remove-field, ignore-difference): see
	// drift.Remediation.Grant.
	Grant string
	// Unplaced are the writers of the path nothing placed (see
	// drift.Finding.Unplaced).
	Unplaced []string
}

// Case is one thing to explain, with everything collected about the application.
// Exactly one of Diff and Rule is set.
type Case struct {
	*Input
	Diff *drift.Difference
	Rule *drift.IgnoreRule
	// RuleIndex is Rule's index in Comparison.Rules.
	RuleIndex int
}

// Resource returns the snapshot entry the case's difference belongs to.
func (c *Case) Resource() *drift.Resource {
	if c.Diff == nil {
		return nil
	}
	return &c.Snapshot.Resources[c.Diff.Index]
}

// Input is what every case of one diagnosis shares: the snapshot, the Argo CD
// settings, the comparison, and indexes of the cluster objects.
type Input struct {
	Snapshot    *drift.Snapshot
	Settings    drift.Settings
	Comparison  *drift.Comparison
	Sensitivity drift.Sensitivity

	context    []drift.Object // cluster objects and the application's own, live where it exists
	namespaces map[string]drift.Object
	hpas       []drift.Object
	webhooks   []drift.Object
	parsed     []*parsedWebhook                   // webhooks read into the API's types, on first use
	admitted   map[*drift.Resource][]webhookMatch // matchingWebhooks' answer per resource
	crds       map[string]drift.Object            // by group/Kind
	apps       []drift.Object                     // Applications other than the snapshot's own
	// scalers are the context's objects that name a scale target
	// (spec.scaleTargetRef: autoscalers, KEDA's objects), by reference;
	// desired are those of them Git declares (the application's desired
	// state), their Git manifests by reference.
	scalers map[drift.Ref]drift.Object
	desired map[drift.Ref]drift.Object
	// own are the application's RBAC objects and workloads as Git declares
	// them; objects the kind/name of every context object; version the
	// oldest kubelet version of the context's nodes (graph.go).
	own     []drift.Object
	objects map[string]bool
	version *drift.Version

	writersOnce sync.Once
	writerIdx   *writerIndex // programs, workloads and referrers of the context (writers)
}

// NewInput indexes the snapshot's cluster objects once for all cases.
func NewInput(s *drift.Snapshot, settings drift.Settings, cmp *drift.Comparison) *Input {
	in := &Input{Snapshot: s, Settings: settings, Comparison: cmp,
		namespaces: map[string]drift.Object{}, crds: map[string]drift.Object{},
		scalers: map[drift.Ref]drift.Object{}, desired: map[drift.Ref]drift.Object{}, objects: map[string]bool{}}
	for i := range s.Resources {
		in.addDesired(&s.Resources[i])
	}
	// Objects the application deploys itself (an HPA in the same chart as its
	// Deployment, a webhook configuration, a CRD) act on the cluster exactly
	// like those collected beside it: the live object where it exists, else
	// the one Git declares. A collected object wins over the application's own.
	context := append([]drift.Object(nil), s.Cluster...)
	seen := ClusterRefs(s.Cluster)
	for i := range s.Resources {
		if o := ContextOf(&s.Resources[i]); o != nil && !seen[drift.RefOf(o)] {
			context = append(context, o)
		}
	}
	in.context = context
	for _, o := range context {
		in.index(o)
	}
	return in
}

// index files one object of the context under its kind.
func (in *Input) index(o drift.Object) {
	in.indexGraph(o)
	group, _ := drift.SplitAPIVersion(drift.Str(o, "apiVersion"))
	if drift.Map(o, "spec", "scaleTargetRef") != nil {
		in.scalers[drift.RefOf(o)] = o
	}
	switch drift.Str(o, "kind") {
	case "Namespace":
		if group == "" {
			in.namespaces[drift.Str(o, "metadata", "name")] = o
		}
	case "HorizontalPodAutoscaler":
		if group == "autoscaling" {
			in.hpas = append(in.hpas, o)
		}
	case "MutatingWebhookConfiguration":
		if group == "admissionregistration.k8s.io" {
			in.webhooks = append(in.webhooks, o)
		}
	case "Application":
		if group == "argoproj.io" && !sameApp(o, in.Snapshot.Application) && !slices.ContainsFunc(in.apps, func(a drift.Object) bool { return sameApp(a, o) }) {
			in.apps = append(in.apps, o)
		}
	case "CustomResourceDefinition":
		if group == "apiextensions.k8s.io" {
			gk := drift.Str(o, "spec", "group") + "/" + drift.Str(o, "spec", "names", "kind")
			in.crds[gk] = o
		}
	}
}

// addDesired records a resource Git declares that names a scale target.
func (in *Input) addDesired(r *drift.Resource) {
	in.addOwn(r)
	if r.Target != nil && drift.Map(r.Target, "spec", "scaleTargetRef") != nil {
		in.desired[r.Ref()] = r.Target
	}
}

// Shared is an application's cluster context indexed once, for diagnoses
// of parts of its resources (drift.Part): the collected objects and every
// resource's (ContextOf), added in order. It holds what the classifiers
// read of them, not the objects: webhooks read into the API's types, and
// of workloads and referrers only the writers index.
type Shared struct {
	in      Input
	seen    map[drift.Ref]bool
	writers *writerIndex
}

// NewShared starts the shared context of an application with the
// collected objects.
func NewShared(app drift.Object, cluster []drift.Object) *Shared {
	sh := &Shared{in: Input{Snapshot: &drift.Snapshot{Application: app}, namespaces: map[string]drift.Object{}, crds: map[string]drift.Object{},
		scalers: map[drift.Ref]drift.Object{}, desired: map[drift.Ref]drift.Object{}, objects: map[string]bool{}},
		seen: ClusterRefs(cluster), writers: newWriterIndex()}
	for _, o := range cluster {
		sh.add(o)
	}
	return sh
}

// Add adds a resource of the application, in order.
func (sh *Shared) Add(r *drift.Resource) {
	sh.in.addDesired(r)
	if o := ContextOf(r); o != nil && !sh.seen[drift.RefOf(o)] {
		sh.add(o)
	}
}

func (sh *Shared) add(o drift.Object) {
	webhooks := len(sh.in.webhooks)
	sh.in.index(o)
	if len(sh.in.webhooks) > webhooks {
		// Read now, in order, and not kept: parseWebhooks reads each
		// configuration alone.
		sh.in.parsed = append(sh.in.parsed, parseWebhooks(sh.in.webhooks[webhooks:])...)
		sh.in.webhooks[webhooks] = nil
	}
	sh.writers.add(o)
}

// NewInputShared is NewInput for a snapshot holding part of the
// application's resources, with the shared context of all of them.
func NewInputShared(s *drift.Snapshot, settings drift.Settings, cmp *drift.Comparison, sh *Shared) *Input {
	in := &Input{Snapshot: s, Settings: settings, Comparison: cmp,
		namespaces: sh.in.namespaces, hpas: sh.in.hpas, webhooks: sh.in.webhooks, parsed: sh.in.parsed,
		crds: sh.in.crds, apps: sh.in.apps, scalers: sh.in.scalers, desired: sh.in.desired, writerIdx: sh.writers,
		own: sh.in.own, objects: sh.in.objects, version: sh.in.version}
	if len(in.webhooks) > 0 {
		if in.parsed == nil {
			in.parsed = []*parsedWebhook{} // read already: configurations without webhooks
		}
		in.admitted = map[*drift.Resource][]webhookMatch{}
	}
	in.writersOnce.Do(func() {})
	return in
}

// ClusterRefs are the collected objects' references: a resource of the
// application that one of them names is not context a second time.
func ClusterRefs(cluster []drift.Object) map[drift.Ref]bool {
	seen := make(map[drift.Ref]bool, len(cluster))
	for _, o := range cluster {
		seen[drift.RefOf(o)] = true
	}
	return seen
}

// ContextOf is the object of a resource that acts on the cluster: live
// where it exists, else the one Git declares; nil with neither.
func ContextOf(r *drift.Resource) drift.Object {
	if r.Live != nil {
		return r.Live
	}
	return r.Target
}

// CRD returns the CustomResourceDefinition of a custom resource, when collected.
func (in *Input) CRD(ref drift.Ref) drift.Object { return in.crds[ref.Group+"/"+ref.Kind] }

// showLive renders the difference's live value for evidence: masked as
// Secret data is where another writer's value could carry a secret
// (drift.LiveShown: by origin and schema type, never by the value's look).
func (c *Case) showLive() string {
	if m, ok := maskedLive(c.Diff); ok {
		return m
	}
	return c.show(c.Diff.Live)
}

// maskedLive returns the mask evidence shows for a difference's live value,
// and whether it is masked: another writer's value that could carry a
// secret. Secret data has its own mask.
func maskedLive(d *drift.Difference) (string, bool) {
	if !d.InLive || isSecretData(d.Resource, d.Path) || drift.LiveShown(d.SchemaScalar, d.Git, d.InGit, d.Live) {
		return "", false
	}
	return drift.MaskValue(d.Live), true
}

// show renders a value for evidence, masking Secret data.
func (c *Case) show(v any) string {
	if c.Diff != nil && isSecretData(c.Diff.Resource, c.Diff.Path) {
		return "(secret value, not shown)"
	}
	return drift.Brief(v, 60)
}

func isSecretData(ref drift.Ref, p drift.Pointer) bool {
	if ref.Group != "" || ref.Kind != "Secret" {
		return false
	}
	return len(p) == 0 || p[0] == "data" || p[0] == "stringData"
}

// ownersText renders owners for evidence: "cainjector (Update, 2025-06-02T09:00:05Z)".
func ownersText(os []drift.Owner) string {
	if len(os) == 0 {
		return "no field manager"
	}
	parts := make([]string, len(os))
	for i, o := range os {
		parts[i] = o.String()
	}
	return strings.Join(parts, ", ")
}

// dryRunNote corroborates a finding with the API server's own answer, when the
// snapshot has one: a dry-run apply of Git's manifest stores what live holds.
func (c *Case) dryRunNote() []drift.Evidence {
	d := c.Diff
	if d == nil || !d.HasDryRun || d.InDryRun != d.InLive || (d.InDryRun && !drift.Equal(d.DryRun, d.Live)) {
		return nil
	}
	return []drift.Evidence{{Kind: drift.EvidenceDryRun, Proof: drift.ProofDryRunHolds,
		Text: "a server-side dry-run apply of Git's manifest stores the live value too (dryRun in the snapshot): the API server and its admission webhooks write it on every apply, so a sync cannot change it"}}
}
