package classifiers_test

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// TestCatalog: the built-in writer catalog is data with a component and a
// source per entry, and a catalog that breaks that is refused naming the entry.
func TestCatalog(t *testing.T) {
	if len(classifiers.Catalog) < 20 {
		t.Fatalf("the catalog has %d entries", len(classifiers.Catalog))
	}
	kinds := map[drift.WriterKind]int{}
	for _, w := range classifiers.Catalog {
		kinds[w.Is]++
		if w.Component == "" || !strings.HasPrefix(w.Source, "https://") {
			t.Errorf("%s: component %q, source %q", w.Manager, w.Component, w.Source)
		}
	}
	for _, k := range []drift.WriterKind{drift.WriterController, drift.WriterPerson, drift.WriterClient} {
		if kinds[k] == 0 {
			t.Errorf("no catalog entry is a %s", k)
		}
	}
	for _, tc := range []struct{ yaml, want string }{
		{"writers:\n- {manager: x, is: controller, component: X}\n", "entry 0 (x): needs a component and a source"},
		{"writers:\n- {manager: x, is: robot, component: X, source: https://x.example}\n", `entry 0 (x): is "robot"`},
		{"writers:\n- {manager: x, is: person, component: X, source: https://x.example, owns: [/spec]}\n", "a person owns no field"},
		{"writers:\n- {manager: x, is: controller, component: X, source: https://x.example, owns: [spec.replicas]}\n", "owns: \"spec.replicas\" is not a JSON pointer"},
		{"writers:\n- {manager: x, is: controller, component: X, source: https://x.example}\n- {manager: x, is: person, component: X, source: https://x.example}\n", "manager x is listed twice"},
		{"writers:\n- {manager: x, is: controller, component: X, source: https://x.example, role: admin}\n", "field role not found"},
	} {
		if _, err := classifiers.ParseCatalog([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("catalog %q: error %v, want one with %q", tc.yaml, err, tc.want)
		}
	}
}

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
	for _, w := range classifiers.Catalog {
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
