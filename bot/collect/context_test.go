package collect

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestAddClusterContext: what the cluster read brings replaces what the
// snapshot held under the same identity (argocd-cm by name, since the one
// derived from argocd-server's settings may name another namespace), and the
// rest is kept.
func TestAddClusterContext(t *testing.T) {
	obj := func(apiVersion, kind, ns, name, mark string) drift.Object {
		md := map[string]any{"name": name, "annotations": map[string]any{"mark": mark}}
		if ns != "" {
			md["namespace"] = ns
		}
		return drift.Object{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	}
	s := &drift.Snapshot{Cluster: []drift.Object{
		obj("v1", "ConfigMap", "argocd", "argocd-cm", "derived"),
		obj("argoproj.io/v1alpha1", "Application", "argocd-two", "x", "from the file"),
		obj("argoproj.io/v1alpha1", "Application", "argocd-two", "y", "from the file"),
		obj("v1", "Namespace", "", "bug", "from the file"),
	}}
	AddClusterContext(s, []drift.Object{
		obj("v1", "ConfigMap", "argo", "argocd-cm", "read"),
		obj("argoproj.io/v1alpha1", "Application", "argocd-two", "x", "read"),
	})
	var got []string
	for _, o := range s.Cluster {
		got = append(got, drift.Str(o, "kind")+" "+drift.Str(o, "metadata", "name")+": "+drift.Str(o, "metadata", "annotations", "mark"))
	}
	want := "Application y: from the file, Namespace bug: from the file, ConfigMap argocd-cm: read, Application x: read"
	if strings.Join(got, ", ") != want {
		t.Errorf("cluster context:\n%s\nwant:\n%s", strings.Join(got, ", "), want)
	}
	AddClusterContext(s, nil)
	if len(s.Cluster) != 4 {
		t.Errorf("adding nothing changed the context: %d objects", len(s.Cluster))
	}
}
