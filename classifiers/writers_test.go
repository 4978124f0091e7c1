package classifiers_test

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// TestCatalogPlaces: what the catalog says of well-known managers, and that
// a documented component's name counts only at the paths it documents.
func TestCatalogPlaces(t *testing.T) {
	for m, want := range map[string]bool{
		"kubectl-edit": true, "kubectl": true, "helm": true, "argocd-server": true, "Mozilla": true,
		"kube-controller-manager": false, "Go-http-client": false, "OpenAPI-Generator": false, "kustomize-controller": false, "kubectlx": false,
	} {
		if got := classifiers.IsManualManager(m); got != want {
			t.Errorf("IsManualManager(%s) = %v, want %v", m, got, want)
		}
	}
	var cainjector drift.Writer
	for _, w := range drift.Catalog {
		if w.Manager == "cainjector" {
			cainjector = w
		}
	}
	mwc := drift.Ref{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", Name: "m"}
	if _, ok := cainjector.OwnsPath(mwc, drift.MustPointer("/webhooks/3/clientConfig/caBundle")); !ok {
		t.Error("cainjector must own a mutating webhook's caBundle")
	}
	if _, ok := cainjector.OwnsPath(mwc, drift.MustPointer("/webhooks/3/clientConfig/service")); ok {
		t.Error("cainjector must not own a webhook's service")
	}
	if _, ok := cainjector.OwnsPath(drift.Ref{Group: "example.com", Kind: "Thing"}, drift.MustPointer("/spec/caBundle")); ok {
		t.Error("cainjector must not own a caBundle of a kind it does not document")
	}
}
