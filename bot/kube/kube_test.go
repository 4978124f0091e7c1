package kube

import (
	"context"
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
	if calls.Load() != 5 || c.Calls != 5 {
		t.Errorf("made %d calls (counted %d), want 5: four lists and one get", calls.Load(), c.Calls)
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
	if err == nil || !strings.Contains(err.Error(), "horizontalpodautoscalers") || !strings.Contains(err.Error(), "get/list") {
		t.Fatalf("error %v does not name the permission", err)
	}
}
