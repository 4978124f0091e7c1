package argocd

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

const token = "s3cr3t-token-value"

// fakeServer speaks argocd-server's REST API on 127.0.0.1 for one application
// taken from a snapshot, with JSON-string states as the real server sends them.
type fakeServer struct {
	*httptest.Server
	snap     *drift.Snapshot
	fail5xx  atomic.Int32 // answer this many requests with 503 first
	delay    time.Duration
	status   int // fixed status to answer with, when set
	lastPath atomic.Value
}

func newFake(t *testing.T, file string) *fakeServer {
	t.Helper()
	s, err := drift.LoadSnapshot(file)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{snap: s}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func jsonString(o drift.Object) string {
	if o == nil {
		return "null"
	}
	b, _ := json.Marshal(o)
	return string(b)
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	f.lastPath.Store(r.URL.RequestURI())
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if r.Header.Get("Authorization") != "Bearer "+token {
		http.Error(w, `{"error":"invalid session","code":16,"message":"invalid session: token is invalid"}`, http.StatusUnauthorized)
		return
	}
	if f.status != 0 {
		http.Error(w, `{"message":"permission denied"}`, f.status)
		return
	}
	if f.fail5xx.Load() > 0 {
		f.fail5xx.Add(-1)
		http.Error(w, `{"message":"upstream connect error"}`, http.StatusServiceUnavailable)
		return
	}
	app := f.snap.Application
	name := f.snap.AppName()
	ns := drift.Str(app, "metadata", "namespace")
	w.Header().Set("Content-Type", "application/json")
	path := strings.TrimPrefix(r.URL.Path, "/api/v1/")
	switch {
	case path == "settings":
		json.NewEncoder(w).Encode(map[string]any{"appLabelKey": "app.kubernetes.io/instance", "trackingMethod": "annotation",
			"resourceOverrides": map[string]any{"admissionregistration.k8s.io/MutatingWebhookConfiguration": map[string]any{"ignoreDifferences": "jqPathExpressions:\n- .webhooks[]?.clientConfig.caBundle\n"}}})
	case path == "applications":
		if !strings.Contains(r.URL.Query().Get("fields"), "items.status.sync.status") {
			http.Error(w, `{"message":"the bot must ask for fields"}`, http.StatusBadRequest)
			return
		}
		item := map[string]any{"metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"project": drift.Str(app, "spec", "project")}, "status": drift.Map(app, "status")}
		json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": []any{item}})
	case path == "applications/"+name:
		if r.URL.Query().Get("appNamespace") != ns {
			http.Error(w, `{"message":"app not found"}`, http.StatusNotFound)
			return
		}
		json.NewEncoder(w).Encode(app)
	case path == "applications/"+name+"/managed-resources":
		var items []any
		for _, res := range f.snap.Resources {
			ref := res.Ref()
			items = append(items, map[string]any{"group": ref.Group, "kind": ref.Kind, "namespace": ref.Namespace, "name": ref.Name,
				"targetState": jsonString(res.Target), "liveState": jsonString(res.Live), "modified": true})
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items})
	case path == "applications/"+name+"/manifests":
		var ms []string
		for _, res := range f.snap.Resources {
			if res.Target != nil {
				ms = append(ms, jsonString(res.Target))
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"manifests": ms, "revision": "abc123"})
	default:
		http.Error(w, `{"message":"no route"}`, http.StatusNotFound)
	}
}

func client(t *testing.T, url string, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: url, Token: token, Backoff: time.Millisecond, Timeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSnapshotMatchesTheApplication(t *testing.T) {
	srv := newFake(t, "../../testdata/cases/05-cabundle-cainjector-ssa.yaml")
	c := client(t, srv.URL, nil)
	ctx := context.Background()
	settings, err := c.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	apps, err := c.ListApplications(ctx)
	if err != nil || len(apps) != 1 || apps[0].SyncStatus != "OutOfSync" {
		t.Fatalf("list = %+v, %v", apps, err)
	}
	s, err := c.Snapshot(ctx, apps[0].Namespace, apps[0].Name, SnapshotOptions{Renders: true, Settings: &settings})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Resources) != len(srv.snap.Resources) || len(s.Renders) != 2 {
		t.Fatalf("snapshot has %d resources and %d renders", len(s.Resources), len(s.Renders))
	}
	for i := range s.Resources {
		if !drift.Equal(s.Resources[i].Target, srv.snap.Resources[i].Target) || !drift.Equal(s.Resources[i].Live, srv.snap.Resources[i].Live) {
			t.Errorf("resource %d differs from what the server sent", i)
		}
	}
	cm := s.Cluster[0]
	if drift.Str(cm, "data", "resource.customizations.ignoreDifferences.admissionregistration.k8s.io_MutatingWebhookConfiguration") == "" {
		t.Errorf("system ignore rules missing from the synthesized argocd-cm: %v", cm)
	}
	// The snapshot written out reads back the same.
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := drift.ParseSnapshot(raw)
	if err != nil {
		t.Fatalf("written snapshot does not parse: %v", err)
	}
	if len(back.Resources) != len(s.Resources) || !drift.Equal(back.Resources[0].Live, s.Resources[0].Live) {
		t.Error("snapshot round trip lost data")
	}
	calls := c.Calls()
	for ep, want := range map[string]int{"GET /api/v1/settings": 1, "GET /api/v1/applications": 1, "GET /api/v1/applications/{name}": 1,
		"GET /api/v1/applications/{name}/managed-resources": 1, "GET /api/v1/applications/{name}/manifests": 2} {
		if calls[ep] != want {
			t.Errorf("%s called %d times, want %d", ep, calls[ep], want)
		}
	}
}

func TestErrors(t *testing.T) {
	srv := newFake(t, "../../testdata/cases/21-manual-kubectl-patch.yaml")
	ctx := context.Background()

	bad := client(t, srv.URL, func(c *Config) { c.Token = "wrong" })
	_, err := bad.ListApplications(ctx)
	if !errors.Is(err, ErrUnauthorized) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("401: %v", err)
	}
	srv.status = http.StatusForbidden
	_, err = client(t, srv.URL, nil).ListApplications(ctx)
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "applications, get") {
		t.Errorf("403 must name the missing permission: %v", err)
	}
	srv.status = 0

	srv.fail5xx.Store(2)
	c := client(t, srv.URL, nil)
	if _, err := c.ListApplications(ctx); err != nil {
		t.Errorf("two 503s then success must succeed: %v", err)
	}
	if n := c.Calls()["GET /api/v1/applications"]; n != 3 {
		t.Errorf("made %d calls, want 3", n)
	}
	srv.fail5xx.Store(100)
	if _, err := client(t, srv.URL, func(c *Config) { c.Retries = 2 }).ListApplications(ctx); err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") {
		t.Errorf("persistent 5xx: %v", err)
	}
	srv.fail5xx.Store(0)

	if _, err := client(t, srv.URL, nil).GetApplication(ctx, "other-namespace", srv.snap.AppName()); !errors.Is(err, ErrNotFound) {
		t.Errorf("wrong appNamespace: %v", err)
	}
	srv.delay = 300 * time.Millisecond
	_, err = client(t, srv.URL, func(c *Config) { c.Timeout = 50 * time.Millisecond; c.Retries = 1 }).ListApplications(ctx)
	if err == nil {
		t.Error("a server slower than the timeout must fail")
	}
	srv.delay = 0
	for _, cfg := range []Config{{BaseURL: "argocd.example.com", Token: "x"}, {BaseURL: "https://a.example.com"}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestDecodeState(t *testing.T) {
	o, err := decodeState(`{"spec":{"replicas":3,"ratio":0.5,"big":12345678901234}}`)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := drift.MustPointer("/spec/replicas").Get(o); r != int64(3) {
		t.Errorf("replicas decoded as %#v", r)
	}
	if r, _ := drift.MustPointer("/spec/ratio").Get(o); r != 0.5 {
		t.Errorf("ratio decoded as %#v", r)
	}
	for _, s := range []string{"", "null"} {
		if o, err := decodeState(s); o != nil || err != nil {
			t.Errorf("decodeState(%q) = %v, %v", s, o, err)
		}
	}
	if _, err := decodeState(`[1]`); err == nil {
		t.Error("a list is not an object")
	}
}
