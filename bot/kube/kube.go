// Package kube reads, from the Kubernetes API, the cluster objects a diagnosis
// consults: HorizontalPodAutoscalers, MutatingWebhookConfigurations, the
// Namespaces they select on, CustomResourceDefinitions and argocd-cm. It is
// read-only and lists each kind once per cycle.
package kube

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/driftfix/driftfix/bot/drift"
)

var (
	gvrHPA       = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	gvrWebhook   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
	gvrNamespace = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrCRD       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gvrConfigMap = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
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
		c.Calls++
		list, err := dc.Resource(l.gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("kubernetes: list %s (the account needs get/list on %s): %w", l.gvr.Resource, l.gvr.GroupResource(), err)
		}
		for i := range list.Items {
			*l.dst = append(*l.dst, object(&list.Items[i]))
		}
	}
	c.Calls++
	cm, err := dc.Resource(gvrConfigMap).Namespace(ns).Get(ctx, "argocd-cm", metav1.GetOptions{})
	if err == nil {
		c.argocdCM = object(cm)
	}
	return c, nil
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
// configuration, the CRDs of its custom resources, and argocd-cm.
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
	sort.SliceStable(out, func(i, j int) bool { return drift.RefOf(out[i]).Less(drift.RefOf(out[j])) })
	return out
}
