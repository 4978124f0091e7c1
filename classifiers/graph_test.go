package classifiers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// appSynced is an Application whose last sync applied the named resources
// (kind/name, in namespace shop).
func appSynced(resources ...string) string {
	out := strings.Replace(defaultApp, "status: {sync: {status: OutOfSync}}", "status:\n  sync: {status: OutOfSync}", 1) + "  operationState:\n    phase: Succeeded\n    syncResult:\n      resources:\n"
	for _, r := range resources {
		var group, kind, name string
		fmt.Sscanf(r, "%s %s %s", &group, &kind, &name)
		if group == "-" {
			group = ""
		}
		out += fmt.Sprintf("      - {group: %q, kind: %s, name: %s, namespace: shop, status: Synced}\n", group, kind, name)
	}
	return out
}

const (
	ttlJob = `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  ttlSecondsAfterFinished: 100
  template: {spec: {restartPolicy: Never, containers: [{name: migrate, image: migrate:1}]}}
`
	plainCM = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {a: "1"}
`
	ownedCM = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
  ownerReferences: [{apiVersion: example.com/v1, kind: Widget, name: w1, uid: 1111, controller: true}]
data: {a: "1"}
`
	addonCM = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop, labels: {addonmanager.kubernetes.io/mode: Reconcile}}
data: {a: "1"}
`
	cleanupRole = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cleanup, namespace: shop}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, delete]}]
`
	cleanupBinding = `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: cleanup, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cleanup}
subjects: [{kind: ServiceAccount, name: cleanup, namespace: shop}]
`
	widget = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: shop, uid: 1111}
`
)

// TestMissingObjects: an object Git declares and the last sync applied is a
// controller's deletion where Git's manifest asks for one (a TTL, an owner
// that does not exist, an add-on manager's label) or the application's own
// automation may delete it; a person's by elimination otherwise, with what
// was ruled out; and not established where the sync never applied it.
func TestMissingObjects(t *testing.T) {
	tests := []struct {
		name string
		s    snap
		cl   classifiers.Classifier
		want want
	}{
		{"a Job's TTL deleted it", snap{app: appSynced("batch Job migrate"), target: ttlJob}, classifiers.ControllerWrite,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"sets /spec/ttlSecondsAfterFinished", "TTL-after-finished controller"}}},
		{"a TTL that cannot have expired yet explains nothing", snap{app: strings.Replace(appSynced("batch Job migrate"), "    phase: Succeeded\n", "    phase: Succeeded\n    finishedAt: \"2025-01-01T10:00:00Z\"\n", 1) + "  reconciledAt: \"2025-01-01T10:00:30Z\"\n", target: ttlJob}, classifiers.ManualChange,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"ruled out: /spec/ttlSecondsAfterFinished", "less than 100 seconds later"}}},
		{"nothing explains it: a person, by elimination", snap{app: appSynced("- ConfigMap settings"), target: plainCM}, classifiers.ManualChange,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"the last sync applied", "ruled out: Git's manifest has no /metadata/ownerReferences", "ruled out: no label addonmanager.kubernetes.io/mode", "a person"}}},
		{"never applied by the last sync: not established", snap{target: plainCM}, classifiers.ManualChange,
			want{claims: false, cause: drift.CauseUnknown}},
		{"its owner does not exist: the garbage collector", snap{app: appSynced("- ConfigMap settings"), target: ownedCM}, classifiers.ControllerWrite,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"names Widget w1 as its owner", "garbage collector"}}},
		{"its owner exists: not the garbage collector", snap{app: appSynced("- ConfigMap settings"), target: ownedCM, cluster: []string{widget}}, classifiers.ControllerWrite,
			want{claims: false, cause: drift.CauseManualChange}},
		{"the add-on manager's label: pruned", snap{app: appSynced("- ConfigMap settings"), target: addonCM}, classifiers.ControllerWrite,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"addonmanager.kubernetes.io/mode=Reconcile", "add-on manager"}}},
		{"a role of the application lets its own service account delete it", snap{app: appSynced("- ConfigMap settings"), target: plainCM, inGit: []string{cleanupRole, cleanupBinding}}, classifiers.ControllerWrite,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"Role cleanup", "shop/cleanup delete configmaps"}}},
		{"a role for another kind rules nothing in", snap{app: appSynced("- ConfigMap settings"), target: plainCM,
			inGit: []string{replaceOnce(cleanupRole, "configmaps", "secrets"), cleanupBinding}}, classifiers.ManualChange,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange, evidence: []string{"ruled out: no role the application deploys"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkDiff(t, tt.cl, tt.s, "", tt.want) })
	}
}

// TestLabelledAndRBACWriters: a write under a person's tool's name is a
// program's where the object's label names the component that manages it, or
// where the application's RBAC lets a workload running a program of that
// name write exactly this object.
func TestLabelledAndRBACWriters(t *testing.T) {
	cm := func(labels, manager string) string {
		return fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-dns
  namespace: shop
  labels: {%s}
  managedFields:
  - {manager: argocd-controller, operation: Update, apiVersion: v1, time: "2025-01-01T00:00:00Z", fieldsV1: {f:metadata: {f:labels: {}}}}
  - {manager: %s, operation: Update, apiVersion: v1, time: "2025-01-02T00:00:00Z", fieldsV1: {f:data: {f:a: {}}}}
data: {a: "2"}
`, labels, manager)
	}
	git := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-dns, namespace: shop, labels: {addonmanager.kubernetes.io/mode: Reconcile}}\ndata: {a: \"1\"}\n"
	secret := func(manager string) string {
		return fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata:
  name: ui-csrf
  namespace: shop
  managedFields:
  - {manager: %s, operation: Update, apiVersion: v1, time: "2025-01-02T00:00:00Z", fieldsV1: {f:data: {f:csrf: {}}}}
data: {csrf: bmV3}
`, manager)
	}
	role := `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: ui, namespace: shop}
rules: [{apiGroups: [""], resources: [secrets], resourceNames: [ui-csrf], verbs: [get, update]}]
`
	binding := replaceOnce(replaceOnce(cleanupBinding, "name: cleanup}", "name: ui}"), "name: cleanup, namespace: shop}\nroleRef", "name: ui, namespace: shop}\nroleRef")
	binding = replaceOnce(binding, "{kind: ServiceAccount, name: cleanup", "{kind: ServiceAccount, name: ui")
	ui := `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ui, namespace: shop}
spec:
  selector: {matchLabels: {app: ui}}
  template:
    metadata: {labels: {app: ui}}
    spec: {serviceAccountName: ui, containers: [{name: ui, image: "registry.example.com/kubernetesui/dashboard:v2.7.0"}]}
`
	gitSecret := "apiVersion: v1\nkind: Secret\nmetadata: {name: ui-csrf, namespace: shop}\ndata: {csrf: \"\"}\n"
	tests := []struct {
		name string
		s    snap
		path string
		cl   classifiers.Classifier
		want want
	}{
		{"kubectl under the add-on manager's label is the add-on manager", snap{target: git, live: cm("addonmanager.kubernetes.io/mode: Reconcile", "kubectl-client-side-apply")}, "/data/a",
			classifiers.ControllerWrite, want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"managed by the cluster's add-on manager"}}},
		{"a label only live has is anyone's: kubectl is a person", snap{target: replaceOnce(git, "addonmanager.kubernetes.io/mode: Reconcile", "app: dns"), live: cm("addonmanager.kubernetes.io/mode: Reconcile", "kubectl-client-side-apply")}, "/data/a",
			classifiers.ManualChange, want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange}},
		{"kubectl without the label is a person", snap{target: replaceOnce(git, "addonmanager.kubernetes.io/mode: Reconcile", "app: dns"), live: cm("app: dns", "kubectl-client-side-apply")}, "/data/a",
			classifiers.ManualChange, want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange}},
		{"the dashboard's own Secret, by the role that names it", snap{target: gitSecret, live: secret("dashboard"), inGit: []string{role, binding, ui}}, "/data/csrf",
			classifiers.ControllerWrite, want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"Role ui", "update Secret ui-csrf by name", "the program dashboard"}}},
		{"no role names the Secret: an edit in the dashboard is a person's", snap{target: gitSecret, live: secret("dashboard"), inGit: []string{ui}}, "/data/csrf",
			classifiers.ManualChange, want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange}},
		{"kubectl edit of a Secret the role names is still a person", snap{target: gitSecret, live: secret("kubectl-edit"), inGit: []string{role, binding, ui}}, "/data/csrf",
			classifiers.ManualChange, want{claims: true, fix: drift.FixNone, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkDiff(t, tt.cl, tt.s, tt.path, tt.want) })
	}
}

// TestGraphReferences: a manager that writes the status of an object whose
// field (in the catalog's references) names this one is its controller.
func TestGraphReferences(t *testing.T) {
	es := `
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: db
  namespace: shop
  managedFields:
  - {manager: external-secrets, operation: Update, subresource: status, apiVersion: external-secrets.io/v1beta1, time: "2025-01-02T00:00:00Z", fieldsV1: {f:status: {f:conditions: {}}}}
spec: {target: {name: db-credentials}, secretStoreRef: {kind: ClusterSecretStore, name: vault}}
`
	git := "apiVersion: v1\nkind: Secret\nmetadata: {name: db-credentials, namespace: shop}\ndata: {password: b2xk}\n"
	live := `
apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
  namespace: shop
  managedFields:
  - {manager: external-secrets, operation: Update, apiVersion: v1, time: "2025-01-02T00:00:00Z", fieldsV1: {f:data: {f:password: {}}}}
data: {password: bmV3}
`
	checkDiff(t, classifiers.ControllerWrite, snap{target: git, live: live, inGit: []string{es}}, "/data/password",
		want{claims: true, fix: drift.FixNone, cause: drift.CauseControllerWrite, evidence: []string{"writes the status of ExternalSecret shop/db, whose spec.target.name names this object"}})
	other := replaceOnce(es, "target: {name: db-credentials}", "target: {name: another}")
	checkDiff(t, classifiers.ControllerWrite, snap{target: git, live: live, inGit: []string{other}}, "/data/password",
		want{claims: false, cause: drift.CauseUnknown})
}

// TestAdmissionByAnnotation and TestFeatureGates: admission with no webhook
// object, known by its annotation, and a field a gate that is off drops.
func TestAdmissionByAnnotation(t *testing.T) {
	dep := func(cpu, ann string) string {
		return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations: {%s}
  managedFields:
  - {manager: argocd-controller, operation: Update, apiVersion: apps/v1, time: "2025-01-01T00:00:00Z", fieldsV1: {f:spec: {f:template: {f:spec: {f:containers: {}}}}}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:1, resources: {requests: {cpu: %s}}}]}
`, ann, cpu)
	}
	git := replaceOnce(replaceOnce(dep("10m", ""), "  managedFields:\n  - {manager: argocd-controller, operation: Update, apiVersion: apps/v1, time: \"2025-01-01T00:00:00Z\", fieldsV1: {f:spec: {f:template: {f:spec: {f:containers: {}}}}}}\n", ""), "  annotations: {}\n", "")
	checkDiff(t, classifiers.WebhookMutation, snap{target: git, live: dep("250m", `autopilot.gke.io/resource-adjustment: '{"modified":true}'`)}, "/spec/template/spec/containers/0/resources/requests/cpu",
		want{claims: true, fix: drift.FixNone, cause: drift.CauseWebhookMutation, evidence: []string{"The object carries the annotation autopilot.gke.io/resource-adjustment", "GKE Autopilot"}})
	checkDiff(t, classifiers.WebhookMutation, snap{target: git, live: dep("250m", "")}, "/spec/template/spec/containers/0/resources/requests/cpu",
		want{claims: false, cause: drift.CauseUnknown})
}

func TestFeatureGates(t *testing.T) {
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: shop}\nspec: {type: LoadBalancer, allocateLoadBalancerNodePorts: false, ports: [{port: 3306}]}\n"
	live := "apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: shop}\nspec: {type: LoadBalancer, ports: [{port: 3306}]}\n"
	node := func(v string) string {
		return "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {nodeInfo: {kubeletVersion: " + v + "}}\n"
	}
	for _, tt := range []struct {
		name    string
		cluster []string
		want    want
	}{
		{"off by default on 1.21", []string{node("v1.21.7"), node("v1.22.1")}, want{claims: true, fix: drift.FixNone, cause: drift.CauseNormalized, evidence: []string{"ServiceLBNodePortControl", "nodes run 1.21"}}},
		{"version unknown", nil, want{claims: true, fix: drift.FixNone, evidence: []string{"no node to tell the cluster's version"}}},
		{"on by default on 1.24: not the gate", []string{node("v1.24.3")}, want{absent: []string{"feature gate"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := diagnose(t, snap{target: svc, live: live, cluster: tt.cluster}.build(t))
			var d *drift.Difference
			for i := range in.Comparison.Diffs {
				if in.Comparison.Diffs[i].Path.String() == "/spec/allocateLoadBalancerNodePorts" {
					d = &in.Comparison.Diffs[i]
				}
			}
			if d == nil {
				t.Fatal("no difference at /spec/allocateLoadBalancerNodePorts")
			}
			v, ok := classifiers.Normalized.Classify(&classifiers.Case{Input: in, Diff: d})
			if tt.want.claims {
				checkVerdict(t, classifiers.Normalized, v, ok, tt.want)
				return
			}
			for _, e := range v.Evidence {
				if e.Kind == drift.EvidenceFeatureGate {
					t.Errorf("a gate on by default at the cluster's version explains nothing: %q", e.Text)
				}
			}
		})
	}
}
