// Package drift holds the vocabulary every stage of driftfix shares: resource
// references, JSON pointers, the snapshot a diagnosis reads, the differences the
// diff finds, and the findings a diagnosis reports. Besides the standard library
// it imports only go.yaml.in/yaml/v3, to read snapshots (TestLayering holds it to that).
package drift

import (
	"cmp"
	"slices"
	"strings"
)

// Object is a Kubernetes object decoded from JSON or YAML.
type Object = map[string]any

// Ref identifies a Kubernetes resource the way Argo CD does: API group without
// version, kind, namespace and name.
type Ref struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String renders the ref as "Kind namespace/name" (or "Kind name" when cluster-scoped).
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// GroupKind renders "group/Kind", with an empty group for the core API.
func (r Ref) GroupKind() string { return r.Group + "/" + r.Kind }

// Less orders refs by group, kind, namespace and name.
func (r Ref) Less(o Ref) bool {
	if r.Group != o.Group {
		return r.Group < o.Group
	}
	if r.Kind != o.Kind {
		return r.Kind < o.Kind
	}
	if r.Namespace != o.Namespace {
		return r.Namespace < o.Namespace
	}
	return r.Name < o.Name
}

// SplitAPIVersion splits "apps/v1" into ("apps", "v1") and "v1" into ("", "v1").
func SplitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

// RefOf reads the reference of an object.
func RefOf(o Object) Ref {
	group, _ := SplitAPIVersion(Str(o, "apiVersion"))
	return Ref{
		Group:     group,
		Kind:      Str(o, "kind"),
		Namespace: Str(o, "metadata", "namespace"),
		Name:      Str(o, "metadata", "name"),
	}
}

// Str returns the string at the given keys, or "".
func Str(o any, keys ...string) string {
	v, _ := Lookup(o, keys...).(string)
	return v
}

// Map returns the map at the given keys, or nil.
func Map(o any, keys ...string) map[string]any {
	v, _ := Lookup(o, keys...).(map[string]any)
	return v
}

// List returns the list at the given keys, or nil.
func List(o any, keys ...string) []any {
	v, _ := Lookup(o, keys...).([]any)
	return v
}

// Lookup walks nested maps by key and returns the value found, or nil.
func Lookup(o any, keys ...string) any {
	cur := o
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// Labels returns metadata.labels as strings.
func Labels(o Object) map[string]string { return stringMap(Map(o, "metadata", "labels")) }

// Annotations returns metadata.annotations as strings.
func Annotations(o Object) map[string]string {
	return stringMap(Map(o, "metadata", "annotations"))
}

func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// Cause names why a field differs. Each finding has exactly one.
type Cause string

// The causes a diagnosis can name.
const (
	CauseNormalized             Cause = "normalized"
	CauseWebhookMutation        Cause = "webhook-mutation"
	CauseControllerWrite        Cause = "controller-write"
	CauseHPAReplicas            Cause = "hpa-replicas"
	CauseNondeterministicRender Cause = "nondeterministic-render"
	CauseTrackingClash          Cause = "tracking-clash"
	CauseManualChange           Cause = "manual-change"
	CauseBroadIgnore            Cause = "broad-ignore"
	CauseUnknown                Cause = "unknown"
)

// FixKind names the kind of remediation suggested for a finding.
type FixKind string

// The remediation kinds, in order of preference.
const (
	FixRemoveField      FixKind = "remove-field"
	FixSetValue         FixKind = "set-value"
	FixPinHelmValue     FixKind = "pin-helm-value"
	FixIgnoreDifference FixKind = "ignore-difference"
	FixTrackingMethod   FixKind = "tracking-method"
	FixNarrowIgnore     FixKind = "narrow-ignore"
	// FixAdoptLive writes a manual change's live value into Git, in a draft
	// pull request a person decides on; only under policy manualChanges: adopt.
	FixAdoptLive FixKind = "adopt-live"
	FixNone      FixKind = "none"
)

// Owner is one managedFields entry that owns a path in the live object.
type Owner struct {
	Manager     string `json:"manager"`
	Operation   string `json:"operation,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Time        string `json:"time,omitempty"`
}

// String renders "manager (Operation, subresource scale, time)".
func (o Owner) String() string {
	var parts []string
	if o.Operation != "" {
		parts = append(parts, o.Operation)
	}
	if o.Subresource != "" {
		parts = append(parts, o.Subresource+" subresource")
	}
	if o.Time != "" {
		parts = append(parts, o.Time)
	}
	if len(parts) == 0 {
		return o.Manager
	}
	return o.Manager + " (" + strings.Join(parts, ", ") + ")"
}

// Difference is one path where the desired and the live state of a resource differ.
type Difference struct {
	Resource Ref
	Index    int // position of the resource in Snapshot.Resources
	Path     Pointer
	// GitPath is the same place in the desired object when Git has it; list
	// indexes can differ from Path's, which follow the live object.
	GitPath Pointer
	Git     any
	Live    any
	InGit   bool // the path exists in the desired state
	InLive  bool // the path exists in the live object
	// Owners are the managedFields entries that own Path (or a part of it) in live.
	Owners []Owner
	// HiddenBy lists the ignore rules that hide this difference from Argo CD.
	HiddenBy []int
	// Builtin says the resource is a compiled-in Kubernetes kind.
	Builtin bool
	// Undeclared says Path is not a field of the built-in kind's schema, so the
	// API server drops it.
	Undeclared bool
	// Raw says Argo CD reports the resource OutOfSync, driftfix's emulation of
	// its diff found nothing, and this difference comes from comparing again
	// without semantic equality (raw values, lists replaced whole).
	Raw bool
	// Unexplained says Argo CD reports the resource OutOfSync and no
	// comparison driftfix makes shows a difference; Compared says what was
	// compared.
	Unexplained bool
	Compared    string
	// StoredObject returns, for a path Git declares in a built-in object, Git's
	// manifest as the API server stores it, derived by StoredBy: a decode into
	// the compiled-in type and an encode. It is computed on first use, once per
	// resource; nil when not derived. Where Git writes a non-empty string into
	// a plain string field (which the encoding keeps as written), it returns
	// Git's manifest itself, which is the same at that path.
	StoredObject func() Object
	StoredBy     string
	// TrackingOwners are, for a live object Git does not declare, the
	// managedFields owners of the tracking label or annotation that makes
	// Argo CD count it as the application's.
	TrackingOwners []Owner
	// Reordered is the list, around Path, whose live items are exactly Git's
	// in another order; nil otherwise.
	Reordered Pointer
	// DryRun is the value at Path in the API server's answer to a
	// server-side dry-run apply of Git's manifest (snapshot dryRun), when
	// collected: what the API server and its admission webhooks store for
	// Git's declaration. HasDryRun says it was collected; InDryRun that the
	// path exists in it.
	DryRun              any
	HasDryRun, InDryRun bool
	// SchemaScalar says the kind's schema (the compiled-in type of a built-in
	// kind, or the CRD's OpenAPI schema in the snapshot) types Path as an
	// integer, number or boolean: a value there holds no text, so outputs may
	// show it whoever wrote it (LiveShown).
	SchemaScalar bool
}

// Stored returns the value the API server stores for Git's declaration at
// the difference's path (in false: it stores none there); ok is false when
// the stored form is not derived.
func (d *Difference) Stored() (v any, in, ok bool) {
	if d.StoredObject == nil {
		return nil, false, false
	}
	o := d.StoredObject()
	if o == nil {
		return nil, false, false
	}
	v, in = d.GitPath.Get(o)
	return v, in, true
}

// NonArgoOwners returns the owners that are not Argo CD's own managers.
func (d *Difference) NonArgoOwners() []Owner {
	var out []Owner
	for _, o := range d.Owners {
		if !ArgoCDManagers[o.Manager] {
			out = append(out, o)
		}
	}
	return out
}

// AnnotationIgnoreDifferences is the annotation by which a resource in Git
// carries its own ignore rule (Argo CD 3.6): a YAML object whose jsonPointers
// list the paths to leave out of that resource's comparison.
const AnnotationIgnoreDifferences = "argocd.argoproj.io/ignore-differences"

// IgnoreRule is one ignoreDifferences entry, from an Application or from argocd-cm.
type IgnoreRule struct {
	Holder Ref     // the Application or the argocd-cm ConfigMap
	Path   Pointer // where the rule sits in its holder
	System bool    // from argocd-cm (applies to every application)
	// Annotation says the rule is a resource's own
	// argocd.argoproj.io/ignore-differences annotation in Git (Holder is
	// that resource, Path the annotation): it applies to that resource only
	// and is changed there, never in an Application or argocd-cm.
	Annotation            bool
	Group, Kind           string
	Name, Namespace       string
	JSONPointers          []string
	JQPathExpressions     []string
	ManagedFieldsManagers []string
	// Covered lists, per matched resource, the pointers the rule resolved to.
	Covered []Covered
	// Hidden indexes the differences (in Comparison.Diffs) this rule hides.
	Hidden []int
}

// Covered is a resource an ignore rule applies to and the paths it removes there.
type Covered struct {
	Index int
	Paths []Pointer
}

// Comparison is what the diff stage hands to the classifiers.
type Comparison struct {
	Diffs []Difference
	Rules []IgnoreRule
	// Failed says Argo CD cannot compare the application at all and reports
	// a ComparisonError instead of a sync status (an ignore rule's jq
	// expression that does not parse); Diffs are still what driftfix finds.
	Failed error
}

// Settings are the Argo CD settings a diagnosis needs, read from argocd-cm.
type Settings struct {
	TrackingMethod   string // annotation (default), label, or annotation+label
	InstanceLabelKey string // default app.kubernetes.io/instance
	// StatusIgnore is ignoreResourceStatusField: all (default), crd or none.
	StatusIgnore string
	// IgnoreAggregatedRoles is resource.compareoptions ignoreAggregatedRoles.
	IgnoreAggregatedRoles bool
	// FromConfigMap says whether argocd-cm was present in the snapshot.
	FromConfigMap bool
	// TrackingSet says argocd-cm names the tracking method; TrackingSeen
	// says, when it does not, what the targets' own tracking metadata showed
	// ("" when it showed nothing and the 3.x default is assumed).
	TrackingSet  bool
	TrackingSeen string
	// KnownTypeFields are argocd-cm's resource.customizations knownTypeFields,
	// by "group/kind": fields of a custom resource Argo CD compares in the
	// encoding of a Kubernetes type.
	KnownTypeFields map[string][]KnownTypeField
}

// KnownTypeField is one knownTypeFields entry: a dot-separated field path
// and the Kubernetes type it holds ("core/v1/PodSpec", "core/Quantity").
type KnownTypeField struct {
	Field string `yaml:"field"`
	Type  string `yaml:"type"`
}

// AddKnownTypeFields records knownTypeFields entries for a group and kind.
func (s *Settings) AddKnownTypeFields(group, kind string, fields []KnownTypeField) {
	if len(fields) == 0 {
		return
	}
	if s.KnownTypeFields == nil {
		s.KnownTypeFields = map[string][]KnownTypeField{}
	}
	k := group + "/" + kind
	s.KnownTypeFields[k] = append(s.KnownTypeFields[k], fields...)
}

// LabelTracking reports whether Argo CD tracks resources by label.
func (s Settings) LabelTracking() bool {
	return s.TrackingMethod == "label" || s.TrackingMethod == "annotation+label"
}

// Remediation is the fix suggested for a finding.
type Remediation struct {
	Kind   FixKind `json:"kind"`
	File   string  `json:"file,omitempty"`
	Reason string  `json:"reason,omitempty"`
	// Grant is the rule that lets another writer keep the field (the
	// allow-list of hand-overs): without one, no fix removes the field from
	// Git or ignores it.
	Grant string `json:"grant,omitempty"`
}

// Finding is one differing path with exactly one cause and the evidence for it.
type Finding struct {
	Resource    Ref
	Path        Pointer
	GitPath     Pointer // the path in the desired object, when Git has it
	Cause       Cause
	Git         any
	Live        any
	InGit       bool
	InLive      bool
	Evidence    []Evidence
	Owners      []Owner
	Remediation Remediation
	// Hides lists, for an ignore rule, the differences it hides from Argo CD.
	Hides []Location
	// Unplaced are the field managers of the path that nothing placed as a
	// controller or a person (an unknown finding's hypotheses name them),
	// as managedFields lists them: people may say what each one is.
	Unplaced []string
	// SchemaScalar is Difference.SchemaScalar: the schema types Path as an
	// integer, number or boolean.
	SchemaScalar bool
}

// Kept is a finding as a cycle keeps it once its application's fixes are
// planned: what publishing reads (where, which cause and fix, who last wrote
// the live value, the evidence it shows), without the values and owners the
// diagnosis read. A fleet's findings are kept for a whole cycle.
type Kept struct {
	Resource Ref
	Path     string
	Cause    Cause
	Fix      FixKind
	// Writer is the field manager that last wrote the live value ("" when
	// managedFields name none).
	Writer string
	// Evidence is kept where publishing shows it after planning: a finding
	// left for people (no fix), one about an ignore rule (OnIgnoreRule),
	// and one naming the webhook a fleet shares (EvidenceWebhook). A fixed
	// finding's evidence is in its pull request's body, written while
	// planning; it is not kept.
	Evidence []Evidence
	// Unplaced is Finding.Unplaced: the writers the Drift Dashboard asks
	// people to place.
	Unplaced []string
}

// Keep returns what a cycle keeps of f; path is f.Path as text.
func (f *Finding) Keep(path string) Kept {
	k := Kept{Resource: f.Resource, Path: path, Cause: f.Cause, Fix: f.Remediation.Kind, Unplaced: f.Unplaced}
	if len(f.Owners) > 0 {
		k.Writer = f.Owners[len(f.Owners)-1].Manager
	}
	if k.Fix == FixNone || k.Fix == "" || slices.ContainsFunc(f.Evidence, func(e Evidence) bool {
		return e.Kind == EvidenceWebhook || e.Kind == EvidenceBroadRule || e.Kind == EvidenceSensitiveRule
	}) {
		k.Evidence = f.Evidence
	}
	return k
}

// OnIgnoreRule says the kept finding is about an ignore rule, broad or
// covering a sensitive path, as its evidence shows.
func (k Kept) OnIgnoreRule() bool {
	return slices.ContainsFunc(k.Evidence, func(e Evidence) bool {
		return e.Kind == EvidenceBroadRule || e.Kind == EvidenceSensitiveRule
	})
}

// Location is one path of one resource.
type Location struct {
	Resource Ref
	Path     Pointer
}

// Report is the diagnosis of one application.
type Report struct {
	Application string
	SyncStatus  string
	Findings    []Finding
}

// SortFindings orders findings by group, kind, namespace, name and path.
func SortFindings(fs []Finding) {
	// Each path is written out once, not once per comparison; the findings
	// move once, in the order found.
	paths := make([]string, len(fs))
	order := make([]int32, len(fs))
	for i := range fs {
		paths[i], order[i] = fs[i].Path.String(), int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &fs[i], &fs[j]
		if a.Resource != b.Resource {
			if a.Resource.Less(b.Resource) {
				return -1
			}
			return 1
		}
		if c := strings.Compare(paths[i], paths[j]); c != 0 {
			return c
		}
		return cmp.Compare(i, j) // stable
	})
	sorted := make([]Finding, len(fs))
	for k, i := range order {
		sorted[k] = fs[i]
	}
	copy(fs, sorted)
}
