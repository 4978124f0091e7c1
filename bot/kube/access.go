package kube

import "k8s.io/apimachinery/pkg/runtime/schema"

// Access is one permission Read uses: a verb on a resource, cluster-wide
// (Namespace and Name empty) or on one named object in one namespace (Name
// set; Namespace "" stands for Config.ArgoCDNamespace).
type Access struct {
	Group, Resource, Verb string
	Namespace, Name       string
}

// ReadAccess lists every request Read makes, as RBAC grants it, so that the
// ServiceAccount's ClusterRole and Roles in deploy/ can be checked against
// it: list on the kinds a diagnosis consults and on Argo CD Applications
// (cluster-wide; namespace by namespace only when that is forbidden), and
// get on argocd-cm.
func ReadAccess() []Access {
	var out []Access
	for _, g := range []schema.GroupVersionResource{gvrHPA, gvrWebhook, gvrNamespace, gvrCRD, gvrApp} {
		out = append(out, Access{Group: g.Group, Resource: g.Resource, Verb: "list"})
	}
	return append(out, Access{Group: gvrConfigMap.Group, Resource: gvrConfigMap.Resource, Verb: "get", Name: "argocd-cm"})
}
