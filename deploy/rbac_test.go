package deploy_test

import (
	"slices"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/kube"
	"github.com/driftfix/driftfix/remediations/render"
)

// grants says whether one of the rules allows verb on group/resource, on
// every object of it (name "") or on the one object name.
func grants(rules []any, a kube.Access) bool {
	for _, r := range rules {
		has := func(key, v string) bool { return slices.Contains(drift.List(r, key), any(v)) }
		names := drift.List(r, "resourceNames")
		if has("apiGroups", a.Group) && has("resources", a.Resource) && has("verbs", a.Verb) &&
			(len(names) == 0 || (a.Name != "" && slices.Contains(names, any(a.Name)))) {
			return true
		}
	}
	return false
}

// TestRBACGrantsWhatTheCollectorReads: the chart's and the Kustomize base's
// RBAC grant every request the cluster collector (kube.Read) makes, as
// kube.ReadAccess declares them (a test in bot/kube checks the declaration
// against the requests): cluster-wide reads by the ClusterRole, argocd-cm by
// the Role in Argo CD's namespace. The ClusterRole names no resource the
// collector does not read, and grants on each only the verbs it uses (list:
// no get or watch).
func TestRBACGrantsWhatTheCollectorReads(t *testing.T) {
	chart, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	kust, err := render.Kustomize(files(t, "kustomize"), "kustomize")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string][]string{} // group/resource: verbs
	for _, a := range kube.ReadAccess() {
		used[a.Group+"/"+a.Resource] = append(used[a.Group+"/"+a.Resource], a.Verb)
	}
	for name, objs := range map[string][]drift.Object{"chart": chart, "kustomize base": kust} {
		o := byKey(objs)
		cluster := drift.List(o["ClusterRole /driftfix"], "rules")
		cm := drift.List(o["Role argocd/driftfix-argocd-cm"], "rules")
		for _, a := range kube.ReadAccess() {
			rules := cluster
			if a.Name != "" {
				rules = cm
			}
			if !grants(rules, a) {
				t.Errorf("%s: the RBAC does not grant %s on %s.%s %s, which kube.Read uses", name, a.Verb, a.Resource, a.Group, a.Name)
			}
		}
		for _, r := range cluster {
			for _, g := range drift.List(r, "apiGroups") {
				for _, res := range drift.List(r, "resources") {
					key := g.(string) + "/" + res.(string)
					verbs, ok := used[key]
					if !ok {
						t.Errorf("%s: the ClusterRole grants %s, which kube.Read does not read", name, key)
						continue
					}
					var got []string
					for _, v := range drift.List(r, "verbs") {
						got = append(got, v.(string))
					}
					if !slices.Equal(got, verbs) {
						t.Errorf("%s: the ClusterRole grants %v on %s, kube.Read uses %v", name, got, key, verbs)
					}
				}
			}
		}
	}
}
