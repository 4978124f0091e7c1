package kube

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/kube/kubetest"
)

func TestReadAndSelect(t *testing.T) {
	s, err := drift.LoadSnapshot("../../testdata/cases/08-cr-quantity-defaulting-webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	other := drift.Object{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "x", "namespace": "elsewhere"}}
	cm := drift.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"},
		"data": map[string]any{"application.resourceTrackingMethod": "label"}}
	srv := kubetest.NewServer(append(append([]drift.Object{}, s.Cluster...), other, cm))
	defer srv.Close()
	calls := &srv.Calls
	c, err := Read(context.Background(), &rest.Config{Host: srv.URL}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 6 || c.Calls != 6 {
		t.Errorf("made %d calls (counted %d), want 6: four lists, one get, and the Applications list", calls.Load(), c.Calls)
	}
	got := c.For(s)
	var kinds []string
	for _, o := range got {
		kinds = append(kinds, drift.Str(o, "kind")+"/"+drift.Str(o, "metadata", "name"))
	}
	want := "ConfigMap/argocd-cm Namespace/data MutatingWebhookConfiguration/memcached-operator-defaulter CustomResourceDefinition/memcacheds.cache.example.com"
	if strings.Join(kinds, " ") != want {
		t.Errorf("objects for the application:\n%s\nwant:\n%s", strings.Join(kinds, " "), want)
	}
}

func TestForbiddenNamesTheKind(t *testing.T) {
	srv := kubetest.NewServer(nil)
	defer srv.Close()
	srv.Forbid = "horizontalpodautoscalers"
	_, err := Read(context.Background(), &rest.Config{Host: srv.URL}, Config{})
	if err == nil || !strings.Contains(err.Error(), "horizontalpodautoscalers") || !strings.Contains(err.Error(), "needs list on horizontalpodautoscalers.autoscaling") {
		t.Fatalf("error %v does not name the permission", err)
	}
}

// app is an Application in namespace ns that lists resources refs (group,
// kind, namespace, name) in its status.
func app(ns, name string, refs ...[4]string) drift.Object {
	var res []any
	for _, r := range refs {
		res = append(res, map[string]any{"group": r[0], "version": "v1", "kind": r[1], "namespace": r[2], "name": r[3], "status": "Synced", "health": map[string]any{"status": "Healthy"}})
	}
	return drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": ns, "managedFields": []any{map[string]any{"manager": "argocd-controller"}}},
		"spec": map[string]any{"project": "default", "destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "bug"},
			"source": map[string]any{"repoURL": "https://example.com/repo.git", "path": "app-b"}},
		"status": map[string]any{"controllerNamespace": ns, "resources": res, "history": []any{map[string]any{"revision": "abc"}}}}
}

func TestApplicationsListingTheSnapshotsResources(t *testing.T) {
	s, err := drift.LoadSnapshot("../../testdata/heldout/86-two-argocd-instances-same-app-name-label.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfgB := [4]string{"", "ConfigMap", "bug", "special-config-b"}
	objs := []drift.Object{
		app("argocd", "x", cfgB),     // the snapshot's own application: never its own evidence
		app("argocd-two", "x", cfgB), // another instance's application of the same name
		app("argocd-two", "y", [4]string{"", "ConfigMap", "bug", "other"}), // lists nothing of this snapshot
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "argocd"}},
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "argocd-two"}},
	}
	for _, tc := range []struct {
		name      string
		forbid    []string
		wantCalls int
		want      string
		unlisted  string
	}{
		{name: "cluster-wide", wantCalls: 6, want: "argocd-two/x"},
		{name: "namespace by namespace", forbid: []string{"/apis/argoproj.io/v1alpha1/applications"}, wantCalls: 8, want: "argocd-two/x"},
		{name: "one namespace forbidden", forbid: []string{"/apis/argoproj.io/v1alpha1/applications", "/apis/argoproj.io/v1alpha1/namespaces/argocd-two/applications"},
			wantCalls: 8, unlisted: "argocd-two"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := kubetest.NewServer(objs)
			defer srv.Close()
			srv.ForbidPaths = tc.forbid
			c, err := Read(context.Background(), &rest.Config{Host: srv.URL}, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Calls != tc.wantCalls || int(srv.Calls.Load()) != tc.wantCalls {
				t.Errorf("made %d calls (counted %d), want %d", srv.Calls.Load(), c.Calls, tc.wantCalls)
			}
			if got := strings.Join(c.AppsUnlisted, " "); got != tc.unlisted {
				t.Errorf("unlisted namespaces %q, want %q", got, tc.unlisted)
			}
			var got []string
			for _, o := range c.For(s) {
				if drift.Str(o, "kind") != "Application" {
					continue
				}
				got = append(got, drift.Str(o, "metadata", "namespace")+"/"+drift.Str(o, "metadata", "name"))
				if drift.Lookup(o, "status", "history") != nil || drift.Lookup(o, "spec", "source") != nil || drift.Lookup(o, "metadata", "managedFields") != nil {
					t.Errorf("application kept what a diagnosis does not read: %v", o)
				}
				if drift.Str(o, "status", "controllerNamespace") != "argocd-two" || len(drift.List(o, "status", "resources")) != 1 ||
					drift.Str(o, "spec", "destination", "server") == "" {
					t.Errorf("application lost what a diagnosis reads: %v", o)
				}
				if drift.Lookup(drift.List(o, "status", "resources")[0], "health") != nil {
					t.Errorf("resource entry kept its health: %v", o)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("applications for the snapshot: %q, want %q", strings.Join(got, " "), tc.want)
			}
		})
	}
}

// TestApplicationsTooManyNamespaces: an account that may not list
// Applications cluster-wide is not asked namespace by namespace in a cluster
// of more namespaces than a cycle spends requests on.
func TestApplicationsTooManyNamespaces(t *testing.T) {
	var objs []drift.Object
	for i := 0; i <= maxNamespaceLists; i++ {
		objs = append(objs, drift.Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": fmt.Sprintf("ns-%d", i)}})
	}
	srv := kubetest.NewServer(objs)
	defer srv.Close()
	srv.ForbidPaths = []string{"/apis/argoproj.io/v1alpha1/applications"}
	c, err := Read(context.Background(), &rest.Config{Host: srv.URL}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Calls != 6 || strings.Join(c.AppsUnlisted, " ") != "*" {
		t.Errorf("made %d calls, unlisted %q; want 6 and *", c.Calls, c.AppsUnlisted)
	}
}

// TestReadAccessListsEveryRequest: every request Read makes is one that
// ReadAccess declares (the list deploy/'s RBAC is checked against), and every
// declared access is used.
func TestReadAccessListsEveryRequest(t *testing.T) {
	objs := []drift.Object{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"}},
		app("argocd", "x"),
	}
	srv := kubetest.NewServer(objs)
	defer srv.Close()
	declared := map[Access]bool{}
	for _, a := range ReadAccess() {
		declared[a] = false
	}
	var undeclared []string
	rc := &rest.Config{Host: srv.URL, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			a, ok := accessOf(r)
			if _, known := declared[a]; !ok || !known {
				undeclared = append(undeclared, r.Method+" "+r.URL.Path)
			} else {
				declared[a] = true
			}
			return rt.RoundTrip(r)
		})
	}}
	if _, err := Read(context.Background(), rc, Config{}); err != nil {
		t.Fatal(err)
	}
	if len(undeclared) > 0 {
		t.Errorf("Read makes requests ReadAccess does not declare: %v", undeclared)
	}
	for a, used := range declared {
		if !used {
			t.Errorf("ReadAccess declares %+v, which Read does not use", a)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// accessOf is the RBAC access a GET request needs: /api/v1/R or
// /apis/G/V/R is a list, /api/v1/namespaces/NS/R/NAME a get of one object
// (in the Argo CD namespace, which ReadAccess leaves empty).
func accessOf(r *http.Request) (Access, bool) {
	if r.Method != http.MethodGet {
		return Access{}, false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return Access{}, false
	}
	switch len(parts) {
	case 1:
		return Access{Group: group, Resource: parts[0], Verb: "list"}, true
	case 4:
		if parts[0] == "namespaces" && parts[1] == "argocd" {
			return Access{Group: group, Resource: parts[2], Verb: "get", Name: parts[3]}, true
		}
	}
	return Access{}, false
}

// TestReadPaginates: a cluster with more CRDs and Applications than one page
// holds (Crossplane-sized) is read in pages of pageSize, as the API server
// serves them with limit and continue, and every object is read once.
func TestReadPaginates(t *testing.T) {
	defer func(n int64) { pageSize = n }(pageSize)
	pageSize = 100
	var objs []drift.Object
	for i := range 250 {
		objs = append(objs, drift.Object{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": fmt.Sprintf("things%03d.example.com", i)}})
	}
	for i := range 120 {
		objs = append(objs, app("argocd", fmt.Sprintf("app%03d", i)))
	}
	srv := kubetest.NewServer(objs)
	defer srv.Close()
	c, err := Read(context.Background(), &rest.Config{Host: srv.URL}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.crds) != 250 || len(c.apps) != 120 {
		t.Fatalf("read %d CRDs and %d Applications, want 250 and 120", len(c.crds), len(c.apps))
	}
	seen := map[string]bool{}
	for _, o := range c.crds {
		seen[drift.Str(o, "metadata", "name")] = true
	}
	if len(seen) != 250 {
		t.Errorf("%d distinct CRDs, want 250", len(seen))
	}
	// HPAs, webhooks, namespaces: one page each; CRDs: 3; argocd-cm: 1; Applications: 2
	if c.Calls != 9 || srv.Calls.Load() != 9 {
		t.Errorf("made %d calls (counted %d), want 9", srv.Calls.Load(), c.Calls)
	}
	if max := srv.MaxLimit.Load(); max != 100 {
		t.Errorf("largest page asked for: %d, want 100", max)
	}
}
