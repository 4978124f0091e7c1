package argocd

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
)

func listApp(name string, spec map[string]any) *drift.Snapshot {
	return &drift.Snapshot{Application: drift.Object{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": "argocd"},
		"spec":     spec,
		"status": map[string]any{"sync": map[string]any{"status": "OutOfSync", "revision": "abc"},
			"reconciledAt":   "2026-12-04T10:00:00Z",
			"operationState": map[string]any{"phase": "Succeeded", "finishedAt": "2026-12-04T09:00:00Z"},
			"resources":      []any{map[string]any{"kind": "Deployment", "name": "web", "status": "OutOfSync"}}},
	}}
}

// TestListReadsWhatArgoCDServes: the list call asks only for paths
// argocd-server 3.6 serves, so each application's repository, self-heal
// setting and ignore rules reach the summary, for one source and several.
func TestListReadsWhatArgoCDServes(t *testing.T) {
	rule := map[string]any{"kind": "Deployment", "jsonPointers": []any{"/spec/replicas"}}
	srv := argocdtest.NewServer(token,
		listApp("single", map[string]any{"project": "shop",
			"source":     map[string]any{"repoURL": "https://git.example.com/shop.git", "path": "app", "targetRevision": "main"},
			"syncPolicy": map[string]any{"automated": map[string]any{"selfHeal": true}}, "ignoreDifferences": []any{rule, rule}}),
		listApp("multi", map[string]any{"project": "shop",
			"sources": []any{map[string]any{"repoURL": "https://git.example.com/charts.git"}, map[string]any{"repoURL": "https://git.example.com/values.git"}}}),
	)
	defer srv.Close()
	apps, err := client(t, srv.URL, nil).ListApplications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []AppSummary{
		{Name: "single", Namespace: "argocd", Project: "shop", RepoURL: "https://git.example.com/shop.git", SelfHeal: true, IgnoreRules: 2},
		{Name: "multi", Namespace: "argocd", Project: "shop", RepoURL: "https://git.example.com/charts.git"},
	}
	if len(apps) != len(want) {
		t.Fatalf("listed %d applications, want %d: %+v", len(apps), len(want), apps)
	}
	for i, w := range want {
		a := apps[i]
		if a.Name != w.Name || a.Namespace != w.Namespace || a.Project != w.Project || a.RepoURL != w.RepoURL ||
			a.SelfHeal != w.SelfHeal || a.IgnoreRules != w.IgnoreRules || a.SyncStatus != "OutOfSync" ||
			a.Revision != "abc" || a.OperationPhase != "Succeeded" || a.OperationFinished.IsZero() || a.OutOfSync != 1 {
			t.Errorf("application %s: got %+v", w.Name, a)
		}
	}
}

// TestEmulatorServesOnlyArgoCDFields keeps the emulator as strict as
// argocd-server 3.6: a path outside its list is dropped without an error,
// a listed one is served whole, and an excluding selection leaves it out.
func TestEmulatorServesOnlyArgoCDFields(t *testing.T) {
	srv := argocdtest.NewServer(token, listApp("web", map[string]any{"project": "shop",
		"source":     map[string]any{"repoURL": "https://git.example.com/shop.git"},
		"syncPolicy": map[string]any{"automated": map[string]any{"selfHeal": true}}}))
	defer srv.Close()
	get := func(fields string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/applications?fields="+fields, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct{ Items []map[string]any }
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Items) != 1 {
			t.Fatalf("fields=%s: %v %+v", fields, err, body)
		}
		return body.Items[0]
	}
	for _, tc := range []struct {
		fields string
		path   []string
		want   bool
	}{
		{"items.status.sync.status,items.spec.source.repoURL", []string{"spec", "source", "repoURL"}, false},
		{"items.status.sync.status,items.spec.syncPolicy.automated.selfHeal", []string{"spec", "syncPolicy"}, false},
		{"items.status.sync.status,items.status.reconciledAt", []string{"status", "reconciledAt"}, false},
		{"items.status.sync.status,items.spec.source", []string{"spec", "source", "repoURL"}, true},
		{"items.status.sync.status,items.spec", []string{"spec", "syncPolicy", "automated", "selfHeal"}, true},
		{"items.status.sync.status,items.status.resources", []string{"status", "resources"}, true},
		{"-items.status.sync.status,items.status.resources", []string{"status", "resources"}, false},
		{"-items.status.sync.status,items.status.resources", []string{"spec", "project"}, true},
	} {
		var cur any = get(tc.fields)
		for _, k := range tc.path {
			m, _ := cur.(map[string]any)
			cur = m[k]
		}
		if got := cur != nil; got != tc.want {
			t.Errorf("fields=%s: %v served = %v, want %v", tc.fields, tc.path, got, tc.want)
		}
	}
}

// TestListCutShortIsRetried: a list whose body ends before its declared
// length is read again, like any answer that could not be read; a list that
// arrives whole but is not a list is refused at once, saying so.
func TestListCutShortIsRetried(t *testing.T) {
	whole := `{"items":[{"metadata":{"name":"web","namespace":"argocd"},"status":{"sync":{"status":"OutOfSync"}}}]}`
	var calls atomic.Int32
	body := whole
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if calls.Add(1) == 1 {
			w.Write([]byte(body[:len(body)/2])) // the connection closes short of the length
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	c := client(t, srv.URL, nil)
	apps, err := c.ListApplications(context.Background())
	if err != nil {
		t.Fatalf("a list cut short once must be read again: %v", err)
	}
	if calls.Load() != 2 || len(apps) != 1 || apps[0].Name != "web" || apps[0].SyncStatus != "OutOfSync" {
		t.Fatalf("calls %d, apps %+v", calls.Load(), apps)
	}

	calls.Store(1)
	body = `{"items":{"web":1}}`
	_, err = client(t, srv.URL, nil).ListApplications(context.Background())
	if err == nil || !strings.Contains(err.Error(), "decode response") || calls.Load() != 2 {
		t.Fatalf("a malformed list: calls %d, err %v", calls.Load(), err)
	}
}

// TestListedDigest: an application's Listed digest changes with anything
// the list says of it that a diagnosis depends on (spec, sync status and
// revision, last operation, resources' statuses), and with nothing the
// list does not serve (reconciledAt, which moves on every comparison).
func TestListedDigest(t *testing.T) {
	spec := func() map[string]any {
		return map[string]any{"project": "shop", "source": map[string]any{"repoURL": "https://git.example.com/shop.git", "path": "app", "targetRevision": "main"}}
	}
	listed := func(s *drift.Snapshot) [16]byte {
		t.Helper()
		srv := argocdtest.NewServer(token, s)
		defer srv.Close()
		c, err := New(Config{BaseURL: srv.URL, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		apps, err := c.ListApplications(context.Background())
		if err != nil || len(apps) != 1 {
			t.Fatalf("list: %v, %d applications", err, len(apps))
		}
		return apps[0].Listed
	}
	base := listed(listApp("web", spec()))
	for _, tc := range []struct {
		name    string
		edit    func(s *drift.Snapshot)
		changes bool
	}{
		{"nothing", func(*drift.Snapshot) {}, false},
		{"reconciledAt", func(s *drift.Snapshot) { drift.Map(s.Application, "status")["reconciledAt"] = "2026-12-05T10:00:00Z" }, false},
		{"revision", func(s *drift.Snapshot) { drift.Map(s.Application, "status", "sync")["revision"] = "def" }, true},
		{"sync status", func(s *drift.Snapshot) { drift.Map(s.Application, "status", "sync")["status"] = "Synced" }, true},
		{"helm values", func(s *drift.Snapshot) {
			drift.Map(s.Application, "spec", "source")["helm"] = map[string]any{"values": "replicas: 2"}
		}, true},
		{"last sync", func(s *drift.Snapshot) {
			drift.Map(s.Application, "status", "operationState")["finishedAt"] = "2026-12-05T09:00:00Z"
		}, true},
		{"a resource's status", func(s *drift.Snapshot) {
			drift.Map(s.Application, "status")["resources"] = []any{map[string]any{"kind": "Deployment", "name": "web", "status": "Synced"}}
		}, true},
	} {
		s := listApp("web", spec())
		tc.edit(s)
		if got := listed(s); (got != base) != tc.changes {
			t.Errorf("%s: digest changed %v, want %v", tc.name, got != base, tc.changes)
		}
	}
}

// TestResourceTreeVersions: the resource tree gives each live object's
// resourceVersion, which says whether it changed since it was read.
func TestResourceTreeVersions(t *testing.T) {
	s := listApp("web", map[string]any{"project": "shop"})
	s.Resources = []drift.Resource{{Live: drift.Object{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "4711"}}}}
	srv := argocdtest.NewServer(token, s)
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := c.ResourceTree(context.Background(), "argocd", "web")
	if err != nil || len(nodes) != 1 || nodes[0].ResourceVersion != "4711" || nodes[0].Kind != "Deployment" {
		t.Fatalf("tree %+v, %v", nodes, err)
	}
	live, sum, same, err := c.LiveVersions(context.Background(), "argocd", "web", [32]byte{})
	ref := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	if err != nil || same || len(live) != 1 || live[ref] != "4711" {
		t.Fatalf("live versions %+v, same %v, %v", live, same, err)
	}
	if _, again, same, err := c.LiveVersions(context.Background(), "argocd", "web", sum); err != nil || !same || again != sum {
		t.Fatalf("the same tree again: same %v, %v", same, err)
	}
	s.Resources[0].Live = drift.Object{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "4712"}}
	srv.Add(s)
	if live, _, same, err := c.LiveVersions(context.Background(), "argocd", "web", sum); err != nil || same || live[ref] != "4712" {
		t.Fatalf("a changed tree: %+v, same %v, %v", live, same, err)
	}
}

// TestListAgainAsFresh: a client listing again takes the summaries of
// items listed byte for byte before from its last list, and they are what a
// fresh client reads; a changed item is read anew.
func TestListAgainAsFresh(t *testing.T) {
	spec := map[string]any{"project": "shop", "source": map[string]any{"repoURL": "https://git.example.com/shop.git", "path": "app", "targetRevision": "main"}}
	a, b := listApp("a", spec), listApp("b", spec)
	srv := argocdtest.NewServer(token, a, b)
	defer srv.Close()
	client := func() *Client {
		c, err := New(Config{BaseURL: srv.URL, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	again := client()
	if _, err := again.ListApplications(context.Background()); err != nil {
		t.Fatal(err)
	}
	b2 := listApp("b", spec)
	drift.Map(b2.Application, "status", "sync")["revision"] = "def"
	srv.Add(b2)
	got, err := again.ListApplications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, err := client().ListApplications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("listed again:\n%+v\nfresh:\n%+v", got, want)
	}
	if len(got) != 2 || got[1].Revision != "def" || got[0].Revision != "abc" {
		t.Errorf("summaries %+v", got)
	}
}
