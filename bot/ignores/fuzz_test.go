package ignores

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// FuzzFind reads arbitrary repository files for a declaration: it never
// panics, and a line it returns is in the file.
func FuzzFind(f *testing.F) {
	snaps := load(f, "platform.yaml")
	f.Add(snaps[0].Repo.Files["apps/shop.yaml"], "/spec/ignoreDifferences/2")
	f.Add(snaps[0].Repo.Files["argocd/argocd-cm.yaml"], "/data/resource.compareoptions")
	f.Add("kind: Application\nmetadata: {name: shop}\nspec: &a {ignoreDifferences: [*a]}\n", "/spec/ignoreDifferences/0")
	f.Add("---\n- 1\n---\nkind: Application\nmetadata:\n  name: shop\n", "/metadata/name")
	f.Fuzz(func(t *testing.T, src, ptr string) {
		p, err := drift.ParsePointer(ptr)
		if err != nil {
			return
		}
		holder := drift.Ref{Group: "argoproj.io", Kind: "Application", Name: "shop"}
		if strings.Contains(src, "ConfigMap") {
			holder = drift.Ref{Kind: "ConfigMap", Name: "argocd-cm"}
		}
		line, _, ok, err := Find([]byte(src), holder, p)
		if err != nil || !ok {
			return
		}
		if n := strings.Count(src, "\n") + 1; line < 1 || line > n {
			t.Errorf("line %d of a %d-line file", line, n)
		}
	})
}

// FuzzInventoryArgoCDCM puts arbitrary text in argocd-cm's rule keys: the
// inventory fails with an error or reports, never panics, and never shows
// the Secret's value.
func FuzzInventoryArgoCDCM(f *testing.F) {
	f.Add("jsonPointers: [/data]", "ignoreAggregatedRoles: true\nignoreResourceStatusField: none")
	f.Add("managedFieldsManagers: [kube-controller-manager]\njqPathExpressions: ['..']", "ignoreResourceStatusField: all")
	f.Add("jqPathExpressions: ['.data | to_entries[]']", "{")
	f.Fuzz(func(t *testing.T, rule, opts string) {
		snaps := load(t, "shop.yaml")
		for _, o := range snaps[0].Cluster {
			if drift.Str(o, "metadata", "name") == "argocd-cm" {
				data := drift.Map(o, "data")
				data["resource.customizations.ignoreDifferences.all"] = rule
				data["resource.customizations.ignoreResourceUpdates.Secret"] = rule
				data["resource.compareoptions"] = opts
			}
		}
		rep, err := Inventory(snaps, Options{})
		if err != nil {
			return
		}
		js, err := json.Marshal(rep)
		if err != nil {
			t.Fatalf("encode report: %v", err)
		}
		for _, out := range []string{string(js), string(Text(rep))} {
			if strings.Contains(out, "cm90YXRlZC1zZWNyZXQtdmFsdWU=") || strings.Contains(out, "Z2l0LXRva2VuLXZhbHVl") {
				t.Fatalf("the report shows the Secret's value")
			}
		}
	})
}
