package argocd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
)

// TestSnapshotRendersTheComparedRevision: the further renders are asked of
// argocd-server at the revision Argo CD compared (revision for one source,
// revisions and sourcePositions for several), not as the target revision
// resolves now, after a push; each render records that revision. Without a
// known compared revision no render is asked for.
func TestSnapshotRendersTheComparedRevision(t *testing.T) {
	cm := func(value string) drift.Object {
		return drift.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "flags"}, "data": map[string]any{"BETA": value}}
	}
	app := func(spec, sync map[string]any) *drift.Snapshot {
		return &drift.Snapshot{Application: drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": "shop", "namespace": "argocd"},
			"spec":     spec, "status": map[string]any{"sync": sync}},
			Resources: []drift.Resource{{Target: cm("compared")}}}
	}
	one := map[string]any{"source": map[string]any{"repoURL": "https://git.example.com/shop.git", "path": "apps/web", "targetRevision": "main"},
		"destination": map[string]any{"namespace": "shop"}}
	two := map[string]any{"sources": []any{
		map[string]any{"repoURL": "https://git.example.com/shop.git", "path": "apps/web", "targetRevision": "main"},
		map[string]any{"repoURL": "https://git.example.com/values.git", "targetRevision": "main", "ref": "values"}},
		"destination": map[string]any{"namespace": "shop"}}
	hydrated := map[string]any{"sourceHydrator": map[string]any{"drySource": map[string]any{"repoURL": "https://git.example.com/shop.git", "path": "apps/web", "targetRevision": "main"}},
		"destination": map[string]any{"namespace": "shop"}}
	tests := []struct {
		name     string
		snap     *drift.Snapshot
		compared []string // the revisions rendered "compared"
		head     []string // what the target revisions resolve to now
		info     map[string]any
		renders  int
	}{
		{"one source, a commit pushed since", app(one, map[string]any{"status": "OutOfSync", "revision": "c0ffee"}), []string{"c0ffee"}, []string{"beef"},
			map[string]any{"revision": "c0ffee"}, 2},
		{"several sources, a commit pushed to one", app(two, map[string]any{"status": "OutOfSync", "revisions": []any{"c0ffee", "5eed"}}), []string{"c0ffee", "5eed"}, []string{"c0ffee", "f00d"},
			map[string]any{"revisions": []any{"c0ffee", "5eed"}}, 2},
		{"not compared yet", app(one, map[string]any{"status": "Unknown"}), nil, []string{"beef"}, nil, 0},
		{"several sources, a revision missing", app(two, map[string]any{"status": "OutOfSync", "revisions": []any{"c0ffee"}}), nil, []string{"c0ffee", "f00d"}, nil, 0},
		{"a source hydrator renders its dry source", app(hydrated, map[string]any{"status": "OutOfSync", "revision": "d1d1"}), nil, []string{"beef"}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := argocdtest.NewServer(token, tt.snap)
			defer srv.Close()
			srv.SetHead("argocd", "shop", tt.head...)
			srv.AddRender("argocd", "shop", tt.head, cm("after the push"))
			if tt.compared != nil {
				srv.AddRender("argocd", "shop", tt.compared, cm("compared"))
			}
			c := client(t, srv.URL, nil)
			s, err := c.Snapshot(context.Background(), "argocd", "shop", SnapshotOptions{Renders: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Renders) != tt.renders || c.Calls()["GET /api/v1/applications/{name}/manifests"] != tt.renders {
				t.Fatalf("%d renders in %d calls, want %d", len(s.Renders), c.Calls()["GET /api/v1/applications/{name}/manifests"], tt.renders)
			}
			for i, r := range s.Renders {
				if len(r) != 2 || drift.Str(r[0], "data", "BETA") != "compared" {
					t.Errorf("render %d is not of the compared revision: %v", i+1, r)
					continue
				}
				info := r[1]
				if drift.Str(info, "apiVersion") != RenderInfoAPIVersion || drift.Str(info, "kind") != RenderInfoKind {
					t.Fatalf("render %d ends with %v, not its RenderInfo", i+1, info)
				}
				for k, want := range tt.info {
					if !drift.Equal(info[k], want) {
						t.Errorf("render %d records %s %v, want %v", i+1, k, info[k], want)
					}
				}
			}
			if len(s.Renders) > 0 { // what a snapshot file holds reads back
				raw, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				if back, err := drift.ParseSnapshot(raw); err != nil || len(back.Renders) != 2 || !drift.Equal(back.Renders[1][1], s.Renders[1][1]) {
					t.Errorf("the renders do not read back: %v", err)
				}
			}
		})
	}
}

// TestManifestsQuery: the manifests call asks argocd-server for the revision
// the way its GetManifests reads it.
func TestManifestsQuery(t *testing.T) {
	srv := newFake(t, "../../testdata/cases/21-manual-kubectl-patch.yaml")
	drift.Map(srv.snap.Application, "status", "sync")["revision"] = "c0ffee"
	c := client(t, srv.URL, nil)
	ctx := context.Background()
	ns, name := drift.Str(srv.snap.Application, "metadata", "namespace"), srv.snap.AppName()
	if objs, err := c.Manifests(ctx, ns, name, Revision{Revision: "c0ffee"}, true); err != nil || len(objs) == 0 {
		t.Fatalf("the compared revision: %v, %v", objs, err)
	}
	if _, err := c.Manifests(ctx, ns, name, Revision{Revision: "no-such-commit"}, true); err == nil || !strings.Contains(err.Error(), "no-such-commit") {
		t.Errorf("a revision nothing renders: %v", err)
	}
}
