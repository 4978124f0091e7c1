package kube

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/kube/kubetest"
)

func obj(apiVersion, kind, ns, name string, spec map[string]any) drift.Object {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	return drift.Object{"apiVersion": apiVersion, "kind": kind, "metadata": md, "spec": spec}
}

// apiServer emulates what the API server does to a dry-run: a Deployment's
// cpu limit 1000m is stored as 1; a custom resource stays as written, except
// that server-side apply refuses a field its schema does not declare (spec.color)
// and a merge patch prunes it. It adds the managedFields a real answer carries.
func apiServer(o drift.Object, contentType string) (drift.Object, error) {
	out := drift.DeepCopy(o).(map[string]any)
	switch drift.Str(out, "kind") {
	case "Deployment":
		if lim := drift.Map(drift.List(out, "spec", "template", "spec", "containers")[0], "resources", "limits"); lim["cpu"] == "1000m" {
			lim["cpu"] = "1"
		}
	case "Widget":
		if _, ok := drift.Map(out, "spec")["color"]; ok {
			if contentType == "application/apply-patch+yaml" {
				return nil, errors.New("failed to create typed patch object (shop/blue; e2e.example.com/v1, Kind=Widget): .spec.color: field not declared in schema")
			}
			delete(drift.Map(out, "spec"), "color")
		}
	}
	out["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "argocd-controller", "operation": "Apply"}}
	out["metadata"].(map[string]any)["uid"] = "dry-run-uid"
	return out, nil
}

func evidenceSnapshot() *drift.Snapshot {
	container := map[string]any{"name": "web", "image": "web:1", "resources": map[string]any{"limits": map[string]any{"cpu": "1000m"}}}
	dep := obj("apps/v1", "Deployment", "shop", "web", map[string]any{"replicas": int64(2),
		"template": map[string]any{"spec": map[string]any{"containers": []any{container}}}})
	depLive := drift.DeepCopy(dep).(map[string]any)
	depLive["spec"].(map[string]any)["replicas"] = int64(5)
	cm := drift.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings", "namespace": "shop"}, "data": map[string]any{"a": "b"}}
	sec := drift.Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "creds", "namespace": "shop"}, "data": map[string]any{"a": "++++++++"}}
	secLive := drift.DeepCopy(sec).(map[string]any)
	secLive["data"] = map[string]any{"a": "+++++++++"}
	widget := obj("e2e.example.com/v1", "Widget", "shop", "blue", map[string]any{"limits": map[string]any{"cpu": "1000m"}, "color": "blue"})
	widget["status"] = map[string]any{"ready": true}
	widgetLive := obj("e2e.example.com/v1", "Widget", "shop", "blue", map[string]any{"limits": map[string]any{"cpu": "1000m"}})
	app := drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": map[string]any{"name": "shop", "namespace": "argocd"},
		"status": map[string]any{"resources": []any{
			map[string]any{"group": "apps", "kind": "Deployment", "namespace": "shop", "name": "web", "status": "OutOfSync"},
			map[string]any{"kind": "ConfigMap", "namespace": "shop", "name": "settings", "status": "Synced"},
			map[string]any{"kind": "Secret", "namespace": "shop", "name": "creds", "status": "OutOfSync"},
		}}}
	return &drift.Snapshot{Application: app, Resources: []drift.Resource{
		{Target: dep, Live: depLive},
		{Target: cm, Live: cm},
		{Target: sec, Live: secLive},
		// No status entry: Argo CD's own states say it differs.
		{Target: widget, Live: widgetLive, NormalizedLive: widgetLive, PredictedLive: widget},
	}}
}

func TestDryRunEvidence(t *testing.T) {
	srv := kubetest.NewServer(nil)
	defer srv.Close()
	srv.DryRun = apiServer
	dr, err := NewDryRunner(&rest.Config{Host: srv.URL}, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s := evidenceSnapshot()
	dr.Evidence(context.Background(), s)

	if got := drift.Str(drift.List(s.Resources[0].DryRun, "spec", "template", "spec", "containers")[0], "resources", "limits", "cpu"); got != "1" {
		t.Errorf("Deployment dry-run cpu limit %q, want the stored form \"1\"", got)
	}
	if md := drift.Map(s.Resources[0].DryRun, "metadata"); md["managedFields"] != nil {
		t.Errorf("dry-run evidence keeps managedFields: %v", md["managedFields"])
	}
	if s.Resources[1].DryRun != nil {
		t.Errorf("a Synced ConfigMap got dry-run evidence: %v", s.Resources[1].DryRun)
	}
	if s.Resources[2].DryRun != nil {
		t.Errorf("a Secret (masked by argocd-server) was dry-run: %v", s.Resources[2].DryRun)
	}
	if got := drift.Str(s.Resources[3].DryRun, "spec", "limits", "cpu"); got != "1000m" {
		t.Errorf("custom resource dry-run cpu %q, want it as written", got)
	}
	if _, ok := drift.Map(s.Resources[3].DryRun, "spec")["color"]; ok {
		t.Errorf("custom resource dry-run keeps spec.color, which its schema prunes")
	}

	// The Widget's apply is refused for its undeclared field; a client-side
	// apply follows: a strategic merge patch (refused for a custom resource),
	// then a JSON merge patch.
	patches := srv.Patches()
	if len(patches) != 4 {
		t.Fatalf("%d dry-run requests, want 4 (the Deployment's apply, the Widget's apply, strategic and merge patch)", len(patches))
	}
	want := []struct{ path, contentType, force string }{
		{"/apis/apps/v1/namespaces/shop/deployments/web", "application/apply-patch+yaml", "true"},
		{"/apis/e2e.example.com/v1/namespaces/shop/widgets/blue", "application/apply-patch+yaml", "true"},
		{"/apis/e2e.example.com/v1/namespaces/shop/widgets/blue", "application/strategic-merge-patch+json", ""},
		{"/apis/e2e.example.com/v1/namespaces/shop/widgets/blue", "application/merge-patch+json", ""},
	}
	for i, p := range patches {
		if p.Path != want[i].path || p.ContentType != want[i].contentType {
			t.Errorf("request %d: %s %s, want %s %s", i, p.ContentType, p.Path, want[i].contentType, want[i].path)
		}
		if p.Query.Get("dryRun") != "All" || p.Query.Get("fieldManager") != "argocd-controller" || p.Query.Get("force") != want[i].force {
			t.Errorf("request %d query %v: want dryRun=All, fieldManager=argocd-controller, force=%q", i, p.Query, want[i].force)
		}
		if p.Body["status"] != nil {
			t.Errorf("request %d sends status: %v", i, p.Body["status"])
		}
	}
	if c := drift.List(patches[0].Body, "spec", "template", "spec", "containers"); len(c) != 1 || drift.Str(c[0], "resources", "limits", "cpu") != "1000m" {
		t.Errorf("the Deployment was not applied as Git has it: %v", c)
	}
	if dr.Calls != 6 {
		t.Errorf("%d API calls, want 6: two discovery documents and four dry-runs", dr.Calls)
	}
}

// TestDryRunSnapshotRoundTrip: the evidence is written in the snapshot and
// read back by the strict reader.
func TestDryRunSnapshotRoundTrip(t *testing.T) {
	s := evidenceSnapshot()
	var err error
	if s.Resources[0].DryRun, err = apiServer(s.Resources[0].Target, "application/apply-patch+yaml"); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"dryRun":`) {
		t.Fatalf("snapshot has no dryRun field: %s", raw)
	}
	back, err := drift.ParseSnapshot(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !drift.Equal(back.Resources[0].DryRun, s.Resources[0].DryRun) || back.Resources[1].DryRun != nil {
		t.Errorf("dry-run evidence did not survive a round trip: %v", back.Resources[0].DryRun)
	}
}

func TestDryRunBudgetAndForbidden(t *testing.T) {
	tests := []struct {
		name    string
		budget  int
		forbid  string
		applies int    // dry-run requests the server sees
		got     []bool // evidence per resource
	}{
		{"a budget of one", 1, "", 1, []bool{true, false, false, false, false}},
		// After a 403 on deployments the second Deployment is not tried.
		{"no patch permission on deployments", 0, "deployments", 4, []bool{false, false, false, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := kubetest.NewServer(nil)
			defer srv.Close()
			srv.DryRun = apiServer
			srv.Forbid = tt.forbid
			dr, err := NewDryRunner(&rest.Config{Host: srv.URL}, tt.budget, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			s := evidenceSnapshot()
			api := drift.DeepCopy(s.Resources[0].Target).(map[string]any)
			api["metadata"].(map[string]any)["name"] = "api"
			apiLive := drift.DeepCopy(s.Resources[0].Live).(map[string]any)
			apiLive["metadata"].(map[string]any)["name"] = "api"
			s.Resources = append(s.Resources, drift.Resource{Target: api, Live: apiLive, NormalizedLive: apiLive, PredictedLive: api})
			dr.Evidence(context.Background(), s)
			for i, want := range tt.got {
				if (s.Resources[i].DryRun != nil) != want {
					t.Errorf("resource %d (%s): evidence %v, want %v", i, s.Resources[i].Ref(), s.Resources[i].DryRun != nil, want)
				}
			}
			if n := len(srv.Patches()); n != tt.applies {
				t.Errorf("%d dry-run applies reached the server, want %d", n, tt.applies)
			}
		})
	}
}
