// Package kubetest serves, on 127.0.0.1, the Kubernetes API calls driftfix's
// cluster collector makes (list HPAs, mutating webhook configurations,
// namespaces, CRDs; get argocd-cm), from a set of objects, for tests.
package kubetest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/driftfix/driftfix/bot/drift"
)

// Server is a running fake API server.
type Server struct {
	*httptest.Server
	// Calls counts requests.
	Calls atomic.Int32
	// Forbid answers 403 to paths ending in this resource name, when set.
	Forbid string
}

// NewServer serves objs.
func NewServer(objs []drift.Object) *Server {
	byPath := map[string][]drift.Object{}
	for _, o := range objs {
		var p string
		switch drift.Str(o, "kind") {
		case "HorizontalPodAutoscaler":
			p = "/apis/autoscaling/v2/horizontalpodautoscalers"
		case "MutatingWebhookConfiguration":
			p = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
		case "Namespace":
			p = "/api/v1/namespaces"
		case "CustomResourceDefinition":
			p = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
		case "ConfigMap":
			p = "/api/v1/namespaces/" + drift.Str(o, "metadata", "namespace") + "/configmaps/" + drift.Str(o, "metadata", "name")
		default:
			continue
		}
		byPath[p] = append(byPath[p], o)
	}
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		status := func(code int, reason, msg string) {
			w.WriteHeader(code)
			json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code, "message": msg})
		}
		if r.Method != http.MethodGet {
			status(http.StatusMethodNotAllowed, "MethodNotAllowed", "read-only")
			return
		}
		if s.Forbid != "" && strings.HasSuffix(r.URL.Path, s.Forbid) {
			status(http.StatusForbidden, "Forbidden", s.Forbid+" is forbidden: User \"driftfix\" cannot list resource")
			return
		}
		items := byPath[r.URL.Path]
		if strings.Contains(r.URL.Path, "/configmaps/") {
			if len(items) == 0 {
				status(http.StatusNotFound, "NotFound", "configmap not found")
				return
			}
			json.NewEncoder(w).Encode(items[0])
			return
		}
		list := []any{}
		for _, o := range items {
			list = append(list, o)
		}
		json.NewEncoder(w).Encode(map[string]any{"kind": "List", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": "1"}, "items": list})
	}))
	return s
}
