package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// leaseServer serves, on 127.0.0.1, the Lease calls of client-go's leader
// election (get, create, update) from one Lease held in memory. While
// another replica holds it (holdFor), each read renews it, as that
// replica would.
type leaseServer struct {
	*httptest.Server
	mu      sync.Mutex
	lease   map[string]any // nil: none yet
	version int
	other   string // the other replica's identity while it renews
}

func newLeaseServer(t *testing.T) *leaseServer {
	t.Helper()
	ls := &leaseServer{}
	ls.Server = httptest.NewServer(http.HandlerFunc(ls.serve))
	t.Cleanup(ls.Close)
	return ls
}

const microTime = "2006-01-02T15:04:05.000000Z07:00"

// holdFor makes another replica hold the Lease, renewing it on every read
// until release.
func (ls *leaseServer) holdFor(namespace, name, identity string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	now := time.Now().UTC().Format(microTime)
	ls.version++
	ls.other = identity
	ls.lease = map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"name": name, "namespace": namespace, "resourceVersion": strconv.Itoa(ls.version)},
		"spec":     map[string]any{"holderIdentity": identity, "leaseDurationSeconds": 2, "acquireTime": now, "renewTime": now}}
}

// release stops the other replica's renewals: the Lease expires.
func (ls *leaseServer) release() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.other = ""
}

// holder is the identity in the Lease, "" without one.
func (ls *leaseServer) holder() string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.lease == nil {
		return ""
	}
	h, _ := ls.lease["spec"].(map[string]any)["holderIdentity"].(string)
	return h
}

func (ls *leaseServer) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// apis/coordination.k8s.io/v1/namespaces/NS/leases[/NAME]
	if len(parts) < 6 || parts[0] != "apis" || parts[1] != "coordination.k8s.io" || parts[5] != "leases" {
		status(w, http.StatusNotFound, "NotFound", "no such path")
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && len(parts) == 7:
		if ls.lease == nil {
			status(w, http.StatusNotFound, "NotFound", "leases.coordination.k8s.io \""+parts[6]+"\" not found")
			return
		}
		if ls.other != "" {
			spec := ls.lease["spec"].(map[string]any)
			spec["renewTime"] = time.Now().UTC().Format(microTime)
			ls.bump()
		}
		writeJSON(w, http.StatusOK, ls.lease)
	case r.Method == http.MethodPost && len(parts) == 6, r.Method == http.MethodPut && len(parts) == 7:
		// client-go sends protobuf (or JSON): decode it as the API server does.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			status(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		typed, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			status(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
		if err != nil {
			status(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		meta, _ := obj["metadata"].(map[string]any)
		if meta == nil {
			status(w, http.StatusBadRequest, "BadRequest", "no metadata")
			return
		}
		if r.Method == http.MethodPost && ls.lease != nil {
			status(w, http.StatusConflict, "AlreadyExists", "the lease exists")
			return
		}
		if r.Method == http.MethodPut && (ls.lease == nil || meta["resourceVersion"] != ls.lease["metadata"].(map[string]any)["resourceVersion"]) {
			status(w, http.StatusConflict, "Conflict", "the lease was changed")
			return
		}
		obj["apiVersion"], obj["kind"] = "coordination.k8s.io/v1", "Lease"
		ls.lease = obj
		ls.bump()
		code := http.StatusOK
		if r.Method == http.MethodPost {
			code = http.StatusCreated
		}
		writeJSON(w, code, ls.lease)
	default:
		status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" "+r.URL.Path)
	}
}

func (ls *leaseServer) bump() {
	ls.version++
	ls.lease["metadata"].(map[string]any)["resourceVersion"] = strconv.Itoa(ls.version)
}

// kubeconfig writes a kubeconfig that reaches the server.
func (ls *leaseServer) kubeconfig(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "lease-kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: lease, cluster: {server: " + ls.URL + "}}]\n" +
		"users: [{name: u, user: {token: lease-token}}]\ncontexts: [{name: c, context: {cluster: lease, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile(file, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	writeJSON(w, code, map[string]any{"apiVersion": "v1", "kind": "Status", "status": "Failure", "reason": reason, "message": msg, "code": code})
}
