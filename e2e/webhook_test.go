//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// startWebhook serves a mutating admission webhook on addr with the stack's
// webhook certificate. With cpuLimit set it overwrites the first container's
// cpu limit of Deployments; otherwise it adds a label and a sidecar. It is
// idempotent: server-side dry runs call it again on UPDATE.
func startWebhook(t *testing.T, s *stack, addr, cpuLimit string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in struct {
			Request struct {
				UID    string         `json:"uid"`
				Object map[string]any `json:"object"`
			} `json:"request"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var ops []map[string]any
		obj := in.Request.Object
		if cpuLimit != "" {
			ops = append(ops, map[string]any{"op": "add", "path": "/spec/template/spec/containers/0/resources/limits", "value": map[string]any{"cpu": cpuLimit}})
		} else {
			md, _ := obj["metadata"].(map[string]any)
			if _, ok := md["labels"].(map[string]any); !ok {
				ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]any{}})
			}
			ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels/injected-by", "value": "e2e-webhook"})
			spec, _ := obj["spec"].(map[string]any)
			tpl, _ := spec["template"].(map[string]any)
			ps, _ := tpl["spec"].(map[string]any)
			has := false
			for _, c := range ps["containers"].([]any) {
				if c.(map[string]any)["name"] == "injected-sidecar" {
					has = true
				}
			}
			if !has {
				ops = append(ops, map[string]any{"op": "add", "path": "/spec/template/spec/containers/-", "value": map[string]any{"name": "injected-sidecar", "image": "registry.example.com/sidecar:1.0"}})
			}
		}
		p, _ := json.Marshal(ops)
		out, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"response": map[string]any{"uid": in.Request.UID, "allowed": true, "patchType": "JSONPatch", "patch": base64.StdEncoding.EncodeToString(p)}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	pki := filepath.Join(s.root, "run", "pki")
	go func() {
		if err := srv.ServeTLS(ln, filepath.Join(pki, "webhook.crt"), filepath.Join(pki, "webhook.key")); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("webhook: %v", err)
		}
	}()
	t.Cleanup(func() { srv.Close() })
}
