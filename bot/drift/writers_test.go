package drift

import (
	"strings"
	"testing"
)

// TestCatalog: the built-in writer catalog is data with a component and a
// source per entry, and a catalog that breaks that is refused naming the entry.
func TestCatalog(t *testing.T) {
	if len(Catalog) < 20 {
		t.Fatalf("the catalog has %d entries", len(Catalog))
	}
	kinds := map[WriterKind]int{}
	for _, w := range Catalog {
		kinds[w.Is]++
		if w.Component == "" || !strings.HasPrefix(w.Source, "https://") {
			t.Errorf("%s: component %q, source %q", w.Manager, w.Component, w.Source)
		}
	}
	for _, k := range []WriterKind{WriterController, WriterPerson, WriterClient} {
		if kinds[k] == 0 {
			t.Errorf("no catalog entry is a %s", k)
		}
	}
	for _, tc := range []struct{ yaml, want string }{
		{"writers:\n- {manager: x, is: controller, component: X}\n", "entry 1 (x): needs a component and a source"},
		{"writers:\n- {manager: x, is: robot, component: X, source: https://x.example}\n", `entry 1 (x): is "robot"`},
		{"writers:\n- {manager: x, is: person, component: X, source: https://x.example, owns: [/spec]}\n", "a person owns no field"},
		{"writers:\n- {manager: x, is: controller, component: X, source: https://x.example, owns: [spec.replicas]}\n", "owns: \"spec.replicas\" is not a JSON pointer"},
		{"writers:\n- {manager: x, is: controller, component: X, source: https://x.example}\n- {manager: x, is: person, component: X, source: https://x.example}\n", "entry 2 (x): manager x is listed twice"},
		{"writers:\n- {manager: x, is: controller, component: X, source: https://x.example, role: admin}\n", "field role not found"},
		{"writers:\n- {manager: x, is: controller, part: admin, component: X, source: https://x.example}\n", `entry 1 (x): part "admin"`},
		{"writers:\n- {manager: x, is: person, part: argocd, component: X, source: https://x.example}\n", `entry 1 (x): part "argocd" is a controller's`},
		{"writers:\n- {manager: x-*, is: controller, part: kubernetes, component: X, source: https://x.example}\n", "entry 1 (x-*): part kubernetes needs an exact manager name"},
		{"writers:\n- {manager: x, is: controller, how: x edit, component: X, source: https://x.example}\n", "entry 1 (x): how is for a person's tool"},
		{"writers:\n- {manager: x-*, is: person, component: X, source: https://x.example}\n- {manager: x-edit, is: person, how: x edit, component: X, source: https://x.example}\n", "entry 2 (x-edit): the glob x-* before it matches x-edit"},
	} {
		if _, err := ParseCatalog([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("catalog %q: error %v, want one with %q", tc.yaml, err, tc.want)
		}
	}
}

// TestCatalogViews: what the readers of the catalog see in it: Argo CD's
// own managers (bot/diff, the classifiers, the policy parser), Kubernetes'
// own components (bot/diff), and how a person's tool changed a field
// (classifiers' manual-change), each from its entry.
func TestCatalogViews(t *testing.T) {
	for m, want := range map[string]bool{"argocd-controller": true, "argocd-application-controller": true, "argocd-server": false, "argocd": false, "kube-controller-manager": false} {
		if ArgoCDManagers[m] != want {
			t.Errorf("ArgoCDManagers[%s] = %v, want %v", m, ArgoCDManagers[m], want)
		}
	}
	for m, want := range map[string]bool{"kube-controller-manager": true, "kube-apiserver": true, "kube-scheduler": true, "argocd-controller": false, "cainjector": false} {
		if KubernetesManagers[m] != want {
			t.Errorf("KubernetesManagers[%s] = %v, want %v", m, KubernetesManagers[m], want)
		}
	}
	for m, want := range map[string]string{"kubectl-edit": "kubectl edit", "kubectl-client-side-apply": "kubectl apply", "kubectl-rollout": "kubectl rollout",
		"argocd-server": "an edit in Argo CD's UI or API (argocd app patch-resource)", "kubectl-debug": "", "kubectl": "", "helm": "", "nobody-knows": ""} {
		got := ""
		if w := CatalogWriter(m); w != nil {
			got = w.How
		}
		if got != want {
			t.Errorf("how %s changed a field: %q, want %q", m, got, want)
		}
	}
}

// TestAddingAWriterIsOneEntry: a new component is one entry of writers.yaml
// (docs/development.md, "How to add a writer"): appended to the catalog, it
// is read with its part or how, and every reader's view follows from it.
func TestAddingAWriterIsOneEntry(t *testing.T) {
	data := string(catalogYAML) +
		"- {manager: acme-sync, is: controller, part: argocd, component: a fork of Argo CD's controller, source: https://acme.example/sync}\n" +
		"- {manager: acmectl-tweak, is: person, how: acmectl tweak, component: acmectl, source: https://acme.example/acmectl}\n"
	ws, err := ParseCatalog([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != len(Catalog)+2 {
		t.Fatalf("%d entries, want %d", len(ws), len(Catalog)+2)
	}
	saved := Catalog
	defer func() { Catalog = saved }()
	Catalog = ws
	if !catalogManagers(PartArgoCD)["acme-sync"] {
		t.Error("an entry with part: argocd is one of Argo CD's managers")
	}
	if w := CatalogWriter("acmectl-tweak"); w == nil || w.How != "acmectl tweak" || w.Is != WriterPerson {
		t.Errorf("the person's tool: %+v", w)
	}
}
