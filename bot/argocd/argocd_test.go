package argocd

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
)

const token = "s3cr3t-token-value"

type fakeServer struct {
	*argocdtest.Server
	snap *drift.Snapshot
}

func newFake(t *testing.T, file string) *fakeServer {
	t.Helper()
	s, err := drift.LoadSnapshot(file)
	if err != nil {
		t.Fatal(err)
	}
	srv := argocdtest.NewServer(token, s)
	srv.Settings["resourceOverrides"] = map[string]any{"admissionregistration.k8s.io/MutatingWebhookConfiguration": map[string]any{"ignoreDifferences": "jqPathExpressions:\n- .webhooks[]?.clientConfig.caBundle\n"}}
	t.Cleanup(srv.Close)
	return &fakeServer{Server: srv, snap: s}
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
	drift.Map(srv.snap.Application, "status", "sync")["revision"] = "c0ffee" // compared, as Argo CD always has
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
	srv.Status(http.StatusForbidden)
	_, err = client(t, srv.URL, nil).ListApplications(ctx)
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "applications, get") {
		t.Errorf("403 must name the missing permission: %v", err)
	}
	srv.Status(0)

	srv.Fail(2)
	c := client(t, srv.URL, nil)
	if _, err := c.ListApplications(ctx); err != nil {
		t.Errorf("two 503s then success must succeed: %v", err)
	}
	if n := c.Calls()["GET /api/v1/applications"]; n != 3 {
		t.Errorf("made %d calls, want 3", n)
	}
	srv.Fail(100)
	if _, err := client(t, srv.URL, func(c *Config) { c.Retries = 2 }).ListApplications(ctx); err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") {
		t.Errorf("persistent 5xx: %v", err)
	}
	srv.Fail(0)

	if _, err := client(t, srv.URL, nil).GetApplication(ctx, "other-namespace", srv.snap.AppName()); !errors.Is(err, ErrNotFound) {
		t.Errorf("wrong appNamespace: %v", err)
	}
	srv.Delay(300 * time.Millisecond)
	_, err = client(t, srv.URL, func(c *Config) { c.Timeout = 50 * time.Millisecond; c.Retries = 1 }).ListApplications(ctx)
	if err == nil {
		t.Error("a server slower than the timeout must fail")
	}
	srv.Delay(0)
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

func TestResourceTreeAndEvents(t *testing.T) {
	srv := newFake(t, "../../testdata/cases/01-hpa-statefulset.yaml")
	srv.Events = map[string][]map[string]any{"queue": {
		{"reason": "OperationStarted", "message": "Initiated automated sync to 'abc'", "type": "Normal", "count": 3, "lastTimestamp": "2026-12-02T10:00:00Z"},
		{"reason": "ResourceUpdated", "message": "Updated sync status: Synced -> OutOfSync", "type": "Normal", "count": 1, "lastTimestamp": "2026-12-02T10:01:00Z"},
	}}
	c := client(t, srv.URL, nil)
	nodes, err := c.ResourceTree(context.Background(), "argocd", "queue")
	// The case's application holds its StatefulSet and the HPA that scales it
	// (the HPA is in Git): the tree lists both, each with its health.
	if err != nil || len(nodes) != 2 || nodes[0].Kind != "StatefulSet" || nodes[0].Health != "Healthy" || nodes[0].Version != "v1" ||
		nodes[1].Kind != "HorizontalPodAutoscaler" || nodes[1].Version != "v2" {
		t.Fatalf("tree = %+v, %v", nodes, err)
	}
	evs, err := c.Events(context.Background(), "argocd", "queue")
	if err != nil || len(evs) != 2 || evs[0].Count != 3 || evs[1].Message != "Updated sync status: Synced -> OutOfSync" || evs[1].LastTimestamp.IsZero() {
		t.Fatalf("events = %+v, %v", evs, err)
	}
}
