package argocdtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestManifestsAtRevision: the manifests endpoint renders the revision it is
// asked for as argocd-server does: ?revision= for one source, ?revisions=
// with ?sourcePositions= (from 1) for several, the rest as the target
// revisions resolve now; a revision nothing renders and a position out of
// range fail; the answer names no revision.
func TestManifestsAtRevision(t *testing.T) {
	cm := func(v string) drift.Object {
		return drift.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": v}}
	}
	one := &drift.Snapshot{Application: drift.Object{"metadata": map[string]any{"name": "one", "namespace": "argocd"},
		"spec":   map[string]any{"source": map[string]any{"repoURL": "r", "targetRevision": "main"}},
		"status": map[string]any{"sync": map[string]any{"revision": "c0ffee"}}},
		Resources: []drift.Resource{{Target: cm("target")}}}
	two := &drift.Snapshot{Application: drift.Object{"metadata": map[string]any{"name": "two", "namespace": "argocd"},
		"spec":   map[string]any{"sources": []any{map[string]any{"repoURL": "r"}, map[string]any{"repoURL": "v"}}},
		"status": map[string]any{"sync": map[string]any{"revisions": []any{"c0ffee", "5eed"}}}},
		Resources: []drift.Resource{{Target: cm("target")}}}
	srv := NewServer("t", one, two)
	defer srv.Close()
	srv.SetHead("argocd", "one", "beef")
	srv.AddRender("argocd", "one", []string{"beef"}, cm("head"))
	srv.SetHead("argocd", "two", "c0ffee", "f00d")
	srv.AddRender("argocd", "two", []string{"c0ffee", "f00d"}, cm("head"))
	srv.AddRender("argocd", "two", []string{"a1", "5eed"}, cm("first moved"))
	tests := []struct {
		name, query string
		code        int
		want        string // the one manifest's name, or a part of the error
	}{
		{"one source, no revision: the head", "one?", 200, "head"},
		{"one source, the compared revision", "one?revision=c0ffee", 200, "target"},
		{"one source, a revision nothing renders", "one?revision=dead", 500, "unable to resolve 'dead'"},
		{"several sources, no revisions: the heads", "two?", 200, "head"},
		{"several sources, the compared revisions", "two?revisions=c0ffee&revisions=5eed&sourcePositions=1&sourcePositions=2", 200, "target"},
		{"several sources, one position", "two?revisions=5eed&sourcePositions=2", 200, "target"},
		{"several sources, the other position", "two?revisions=a1&sourcePositions=1", 500, "unable to resolve 'a1', 'f00d'"},
		{"several sources, positions in another order", "two?revisions=5eed&revisions=a1&sourcePositions=2&sourcePositions=1", 200, "first moved"},
		{"several sources, a position out of range", "two?revisions=x&sourcePositions=3", 500, "source position is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, q, _ := strings.Cut(tt.query, "?")
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/applications/"+name+"/manifests?appNamespace=argocd&noCache=true&"+q, nil)
			req.Header.Set("Authorization", "Bearer t")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, tt.code, body)
			}
			if tt.code != 200 {
				if msg, _ := body["message"].(string); !strings.Contains(msg, tt.want) {
					t.Errorf("error %q, want %q", msg, tt.want)
				}
				return
			}
			if _, ok := body["revision"]; ok {
				t.Error("argocd-server's manifests answer names no revision")
			}
			ms, _ := body["manifests"].([]any)
			var got drift.Object
			if len(ms) == 1 {
				s, _ := ms[0].(string)
				_ = json.Unmarshal([]byte(s), &got)
			}
			if drift.Str(got, "metadata", "name") != tt.want {
				t.Errorf("rendered %v, want %s", ms, tt.want)
			}
		})
	}
}
