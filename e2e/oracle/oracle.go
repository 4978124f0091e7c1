// Package oracle judges driftfix's diff by Argo CD's own: it feeds a driftfix
// snapshot to the code Argo CD 3.6's application controller runs to compare
// an application (its settings manager reading argocd-cm, the repo server's
// tracking metadata, NormalizeTargetObjects, util/argo/diff.StateDiffs and
// gitops-engine's pkg/diff), and compares the verdict and the differing
// paths with driftfix's diff on the same snapshot. It is a module of its own
// so that the main module never depends on Argo CD.
package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	getestdata "github.com/argoproj/argo-cd/gitops-engine/v3/pkg/diff/testdata"
	"github.com/argoproj/argo-cd/v3/controller"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
	argodiff "github.com/argoproj/argo-cd/v3/util/argo/diff"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
	"github.com/argoproj/argo-cd/v3/util/settings"
	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/kubernetes/fake"
	openapiproto "k8s.io/kube-openapi/pkg/util/proto"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
)

// Verdict is one resource's comparison: whether it differs, and where.
type Verdict struct {
	Index    int
	Resource drift.Ref
	Modified bool
	Paths    []string
	// Skipped says why the resource was not compared (no pair of desired
	// and live state, or Server-Side Diff without a dry-run answer).
	Skipped string
}

// Prepare returns the snapshot as both diffs are given it: a copy whose
// argocd-cm names the tracking method in force, whose desired manifests
// carry the tracking metadata Argo CD's repo server writes into every
// rendered manifest but CRDs, and whose live objects carry what a sync
// wrote, where the snapshot (hand-written) has none. The method is
// argocd-cm's; where it names none, label when the live objects carry the
// instance label and no tracking annotation (the default before Argo CD
// 3.0), else annotation (3.6's default).
func Prepare(in *drift.Snapshot) (*drift.Snapshot, error) {
	s := *in
	s.Application = drift.DeepCopy(in.Application).(map[string]any)
	s.Resources = make([]drift.Resource, len(in.Resources))
	for i, r := range in.Resources {
		s.Resources[i] = drift.Resource{Target: clone(r.Target), Live: clone(r.Live), DryRun: clone(r.DryRun)}
	}
	cm := argoCM(in)
	if cm.Data[trackingKey] == "" {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[trackingKey] = "annotation"
		if labelTracked(in) {
			cm.Data[trackingKey] = "label"
		}
	}
	var cmObj map[string]any
	if err := remarshal(cm, &cmObj); err != nil {
		return nil, err
	}
	cmObj["apiVersion"], cmObj["kind"] = "v1", "ConfigMap"
	s.Cluster = []drift.Object{cmObj}
	for _, o := range in.Cluster {
		if !(drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm") {
			s.Cluster = append(s.Cluster, o)
		}
	}
	labelKey := cm.Data["application.instanceLabelKey"]
	if labelKey == "" {
		labelKey = "app.kubernetes.io/instance"
	}
	var app v1alpha1.Application
	if err := remarshal(s.Application, &app); err != nil {
		return nil, fmt.Errorf("application: %w", err)
	}
	method := v1alpha1.TrackingMethod(cm.Data[trackingKey])
	rt := argo.NewResourceTracking()
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Target == nil {
			continue
		}
		t := &unstructured.Unstructured{Object: r.Target}
		if isCRD(t) || tracked(r.Target, labelKey) {
			continue
		}
		if err := rt.SetAppInstance(t, labelKey, app.InstanceName(cm.Namespace), app.Spec.Destination.Namespace, method, cm.Data["installationID"]); err != nil {
			return nil, err
		}
		if r.Live != nil && !tracked(r.Live, labelKey) {
			for _, k := range []string{"labels", "annotations"} {
				if m := drift.Map(r.Target, "metadata", k); m != nil {
					md := r.Live["metadata"].(map[string]any)
					lm, _ := md[k].(map[string]any)
					if lm == nil {
						lm = map[string]any{}
					}
					for _, tk := range []string{labelKey, "argocd.argoproj.io/tracking-id", "argocd.argoproj.io/installation-id"} {
						if v, ok := m[tk]; ok {
							lm[tk] = v
						}
					}
					if len(lm) > 0 {
						md[k] = lm
					}
				}
			}
		}
	}
	return &s, nil
}

func tracked(o drift.Object, labelKey string) bool {
	_, a := drift.Annotations(o)["argocd.argoproj.io/tracking-id"]
	_, l := drift.Labels(o)[labelKey]
	return a || l
}

func clone(o drift.Object) drift.Object {
	if o == nil {
		return nil
	}
	return drift.DeepCopy(o).(map[string]any)
}

// ArgoCD compares every resource of the snapshot that has both a desired and
// a live state the way Argo CD 3.6's application controller does. An error is
// a ComparisonError of the whole application, as the controller reports it.
func ArgoCD(s *drift.Snapshot) ([]Verdict, error) {
	ctx := context.Background()
	var app v1alpha1.Application
	if err := remarshal(s.Application, &app); err != nil {
		return nil, fmt.Errorf("application: %w", err)
	}
	cm := argoCM(s)
	st, err := loadSettings(cm)
	if err != nil {
		return nil, err
	}
	overrides, labelKey, tracking, installationID, compareOptions := st.overrides, st.labelKey, st.tracking, st.installationID, st.compare
	instance := app.InstanceName(cm.Namespace)
	destNS := app.Spec.Destination.Namespace
	rt := argo.NewResourceTracking()
	info := newInfo(s)

	var out []Verdict
	var targets, lives []*unstructured.Unstructured
	for i, r := range s.Resources {
		v := Verdict{Index: i, Resource: r.Ref()}
		if r.Target == nil || r.Live == nil {
			v.Skipped = "not in both Git and the cluster"
			out = append(out, v)
			continue
		}
		t := &unstructured.Unstructured{Object: drift.DeepCopy(r.Target).(map[string]any)}
		norm, _, err := controller.NormalizeTargetObjects(destNS, []*unstructured.Unstructured{t}, info, func(u *unstructured.Unstructured) error {
			return rt.SetAppInstance(u, labelKey, instance, destNS, v1alpha1.TrackingMethod(tracking), installationID)
		})
		if err != nil || len(norm) != 1 {
			return nil, fmt.Errorf("normalize target %s: %w", v.Resource, err)
		}
		targets = append(targets, norm[0])
		lives = append(lives, &unstructured.Unstructured{Object: drift.DeepCopy(r.Live).(map[string]any)})
		out = append(out, v)
	}
	ssd := useServerSideDiff(&app)
	b := argodiff.NewDiffConfigBuilder().
		WithDiffSettings(app.Spec.IgnoreDifferences, overrides, compareOptions.IgnoreAggregatedRoles, normalizers.IgnoreNormalizerOpts{}).
		WithTracking(labelKey, tracking).
		WithNoCache().
		WithManager("argocd-controller").
		WithServerSideDiff(ssd)
	if hasOption(app.GetAnnotations()["argocd.argoproj.io/compare-options"], "IncludeMutationWebhook=true") {
		b.WithIgnoreMutationWebhook(false)
	}
	// The controller always has its cluster's schema (from the cluster
	// cache), and a dry-run applier only when the application uses
	// Server-Side Diff: a resource that asks for ServerSideApply=true in its
	// own annotation is then compared client-side.
	parser, err := gvkParser()
	if err != nil {
		return nil, err
	}
	b.WithGVKParser(parser)
	if ssd {
		dry := dryRunner{}
		for _, r := range s.Resources {
			if r.Target != nil && r.Live != nil && r.DryRun != nil {
				dry[key(r.Ref())] = r.DryRun
			}
		}
		b.WithServerSideDryRunner(dry)
	}
	cfg, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("diff config: %w", err)
	}
	k := 0
	for i := range out {
		if out[i].Skipped != "" {
			continue
		}
		// One resource at a time, so that one resource Argo CD cannot compare
		// (a Server-Side Diff with no recorded dry-run answer) does not void
		// the others' verdicts; settings errors still fail every resource.
		res, err := argodiff.StateDiffs(ctx, lives[k:k+1], targets[k:k+1], cfg)
		k++
		if errors.Is(err, ErrNoDryRun) {
			out[i].Skipped = "Server-Side Diff with no recorded dry-run answer"
			continue
		}
		if err != nil {
			return nil, err
		}
		d := res.Diffs[0]
		out[i].Modified = d.Modified
		if d.Modified {
			p, err := changedPaths(d.NormalizedLive, d.PredictedLive)
			if err != nil {
				return nil, err
			}
			out[i].Paths = p
		}
	}
	return out, nil
}

// Driftfix compares the same resources with driftfix's diff, Argo CD's own
// states and verdict left out of the snapshot, as an offline snapshot has them.
func Driftfix(s *drift.Snapshot) ([]Verdict, error) {
	cmp, _, err := diff.Compare(s.WithoutArgoStates().WithoutArgoVerdict())
	if err != nil {
		return nil, err
	}
	if cmp.Failed != nil {
		return nil, cmp.Failed
	}
	out := make([]Verdict, len(s.Resources))
	for i, r := range s.Resources {
		out[i] = Verdict{Index: i, Resource: r.Ref()}
		if r.Target == nil || r.Live == nil {
			out[i].Skipped = "not in both Git and the cluster"
		}
	}
	for _, d := range cmp.Diffs {
		if len(d.HiddenBy) > 0 || d.Raw || d.Unexplained || out[d.Index].Skipped != "" {
			continue
		}
		out[d.Index].Modified = true
		out[d.Index].Paths = append(out[d.Index].Paths, d.Path.String())
	}
	for i := range out {
		sort.Strings(out[i].Paths)
		out[i].Paths = slices.Compact(out[i].Paths)
	}
	return out, nil
}

// Agree says whether two verdicts on one resource agree: the same verdict,
// and every differing path of each lies on, above or below one of the
// other's (a list one side reports whole is the other's element in it).
func Agree(a, b Verdict) bool {
	if a.Modified != b.Modified {
		return false
	}
	return covered(a.Paths, b.Paths) && covered(b.Paths, a.Paths)
}

func covered(ps, by []string) bool {
	for _, p := range ps {
		ok := false
		for _, q := range by {
			if related(p, q) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func related(p, q string) bool {
	if len(p) > len(q) {
		p, q = q, p
	}
	return p == q || p == "" || strings.HasPrefix(q, p+"/")
}

// changedPaths walks Argo CD's normalized live state against its predicted
// live state and returns where they differ: maps key by key, lists element
// by element when their lengths agree, else the list whole.
func changedPaths(normalizedLive, predictedLive []byte) ([]string, error) {
	var a, b any
	if err := json.Unmarshal(normalizedLive, &a); err != nil {
		return nil, fmt.Errorf("argo normalized live: %w", err)
	}
	if err := json.Unmarshal(predictedLive, &b); err != nil {
		return nil, fmt.Errorf("argo predicted live: %w", err)
	}
	var out []string
	walk("", a, b, &out)
	sort.Strings(out)
	return out, nil
}

func walk(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, path)
			return
		}
		for k, x := range av {
			if y, ok := bv[k]; ok {
				walk(path+"/"+escape(k), x, y, out)
			} else {
				*out = append(*out, path+"/"+escape(k))
			}
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				*out = append(*out, path+"/"+escape(k))
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			*out = append(*out, path)
			return
		}
		for i := range av {
			walk(path+"/"+strconv.Itoa(i), av[i], bv[i], out)
		}
	default:
		if !jsonEqual(a, b) {
			*out = append(*out, path)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// argoCM is the snapshot's argocd-cm, or an empty one in namespace argocd.
func argoCM(s *drift.Snapshot) *corev1.ConfigMap {
	for _, o := range s.Cluster {
		if drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm" {
			var cm corev1.ConfigMap
			if remarshal(o, &cm) == nil {
				if cm.Namespace == "" {
					cm.Namespace = "argocd"
				}
				cm.Labels = map[string]string{"app.kubernetes.io/part-of": "argocd"}
				return &cm
			}
		}
	}
	ns := drift.Str(s.Application, "metadata", "namespace")
	if ns == "" {
		ns = "argocd"
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}}}
}

// argoSettings are what the controller reads from argocd-cm for a comparison.
type argoSettings struct {
	overrides                          map[string]v1alpha1.ResourceOverride
	labelKey, tracking, installationID string
	compare                            settings.ArgoCDDiffOptions
}

// settingsCache keeps argocd-cm's parse by content: the settings manager
// starts informers, which costs far more than a comparison.
var settingsCache sync.Map

// loadSettings reads argocd-cm with Argo CD's own settings manager, on a
// fake clientset that holds only it and an empty argocd-secret.
func loadSettings(cm *corev1.ConfigMap) (*argoSettings, error) {
	k, _ := json.Marshal([]any{cm.Namespace, cm.Data})
	if v, ok := settingsCache.Load(string(k)); ok {
		return v.(*argoSettings), nil
	}
	ctx := context.Background()
	mgr := settings.NewSettingsManager(ctx, fake.NewClientset(cm, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: cm.Namespace}}), cm.Namespace)
	var st argoSettings
	var err error
	if st.overrides, err = mgr.GetResourceOverrides(); err != nil {
		return nil, fmt.Errorf("resource overrides: %w", err)
	}
	if st.labelKey, err = mgr.GetAppInstanceLabelKey(); err != nil {
		return nil, err
	}
	if st.tracking, err = mgr.GetTrackingMethod(); err != nil {
		return nil, err
	}
	if st.installationID, err = mgr.GetInstallationID(); err != nil {
		return nil, err
	}
	if st.compare, err = mgr.GetResourceCompareOptions(); err != nil {
		// The controller warns and compares with the defaults.
		st.compare = settings.GetDefaultDiffOptions()
	}
	settingsCache.Store(string(k), &st)
	return &st, nil
}

const trackingKey = "application.resourceTrackingMethod"

// labelTracked says the snapshot's live objects carry Argo CD's instance
// label (under argocd-cm's key or the default) and none its tracking
// annotation.
func labelTracked(s *drift.Snapshot) bool {
	key := argoCM(s).Data["application.instanceLabelKey"]
	if key == "" {
		key = "app.kubernetes.io/instance"
	}
	labelled := false
	for _, r := range s.Resources {
		if r.Live == nil {
			continue
		}
		if _, ok := drift.Annotations(r.Live)["argocd.argoproj.io/tracking-id"]; ok {
			return false
		}
		if _, ok := drift.Labels(r.Live)[key]; ok {
			labelled = true
		}
	}
	return labelled
}

func isCRD(u *unstructured.Unstructured) bool {
	return u.GetKind() == "CustomResourceDefinition" && u.GroupVersionKind().Group == "apiextensions.k8s.io"
}

func useServerSideDiff(app *v1alpha1.Application) bool {
	ann := app.GetAnnotations()["argocd.argoproj.io/compare-options"]
	if hasOption(ann, "ServerSideDiff=false") {
		return false
	}
	return hasOption(ann, "ServerSideDiff=true") || (app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.SyncOptions.HasOption("ServerSideApply=true"))
}

func hasOption(list, opt string) bool {
	for _, o := range strings.Split(list, ",") {
		if strings.TrimSpace(o) == opt {
			return true
		}
	}
	return false
}

func key(r drift.Ref) string { return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name }

var (
	parserOnce sync.Once
	parser     *managedfields.GvkParser
	parserErr  error
)

// gvkParser is the schema the controller reads from its cluster, here a
// Kubernetes API server's OpenAPI v2 document that gitops-engine keeps for its
// own Server-Side Diff tests; kinds it does not describe (custom resources)
// are typed from their objects, as the controller does for a kind whose schema
// it lacks.
func gvkParser() (*managedfields.GvkParser, error) {
	parserOnce.Do(func() {
		doc := &openapi_v2.Document{}
		if parserErr = proto.Unmarshal(getestdata.OpenAPIV2Doc, doc); parserErr != nil {
			return
		}
		models, err := openapiproto.NewOpenAPIData(doc)
		if err != nil {
			parserErr = err
			return
		}
		parser, parserErr = managedfields.NewGVKParser(models, false)
	})
	if parserErr != nil {
		return nil, fmt.Errorf("the OpenAPI schema for Server-Side Diff: %w", parserErr)
	}
	return parser, nil
}

// dryRunner answers Server-Side Diff's dry-run apply with the snapshot's
// recorded answer for the resource.
type dryRunner map[string]drift.Object

// ErrNoDryRun is the dry-run runner's answer for a resource the snapshot has
// no recorded dry-run answer for.
var ErrNoDryRun = errors.New("the snapshot records no dry-run answer")

func (d dryRunner) Run(_ context.Context, obj *unstructured.Unstructured, _ string) (string, error) {
	ref := drift.RefOf(obj.Object)
	o, ok := d[key(ref)]
	if !ok {
		return "", fmt.Errorf("%s: %w", key(ref), ErrNoDryRun)
	}
	b, err := json.Marshal(o)
	return string(b), err
}

// info answers whether a kind is namespaced from the snapshot: the live
// objects of the kind, the CRDs among the cluster objects, and Kubernetes'
// cluster-scoped built-in kinds.
type info map[schema.GroupKind]bool

func newInfo(s *drift.Snapshot) info {
	in := info{}
	for _, gk := range clusterScoped {
		in[gk] = false
	}
	for _, o := range s.Cluster {
		if drift.Str(o, "kind") == "CustomResourceDefinition" {
			gk := schema.GroupKind{Group: drift.Str(o, "spec", "group"), Kind: drift.Str(o, "spec", "names", "kind")}
			in[gk] = drift.Str(o, "spec", "scope") != "Cluster"
		}
	}
	for _, r := range s.Resources {
		if r.Live != nil {
			ref := drift.RefOf(r.Live)
			in[schema.GroupKind{Group: ref.Group, Kind: ref.Kind}] = ref.Namespace != ""
		}
	}
	return in
}

func (in info) IsNamespaced(gk schema.GroupKind) (bool, error) {
	if v, ok := in[gk]; ok {
		return v, nil
	}
	return false, fmt.Errorf("kind %s is not known", gk)
}

var clusterScoped = []schema.GroupKind{
	{Kind: "Namespace"}, {Kind: "Node"}, {Kind: "PersistentVolume"}, {Kind: "ComponentStatus"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"},
	{Group: "apiregistration.k8s.io", Kind: "APIService"},
	{Group: "storage.k8s.io", Kind: "StorageClass"}, {Group: "storage.k8s.io", Kind: "CSIDriver"},
	{Group: "storage.k8s.io", Kind: "CSINode"}, {Group: "storage.k8s.io", Kind: "VolumeAttachment"},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"},
	{Group: "node.k8s.io", Kind: "RuntimeClass"},
	{Group: "networking.k8s.io", Kind: "IngressClass"},
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"},
}
