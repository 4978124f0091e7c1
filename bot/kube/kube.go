// Package kube reads, from the Kubernetes API, the cluster objects a diagnosis
// consults: HorizontalPodAutoscalers, MutatingWebhookConfigurations, the
// Namespaces they select on, CustomResourceDefinitions, argocd-cm, and the
// Argo CD Applications of every namespace the account can list (their
// status.resources say which objects each deploys). It is read-only and lists
// each kind once per cycle.
package kube

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/pager"

	"github.com/driftfix/driftfix/bot/drift"
)

var (
	gvrHPA       = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	gvrWebhook   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
	gvrNamespace = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrCRD       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gvrConfigMap = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrApp       = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
)

// Config says how to reach the cluster.
type Config struct {
	// Kubeconfig is a kubeconfig file; empty means $KUBECONFIG, ~/.kube/config,
	// then the in-cluster service account.
	Kubeconfig string
	// Context is the kubeconfig context to use (default: current).
	Context string
	// ArgoCDNamespace is where argocd-cm lives (default argocd).
	ArgoCDNamespace string
}

// RESTConfig builds the client configuration.
func RESTConfig(cfg Config) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if cfg.Kubeconfig != "" {
		rules.ExplicitPath = cfg.Kubeconfig
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: cfg.Context}).ClientConfig()
	if err != nil {
		if cfg.Kubeconfig == "" {
			if in, inErr := rest.InClusterConfig(); inErr == nil {
				return in, nil
			}
		}
		return nil, fmt.Errorf("kubernetes: load kubeconfig: %w", err)
	}
	return rc, nil
}

// Cluster is one cycle's view of a cluster: every kind listed once.
type Cluster struct {
	hpas, webhooks, namespaces, crds []drift.Object
	argocdCM                         drift.Object
	// apps are the Applications of every namespace the account could list,
	// trimmed to what a diagnosis reads (see trimApplication).
	apps []drift.Object
	// listedBy indexes apps by the resources their status.resources lists.
	listedBy map[drift.Ref][]int
	// AppsUnlisted names the namespaces whose Applications the account may
	// not list (only when it may not list them cluster-wide); "*" when not
	// even the namespaces could be tried.
	AppsUnlisted []string
	// Calls counts the API requests made.
	Calls int
}

// Read lists the kinds a diagnosis consults, once. A kind the account may not
// list is an error that names it.
func Read(ctx context.Context, rc *rest.Config, cfg Config) (*Cluster, error) {
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	ns := cfg.ArgoCDNamespace
	if ns == "" {
		ns = "argocd"
	}
	c := &Cluster{}
	for _, l := range []struct {
		gvr schema.GroupVersionResource
		dst *[]drift.Object
	}{{gvrHPA, &c.hpas}, {gvrWebhook, &c.webhooks}, {gvrNamespace, &c.namespaces}, {gvrCRD, &c.crds}} {
		items, err := c.list(ctx, dc.Resource(l.gvr))
		if err != nil {
			return nil, fmt.Errorf("kubernetes: list %s (the account needs list on %s): %w", l.gvr.Resource, l.gvr.GroupResource(), err)
		}
		for _, u := range items {
			*l.dst = append(*l.dst, object(u))
		}
	}
	c.Calls++
	cm, err := dc.Resource(gvrConfigMap).Namespace(ns).Get(ctx, "argocd-cm", metav1.GetOptions{})
	if err == nil {
		c.argocdCM = object(cm)
	}
	if err := c.readApplications(ctx, dc); err != nil {
		return nil, err
	}
	return c, nil
}

// pageSize is how many objects one list request asks for: a cluster with
// thousands of CRDs (Crossplane's providers) or Applications is read in
// chunks, as kubectl reads it.
var pageSize int64 = 500

// list reads every object of a resource in pages of pageSize with
// client-go's pager, counting each request in Calls.
func (c *Cluster) list(ctx context.Context, ri dynamic.ResourceInterface) ([]*unstructured.Unstructured, error) {
	var calls atomic.Int64
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		calls.Add(1)
		return ri.List(ctx, opts)
	})
	p.PageSize = pageSize
	var out []*unstructured.Unstructured
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("list item is a %T, not an object", o)
		}
		out = append(out, u)
		return nil
	})
	c.Calls += int(calls.Load())
	return out, err
}

// maxNamespaceLists bounds the requests a cycle spends asking for
// Applications namespace by namespace when the account may not list them
// cluster-wide: a larger cluster needs list on applications.argoproj.io.
const maxNamespaceLists = 100

// readApplications lists the Argo CD Applications of every namespace the
// account can list: other applications of this instance, and those of other
// Argo CD instances in the cluster, whose status.resources tell which objects
// they deploy. The list is evidence, not a requirement: an account that may
// not list Applications cluster-wide is asked namespace by namespace (up to
// maxNamespaceLists namespaces, else "*" is unlisted), a namespace it may not
// read is named in AppsUnlisted, and a cluster without the Application kind
// has none.
func (c *Cluster) readApplications(ctx context.Context, dc dynamic.Interface) error {
	list, err := c.list(ctx, dc.Resource(gvrApp))
	switch {
	case err == nil:
		c.addApplications(list)
		return nil
	case apierrors.IsNotFound(err):
		return nil // no Argo CD CRD here
	case !apierrors.IsForbidden(err):
		return fmt.Errorf("kubernetes: list applications.argoproj.io: %w", err)
	}
	if len(c.namespaces) == 0 || len(c.namespaces) > maxNamespaceLists {
		c.AppsUnlisted = []string{"*"}
		return nil
	}
	for _, n := range c.namespaces {
		name := drift.Str(n, "metadata", "name")
		list, err := c.list(ctx, dc.Resource(gvrApp).Namespace(name))
		switch {
		case err == nil:
			c.addApplications(list)
		case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
			c.AppsUnlisted = append(c.AppsUnlisted, name)
		default:
			return fmt.Errorf("kubernetes: list applications.argoproj.io in %s: %w", name, err)
		}
	}
	return nil
}

func (c *Cluster) addApplications(list []*unstructured.Unstructured) {
	if c.listedBy == nil {
		c.listedBy = map[drift.Ref][]int{}
	}
	for _, u := range list {
		a := trimApplication(u.Object)
		ai := len(c.apps)
		c.apps = append(c.apps, a)
		for _, r := range drift.List(a, "status", "resources") {
			ref := drift.Ref{Group: drift.Str(r, "group"), Kind: drift.Str(r, "kind"), Namespace: drift.Str(r, "namespace"), Name: drift.Str(r, "name")}
			if l := c.listedBy[ref]; len(l) == 0 || l[len(l)-1] != ai {
				c.listedBy[ref] = append(l, ai)
			}
		}
	}
}

// trimApplication keeps of an Application what tells which objects it deploys
// and where: its name and namespace, destination and project, the instance
// that manages it (status.controllerNamespace), and each entry of
// status.resources by group, version, kind, namespace and name, with its sync
// status and whether it requires pruning. Sources, history and operation
// state are dropped: snapshots carry many Applications.
func trimApplication(o map[string]any) drift.Object {
	md := map[string]any{}
	for _, k := range []string{"name", "namespace", "uid"} {
		if v := drift.Str(o, "metadata", k); v != "" {
			md[k] = v
		}
	}
	out := drift.Object{"apiVersion": drift.Str(o, "apiVersion"), "kind": drift.Str(o, "kind"), "metadata": md}
	spec := map[string]any{}
	if d := drift.Map(o, "spec", "destination"); d != nil {
		spec["destination"] = d
	}
	if p := drift.Str(o, "spec", "project"); p != "" {
		spec["project"] = p
	}
	out["spec"] = spec
	status := map[string]any{}
	if cn := drift.Str(o, "status", "controllerNamespace"); cn != "" {
		status["controllerNamespace"] = cn
	}
	var res []any
	for _, r := range drift.List(o, "status", "resources") {
		e := map[string]any{}
		for _, k := range []string{"group", "version", "kind", "namespace", "name", "status"} {
			if v := drift.Str(r, k); v != "" {
				e[k] = v
			}
		}
		if drift.Lookup(r, "requiresPruning") == true {
			e["requiresPruning"] = true
		}
		res = append(res, e)
	}
	if res != nil {
		status["resources"] = res
	}
	out["status"] = status
	return out
}

// object keeps what a diagnosis reads and drops managedFields, which the
// cluster objects do not need.
func object(u *unstructured.Unstructured) drift.Object {
	o := u.Object
	if md, ok := o["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	return o
}

// For returns the cluster objects one application's diagnosis needs: the HPAs
// and Namespaces of its resources' namespaces, every mutating webhook
// configuration, the CRDs of its custom resources, argocd-cm, and every other
// Application whose status.resources lists one of its resources.
func (c *Cluster) For(s *drift.Snapshot) []drift.Object {
	namespaces := map[string]bool{}
	kinds := map[string]bool{}
	for i := range s.Resources {
		ref := s.Resources[i].Ref()
		if ref.Namespace != "" {
			namespaces[ref.Namespace] = true
		}
		kinds[ref.Group+"/"+ref.Kind] = true
	}
	var out []drift.Object
	for _, h := range c.hpas {
		if namespaces[drift.Str(h, "metadata", "namespace")] {
			out = append(out, h)
		}
	}
	out = append(out, c.webhooks...)
	for _, n := range c.namespaces {
		if namespaces[drift.Str(n, "metadata", "name")] {
			out = append(out, n)
		}
	}
	for _, crd := range c.crds {
		if kinds[drift.Str(crd, "spec", "group")+"/"+drift.Str(crd, "spec", "names", "kind")] {
			out = append(out, crd)
		}
	}
	if c.argocdCM != nil {
		out = append(out, c.argocdCM)
	}
	out = append(out, c.listingApps(s)...)
	sort.SliceStable(out, func(i, j int) bool { return drift.RefOf(out[i]).Less(drift.RefOf(out[j])) })
	return out
}

// listingApps returns the Applications other than the snapshot's own whose
// status.resources lists one of the snapshot's resources, in the order they
// were listed.
func (c *Cluster) listingApps(s *drift.Snapshot) []drift.Object {
	if len(c.apps) == 0 {
		return nil
	}
	found := map[int]bool{}
	for i := range s.Resources {
		for _, ai := range c.listedBy[s.Resources[i].Ref()] {
			found[ai] = true
		}
	}
	own := [2]string{drift.Str(s.Application, "metadata", "namespace"), drift.Str(s.Application, "metadata", "name")}
	idx := make([]int, 0, len(found))
	for ai := range found {
		a := c.apps[ai]
		if [2]string{drift.Str(a, "metadata", "namespace"), drift.Str(a, "metadata", "name")} != own {
			idx = append(idx, ai)
		}
	}
	sort.Ints(idx)
	out := make([]drift.Object, len(idx))
	for i, ai := range idx {
		out[i] = c.apps[ai]
	}
	return out
}
