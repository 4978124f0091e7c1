package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/driftfix/driftfix/bot/drift"
)

// DefaultDryRunBudget bounds the dry-run applies of one scan.
const DefaultDryRunBudget = 50

// dryRunManager is the field manager Argo CD applies as, so that a dry-run
// shows what Argo CD's own apply would leave.
const dryRunManager = "argocd-controller"

// DryRunner asks the API server what it would store for a manifest: a
// server-side apply with dryRun=All, which runs defaulting, canonicalization,
// admission webhooks and validation and persists nothing. It needs the patch
// verb on every kind it is used for, so it is opt-in.
type DryRunner struct {
	dc   dynamic.Interface
	disc discovery.DiscoveryInterface
	log  *slog.Logger

	mu        sync.Mutex
	left      int
	resources map[string][]metav1.APIResource // by apiVersion
	forbidden map[schema.GroupResource]bool
	// Calls counts the API requests made (discovery and dry-runs).
	Calls int
	// ServerSideOnly keeps to server-side apply: a manifest it refuses is an
	// error, as it is for Argo CD's sync with ServerSideApply=true.
	ServerSideOnly bool
}

// NewDryRunner makes a dry-runner that performs at most budget dry-run
// applies (DefaultDryRunBudget when budget is 0; no limit when negative).
func NewDryRunner(rc *rest.Config, budget int, log *slog.Logger) (*DryRunner, error) {
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	if budget == 0 {
		budget = DefaultDryRunBudget
	}
	if log == nil {
		log = slog.Default()
	}
	return &DryRunner{dc: dc, disc: disc, log: log, left: budget,
		resources: map[string][]metav1.APIResource{}, forbidden: map[schema.GroupResource]bool{}}, nil
}

// ErrBudget is returned once the dry-run budget is spent.
var ErrBudget = errors.New("dry-run budget spent")

// resource maps an object's apiVersion and kind to its API resource, with one
// discovery call per apiVersion.
func (r *DryRunner) resource(ctx context.Context, apiVersion, kind string) (schema.GroupVersionResource, bool, error) {
	r.mu.Lock()
	list, ok := r.resources[apiVersion]
	r.mu.Unlock()
	if !ok {
		r.mu.Lock()
		r.Calls++
		r.mu.Unlock()
		rl, err := r.disc.ServerResourcesForGroupVersion(apiVersion)
		if err != nil {
			return schema.GroupVersionResource{}, false, fmt.Errorf("kubernetes: discover %s: %w", apiVersion, err)
		}
		list = rl.APIResources
		r.mu.Lock()
		r.resources[apiVersion] = list
		r.mu.Unlock()
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("kubernetes: apiVersion %q: %w", apiVersion, err)
	}
	for _, res := range list {
		if res.Kind == kind && !strings.Contains(res.Name, "/") {
			return gv.WithResource(res.Name), res.Namespaced, nil
		}
	}
	return schema.GroupVersionResource{}, false, fmt.Errorf("kubernetes: the API server serves no %s in %s", kind, apiVersion)
}

// Apply sends obj as a server-side apply with dryRun=All, as field manager
// argocd-controller with force (as Argo CD's server-side apply does), and
// returns what the API server would store, without managedFields. When the
// API server refuses the apply because the manifest has fields the schema
// does not declare, it is sent as a client-side apply would send it (see
// clientSideApply). A namespaced object without a namespace is applied in
// namespace.
// fieldValidation is Strict, Warn or Ignore (empty: the server's default).
func (r *DryRunner) Apply(ctx context.Context, obj drift.Object, namespace, fieldValidation string) (drift.Object, error) {
	r.mu.Lock()
	if r.left == 0 {
		r.mu.Unlock()
		return nil, ErrBudget
	}
	if r.left > 0 {
		r.left--
	}
	r.mu.Unlock()
	apiVersion, kind := drift.Str(obj, "apiVersion"), drift.Str(obj, "kind")
	gvr, namespaced, err := r.resource(ctx, apiVersion, kind)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	forbidden := r.forbidden[gvr.GroupResource()]
	r.mu.Unlock()
	if forbidden {
		return nil, fmt.Errorf("kubernetes: dry-run apply of %s is forbidden (the account needs patch on %s)", kind, gvr.GroupResource())
	}
	body := applyBody(obj)
	ns := drift.Str(obj, "metadata", "namespace")
	if ns == "" {
		ns = namespace
	}
	if namespaced {
		body["metadata"].(map[string]any)["namespace"] = ns
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: encode %s for a dry-run: %w", kind, err)
	}
	force := true
	opts := metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: dryRunManager, Force: &force, FieldValidation: fieldValidation}
	var ri dynamic.ResourceInterface = r.dc.Resource(gvr)
	if namespaced {
		ri = r.dc.Resource(gvr).Namespace(ns)
	}
	r.mu.Lock()
	r.Calls++
	r.mu.Unlock()
	u, err := ri.Patch(ctx, drift.Str(obj, "metadata", "name"), types.ApplyPatchType, raw, opts)
	if err != nil && !r.ServerSideOnly && strings.Contains(err.Error(), "field not declared in schema") {
		u, err = r.clientSideApply(ctx, ri, body, raw, fieldValidation)
	}
	if err != nil {
		if apierrors.IsForbidden(err) {
			r.mu.Lock()
			r.forbidden[gvr.GroupResource()] = true
			r.mu.Unlock()
			return nil, fmt.Errorf("kubernetes: dry-run apply of %s %s (the account needs patch on %s): %w", kind, drift.Str(obj, "metadata", "name"), gvr.GroupResource(), err)
		}
		return nil, fmt.Errorf("kubernetes: dry-run apply of %s %s: %w", kind, drift.Str(obj, "metadata", "name"), err)
	}
	return object(u), nil
}

// clientSideApply dry-runs what a client-side apply sends, for a manifest
// that server-side apply refuses because it has fields the schema does not
// declare (Argo CD's sync with ServerSideApply=true would fail on it too): a
// strategic merge patch for a built-in kind, a JSON merge patch for a custom
// resource (which has no strategic merge), a create when the object does not
// exist. The API server drops or prunes the undeclared fields.
func (r *DryRunner) clientSideApply(ctx context.Context, ri dynamic.ResourceInterface, body map[string]any, raw []byte, fieldValidation string) (*unstructured.Unstructured, error) {
	name := drift.Str(body, "metadata", "name")
	opts := metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: dryRunManager, FieldValidation: fieldValidation}
	r.count()
	u, err := ri.Patch(ctx, name, types.StrategicMergePatchType, raw, opts)
	if apierrors.IsUnsupportedMediaType(err) {
		r.count()
		u, err = ri.Patch(ctx, name, types.MergePatchType, raw, opts)
	}
	if apierrors.IsNotFound(err) {
		r.count()
		u, err = ri.Create(ctx, &unstructured.Unstructured{Object: body}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll},
			FieldManager: dryRunManager, FieldValidation: fieldValidation})
	}
	return u, err
}

func (r *DryRunner) count() {
	r.mu.Lock()
	r.Calls++
	r.mu.Unlock()
}

// applyBody is the manifest as an apply body: without status and without
// the server-set metadata a manifest never carries.
func applyBody(obj drift.Object) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			out[k] = v
		}
	}
	md := map[string]any{}
	for k, v := range drift.Map(obj, "metadata") {
		switch k {
		case "managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink":
		default:
			md[k] = v
		}
	}
	out["metadata"] = md
	return out
}

// Evidence records, on each resource of the snapshot that exists in Git and
// live and that Argo CD reports differing, what a dry-run apply of its Git
// manifest would store (Resource.DryRun). Secrets are skipped: argocd-server
// masks their data. A failed dry-run is logged and leaves the field empty;
// once the budget is spent nothing more is asked.
func (r *DryRunner) Evidence(ctx context.Context, s *drift.Snapshot) {
	for i := range s.Resources {
		res := &s.Resources[i]
		if res.Target == nil || res.Live == nil || res.DryRun != nil || !differs(s, res) {
			continue
		}
		ref := res.Ref()
		if ref.Group == "" && ref.Kind == "Secret" {
			continue
		}
		out, err := r.Apply(ctx, res.Target, ref.Namespace, "")
		if errors.Is(err, ErrBudget) {
			r.log.Info("dry-run evidence budget spent", "application", s.AppName())
			return
		}
		if err != nil {
			r.log.Warn("dry-run evidence not collected", "application", s.AppName(), "resource", ref.String(), "err", err)
			continue
		}
		res.DryRun = out
	}
}

// differs reports whether Argo CD reports the resource differing: OutOfSync
// in the Application's status, or normalized and predicted live states that
// are not equal.
func differs(s *drift.Snapshot, res *drift.Resource) bool {
	ref := res.Ref()
	for _, it := range drift.List(s.Application, "status", "resources") {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		if drift.Str(m, "kind") == ref.Kind && drift.Str(m, "group") == ref.Group && drift.Str(m, "name") == ref.Name &&
			drift.Str(m, "namespace") == ref.Namespace {
			return drift.Str(m, "status") == "OutOfSync"
		}
	}
	if res.NormalizedLive != nil && res.PredictedLive != nil {
		return !drift.Equal(res.NormalizedLive, res.PredictedLive)
	}
	return false
}
