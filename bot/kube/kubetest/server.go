// Package kubetest serves, on 127.0.0.1, the Kubernetes API calls driftfix's
// cluster collector makes (list HPAs, mutating webhook configurations,
// namespaces, CRDs, Applications; get argocd-cm), from a set of objects, for
// tests; and,
// when DryRun is set, discovery and server-side dry-run applies.
package kubetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/driftfix/driftfix/bot/drift"
)

// Server is a running fake API server.
type Server struct {
	*httptest.Server
	// Calls counts requests.
	Calls atomic.Int32
	// MaxLimit is the largest page size a list request asked for.
	MaxLimit atomic.Int64
	// Forbid answers 403 to paths ending in this resource name, when set,
	// and to dry-run applies of that resource.
	Forbid string
	// ForbidPaths answers 403 to these exact request paths, as an account
	// that may list a resource in some namespaces only.
	ForbidPaths []string
	// DryRun, when set, answers dry-run writes (dryRun=All: an apply, a
	// strategic or JSON merge patch, or a create): it receives the object and
	// the patch content type ("create" for a create) and returns what the
	// emulated API server would store, or an error, answered as a 500 with its
	// text. A strategic merge patch of a custom resource gets 415, as from a
	// real API server. Any other write is refused.
	DryRun func(obj drift.Object, contentType string) (drift.Object, error)

	mu      sync.Mutex
	patches []Patch
}

// Patch is one PATCH request the server received.
type Patch struct {
	Path        string
	Query       url.Values
	ContentType string
	Body        drift.Object
}

// Patches returns the PATCH requests received so far.
func (s *Server) Patches() []Patch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Patch(nil), s.patches...)
}

// APIResource is one resource of the discovery documents the server serves.
type APIResource struct {
	APIVersion, Kind, Name string
	Namespaced             bool
}

// Resources are the kinds discovery knows.
var Resources = []APIResource{
	{"v1", "ConfigMap", "configmaps", true},
	{"v1", "Secret", "secrets", true},
	{"v1", "Service", "services", true},
	{"v1", "Namespace", "namespaces", false},
	{"apps/v1", "Deployment", "deployments", true},
	{"apps/v1", "StatefulSet", "statefulsets", true},
	{"autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true},
	{"admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false},
	{"admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false},
	{"rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", false},
	{"cache.example.com/v1alpha1", "Memcached", "memcacheds", true},
	{"e2e.example.com/v1", "Widget", "widgets", true},
}

// discovery returns the APIResourceList of a discovery path (/api/v1,
// /apis/GROUP/VERSION), or nil.
func discovery(path string) map[string]any {
	gv := strings.TrimPrefix(strings.TrimPrefix(path, "/apis/"), "/api/")
	if gv == path || strings.Count(gv, "/") > 1 || (strings.HasPrefix(path, "/api/") && gv != "v1") {
		return nil
	}
	var list []any
	for _, r := range Resources {
		if r.APIVersion == gv {
			list = append(list, map[string]any{"name": r.Name, "singularName": "", "kind": r.Kind, "namespaced": r.Namespaced,
				"verbs": []any{"get", "list", "patch"}})
		}
	}
	if list == nil {
		return nil
	}
	return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list}
}

// dryRunApply answers a server-side dry-run apply, refusing every real write.
func (s *Server) dryRunApply(w http.ResponseWriter, r *http.Request, status func(int, string, string)) {
	q := r.URL.Query()
	ct := r.Header.Get("Content-Type")
	if r.Method == http.MethodPost {
		ct = "create"
	}
	switch ct {
	case "application/apply-patch+yaml", "application/merge-patch+json", "application/strategic-merge-patch+json", "create":
	default:
		ct = ""
	}
	if s.DryRun == nil || q.Get("dryRun") != "All" || ct == "" {
		status(http.StatusMethodNotAllowed, "MethodNotAllowed", "read-only: only server-side dry-run applies are served")
		return
	}
	raw, err := io.ReadAll(r.Body)
	var obj drift.Object
	if err == nil {
		err = json.Unmarshal(raw, &obj)
	}
	if err != nil {
		status(http.StatusBadRequest, "BadRequest", "not a JSON apply body")
		return
	}
	s.mu.Lock()
	s.patches = append(s.patches, Patch{Path: r.URL.Path, Query: q, ContentType: ct, Body: obj})
	s.mu.Unlock()
	if s.Forbid != "" && strings.Contains(r.URL.Path, "/"+s.Forbid+"/") {
		status(http.StatusForbidden, "Forbidden", s.Forbid+" is forbidden: User \"driftfix\" cannot patch resource")
		return
	}
	// As the real API server: custom resources have no strategic merge patch.
	if group, _ := drift.SplitAPIVersion(drift.Str(obj, "apiVersion")); ct == "application/strategic-merge-patch+json" &&
		strings.Contains(group, ".") && !strings.HasSuffix(group, ".k8s.io") {
		status(http.StatusUnsupportedMediaType, "UnsupportedMediaType", "the body of the request was in an unknown format")
		return
	}
	out, err := s.DryRun(obj, ct)
	if err != nil {
		status(http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	json.NewEncoder(w).Encode(out)
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
		case "Application":
			// listed cluster-wide and in its own namespace
			byPath["/apis/argoproj.io/v1alpha1/applications"] = append(byPath["/apis/argoproj.io/v1alpha1/applications"], o)
			p = "/apis/argoproj.io/v1alpha1/namespaces/" + drift.Str(o, "metadata", "namespace") + "/applications"
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
		if r.Method == http.MethodPatch || (r.Method == http.MethodPost && s.DryRun != nil) {
			s.dryRunApply(w, r, status)
			return
		}
		if r.Method != http.MethodGet {
			status(http.StatusMethodNotAllowed, "MethodNotAllowed", "read-only")
			return
		}
		if d := discovery(r.URL.Path); d != nil && s.DryRun != nil {
			json.NewEncoder(w).Encode(d)
			return
		}
		if (s.Forbid != "" && strings.HasSuffix(r.URL.Path, s.Forbid)) || slices.Contains(s.ForbidPaths, r.URL.Path) {
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
		// Chunked lists as the API server serves them: at most limit items,
		// and an opaque continue token while more remain.
		from, meta := 0, map[string]any{"resourceVersion": "1"}
		if tok := r.URL.Query().Get("continue"); tok != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(tok, "next-"))
			if err != nil || !strings.HasPrefix(tok, "next-") || n > len(items) {
				status(http.StatusBadRequest, "BadRequest", "continue key is not valid")
				return
			}
			from = n
		}
		to := len(items)
		if l, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && l > 0 {
			for cur := s.MaxLimit.Load(); int64(l) > cur && !s.MaxLimit.CompareAndSwap(cur, int64(l)); cur = s.MaxLimit.Load() {
			}
			if from+l < to {
				to = from + l
				meta["continue"] = "next-" + strconv.Itoa(to)
			}
		}
		list := []any{}
		for _, o := range items[from:to] {
			list = append(list, o)
		}
		json.NewEncoder(w).Encode(map[string]any{"kind": "List", "apiVersion": "v1", "metadata": meta, "items": list})
	}))
	return s
}
