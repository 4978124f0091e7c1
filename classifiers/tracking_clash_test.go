package classifiers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// flags is ConfigMap shop/flags; labels, annotations and data are bodies of
// flow maps, managedFields the body of a flow list.
func flags(labels, annotations, data, managedFields string) string {
	return fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: flags, namespace: shop, labels: {%s}, annotations: {%s}, managedFields: [%s]}, data: {%s}}`,
		labels, annotations, managedFields, data)
}

func argocdCM(method string) string {
	return fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: argocd-cm, namespace: argocd}, data: {application.resourceTrackingMethod: %q}}`, method)
}

const (
	argoOwnsFlags   = `{manager: argocd-controller, operation: Update, apiVersion: v1, time: "2026-09-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:BETA": {}}, "f:metadata": {"f:annotations": {"f:argocd.argoproj.io/tracking-id": {}}, "f:labels": {"f:app.kubernetes.io/instance": {}}}}}`
	fluxOwnsLabel   = `{manager: kustomize-controller, operation: Apply, apiVersion: v1, time: "2026-09-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:app.kubernetes.io/instance": {}}}}}`
	kubectlOwnsBeta = `{manager: kubectl-edit, operation: Update, apiVersion: v1, time: "2026-09-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:BETA": {}}}}`
	shopID          = `argocd.argoproj.io/tracking-id: "shop:/ConfigMap:shop/flags"`
	billingID       = `argocd.argoproj.io/tracking-id: "billing:/ConfigMap:shop/flags"`
)

func TestTrackingClash(t *testing.T) {
	const (
		label = "/metadata/labels/app.kubernetes.io~1instance"
		annot = "/metadata/annotations/argocd.argoproj.io~1tracking-id"
		beta  = "/data/BETA"
	)
	tests := []struct {
		name string
		s    snap
		path string
		want want
	}{
		{"Flux writes the instance label Argo CD tracks by", snap{target: flags("app.kubernetes.io/instance: shop", shopID, `BETA: "false"`, ""),
			live:    flags("app.kubernetes.io/instance: shop-flux", shopID, `BETA: "false"`, argoOwnsFlags+", "+fluxOwnsLabel),
			cluster: []string{argocdCM("annotation+label")}}, label,
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash, evidence: []string{
				"application.resourceTrackingMethod is annotation+label", `label app.kubernetes.io/instance="shop"`,
				"carries app.kubernetes.io/instance=(not shown: a 9-byte string another writer put there", "kustomize-controller writes that label back"}}},
		{"no argocd-cm, and the targets carry only the instance label: label tracking (before Argo CD 3.0)", snap{target: flags("app.kubernetes.io/instance: shop", "", `BETA: "false"`, ""),
			live: flags("app.kubernetes.io/instance: shop-flux", "", `BETA: "false"`, argoOwnsFlags+", "+fluxOwnsLabel)}, label,
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash, evidence: []string{
				"carries its label tracking metadata, so tracking is by label"}}},
		{"with annotation tracking the label is no tracking metadata", snap{target: flags("app.kubernetes.io/instance: shop", shopID, `BETA: "false"`, ""),
			live:    flags("app.kubernetes.io/instance: shop-flux", shopID, `BETA: "false"`, argoOwnsFlags+", "+fluxOwnsLabel),
			cluster: []string{argocdCM("annotation")}}, label,
			want{claims: false, cause: drift.CauseControllerWrite}},
		{"another application's tracking annotation", snap{target: flags("", shopID, `BETA: "false"`, ""),
			live: flags("", billingID, `BETA: "false"`, argoOwnsFlags)}, annot,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseTrackingClash, evidence: []string{
				"argocd-cm names no tracking method, and the desired state Argo CD compares carries its annotation tracking metadata", `belongs to "billing", not to "shop"`, "two Applications render the same object"}}},
		{"a field of an object another application synced", snap{target: flags("", shopID, `BETA: "false"`, ""),
			live: flags("", billingID, `BETA: "true"`, argoOwnsFlags)}, beta,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseTrackingClash, evidence: []string{
				`belongs to Application "billing", not to "shop"`, "written by argocd-controller", `Git declares "false" here, the other application (not shown: a 4-byte string another writer put there`}}},
		{"a field Argo CD wrote on an object another instance's application of the same name deploys too", snap{target: flags("", shopID, `BETA: "false"`, ""),
			live: flags("", shopID, `BETA: "true"`, argoOwnsFlags), cluster: []string{otherApp("argocd-two", "shop", "argocd-two", inCluster, "flags")}}, beta,
			want{claims: true, fix: drift.FixNone, cause: drift.CauseTrackingClash, evidence: []string{
				"Application argocd-two/shop, of another Argo CD instance (in argocd-two), also lists ConfigMap shop/flags in its status.resources, not as an extra to prune",
				"written by argocd-controller (Update, 2026-09-01T00:00:00Z), Argo CD's own sync", `Git declares "false" here, the other application (not shown: a 4-byte string another writer put there`}}},
		{"the same when the other application would prune it: no evidence it deploys it", snap{target: flags("", shopID, `BETA: "false"`, ""),
			live: flags("", shopID, `BETA: "true"`, argoOwnsFlags), cluster: []string{replaceOnce(otherApp("argocd-two", "shop", "argocd-two", inCluster, "flags"), "status: Synced", "status: OutOfSync, requiresPruning: true")}}, beta,
			want{claims: false}},
		{"the same with no other application listing it", snap{target: flags("", shopID, `BETA: "false"`, ""),
			live: flags("", shopID, `BETA: "true"`, argoOwnsFlags)}, beta,
			want{claims: false}},
		{"a person's change on an object another application deploys too is the person's", snap{target: flags("", shopID, `BETA: "false"`, ""),
			live: flags("", shopID, `BETA: "true"`, argoOwnsFlags+", "+kubectlOwnsBeta), cluster: []string{otherApp("argocd-two", "shop", "argocd-two", inCluster, "flags")}}, beta,
			want{claims: false, cause: drift.CauseManualChange}},
		{"a field a person changed on the application's own object", snap{target: flags("", shopID, `BETA: "false"`, ""),
			live: flags("", shopID, `BETA: "true"`, argoOwnsFlags+", "+kubectlOwnsBeta)}, beta,
			want{claims: false, cause: drift.CauseManualChange}},
		{"a field a person changed on another application's object", snap{target: flags("", shopID, `BETA: "false"`, ""),
			live: flags("", billingID, `BETA: "true"`, argoOwnsFlags+", "+kubectlOwnsBeta)}, beta,
			want{claims: false, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.TrackingClash, tt.s, tt.path, tt.want)
		})
	}
}

// orphan is ConfigMap shop/flags in the cluster only, with a tracking label
// and annotation that manager wrote; owned adds a controller ownerReference.
func orphan(manager string, owned bool) string {
	refs := ""
	if owned {
		refs = `, ownerReferences: [{apiVersion: example.com/v1, kind: FlagSet, name: flags, uid: 6d1f, controller: true}]`
	}
	return `{apiVersion: v1, kind: ConfigMap, metadata: {name: flags, namespace: shop, labels: {app.kubernetes.io/instance: shop}, annotations: {` + shopID + `}` + refs +
		`, managedFields: [{manager: ` + manager + `, operation: Update, apiVersion: v1, time: "2026-09-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:argocd.argoproj.io/tracking-id": {}}, "f:labels": {"f:app.kubernetes.io/instance": {}}}}}]}, data: {BETA: "false"}}`
}

// TestTrackingClashExtraObject: a live object Git does not declare that
// Argo CD counts as the application's.
func TestTrackingClashExtraObject(t *testing.T) {
	managedBy := func(instance string) string {
		return namespace(`argocd.argoproj.io/managed-by: ` + instance)
	}
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"a controller copied the tracking label onto its child", snap{live: orphan("flagset-operator", true), cluster: []string{argocdCM("label")}},
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash, evidence: []string{
				"ConfigMap shop/flags is not in Git", "label app.kubernetes.io/instance=shop, which flagset-operator", "it is owned by FlagSet flags (ownerReferences)"}}},
		{"another Argo CD instance manages the namespace", snap{live: orphan("argocd-controller", false), cluster: []string{managedBy("argocd-tenants")}},
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash, evidence: []string{
				"its tracking metadata was written by Argo CD", "argocd.argoproj.io/managed-by=argocd-tenants", "controller runs in argocd", "installationID"}}},
		{"this instance manages the namespace: it waits to be pruned", snap{live: orphan("argocd-controller", false), cluster: []string{managedBy("argocd")}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"Argo CD wrote it and no instance is named", snap{live: orphan("argocd-controller", false)},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a person copied the label", snap{live: orphan("kubectl-label", false), cluster: []string{argocdCM("label")}},
			want{claims: false}},

		// Another Application's status.resources is Argo CD's own record.
		{"another instance's application of the same name lists it", snap{live: orphan("argocd-controller", false),
			cluster: []string{otherApp("argocd-two", "shop", "argocd-two", inCluster, "flags")}},
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash, evidence: []string{
				"Application argocd-two/shop lists it in its status.resources (as Synced)", "instance in argocd-two (status.controllerNamespace), this application to the one in argocd",
				`by its tracking id shop:/ConfigMap:shop/flags: the name "shop" is both applications' name`, "installationID"}}},
		{"the same under label tracking, requiring pruning there too", snap{live: orphan("argocd-controller", false),
			cluster: []string{argocdCM("label"), replaceOnce(otherApp("argocd-two", "shop", "argocd-two", inCluster, "flags"), "status: Synced", "status: OutOfSync, requiresPruning: true")}},
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash, evidence: []string{
				"(as OutOfSync, requiring pruning there too)", "by its label app.kubernetes.io/instance=shop", "it may be a leftover of either", "give each its own tracking before pruning it"}}},
		{"the same Application collected twice is one listing", snap{live: orphan("argocd-controller", false),
			cluster: []string{otherApp("argocd-two", "shop", "argocd-two", inCluster, "flags"), otherApp("argocd-two", "shop", "argocd-two", inCluster, "flags")}},
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash}},
		{"an application in another namespace of this instance lists it, by label", snap{live: orphan("argocd-controller", false),
			cluster: []string{argocdCM("label"), otherApp("team-a", "shop", "argocd", inCluster, "flags")}},
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash, evidence: []string{
				"Application team-a/shop lists it", "both applications belong to the Argo CD instance in argocd", "track by annotation"}}},
		{"an application of this instance lists it under annotation tracking", snap{live: orphan("argocd-controller", false),
			cluster: []string{otherApp("argocd", "billing", "argocd", inCluster, "flags")}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseTrackingClash, evidence: []string{"Application argocd/billing lists it"}}},
		{"an application deploying to another cluster lists an object of the same name", snap{live: orphan("argocd-controller", false),
			cluster: []string{otherApp("argocd-two", "shop", "argocd-two", "https://prod.example.com:6443", "flags")}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"another application of the same name lists other objects only", snap{live: orphan("argocd-controller", false),
			cluster: []string{otherApp("argocd-two", "shop", "argocd-two", inCluster, "other")}},
			want{claims: false, cause: drift.CauseUnknown}},

		// The tracking id's application name.
		{"Argo CD wrote a tracking id naming another application; this one counts it by label", snap{live: replaceOnce(orphan("argocd-controller", false), shopID, billingID),
			cluster: []string{argocdCM("label")}},
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash, evidence: []string{
				`its tracking id billing:/ConfigMap:shop/flags, written by Argo CD (argocd-controller`, `names application "billing", not this one ("shop")`,
				"by its label app.kubernetes.io/instance=shop", `no Application tracked as "billing" is in the snapshot`}}},
		{"a tracking id naming an application in another namespace (namespace_name)", snap{live: replaceOnce(orphan("argocd-controller", false), shopID, `argocd.argoproj.io/tracking-id: "team-a_shop:/ConfigMap:shop/flags"`),
			cluster: []string{argocdCM("label")}},
			want{claims: true, fix: drift.FixTrackingMethod, cause: drift.CauseTrackingClash, evidence: []string{`names application "team-a_shop", not this one ("shop")`}}},
		{"under annotation+label the tracking id decides: one naming another application is not this one's", snap{live: replaceOnce(orphan("argocd-controller", false), shopID, billingID),
			cluster: []string{argocdCM("annotation+label")}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"this application's own tracking id: no clash by it", snap{live: orphan("argocd-controller", false), cluster: []string{argocdCM("label")}},
			want{claims: false, cause: drift.CauseUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.TrackingClash, tt.s, "", tt.want)
		})
	}
}

const inCluster = "https://kubernetes.default.svc"

// otherApp is an Application ns/name of the instance in controllerNS,
// deploying to server, whose status.resources lists ConfigMaps shop/<listed>.
func otherApp(ns, name, controllerNS, server string, listed ...string) string {
	res := ""
	for _, l := range listed {
		res += fmt.Sprintf("{version: v1, kind: ConfigMap, namespace: shop, name: %s, status: Synced}, ", l)
	}
	return fmt.Sprintf(`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: %s, namespace: %s}, spec: {project: default, destination: {server: %q, namespace: shop}}, status: {controllerNamespace: %s, resources: [%s]}}`,
		name, ns, server, controllerNS, res)
}

// TestLeftoverEvidence: an object not in Git that nothing shows another
// application to track is said to wait for pruning only as far as the
// snapshot shows it.
func TestLeftoverEvidence(t *testing.T) {
	tests := []struct {
		name string
		s    snap
		want []string
	}{
		{"no other Application in the snapshot", snap{live: orphan("argocd-controller", false)},
			[]string{"ConfigMap shop/flags is in the cluster but not in Git; Argo CD counts it as this application's by its tracking id shop:/ConfigMap:shop/flags",
				"waits to be pruned if this application deployed it", "not ruled out"}},
		{"other Applications, none listing it", snap{live: orphan("argocd-controller", false), cluster: []string{argocdCM("label"), otherApp("argocd-two", "shop", "argocd-two", inCluster, "other")}},
			[]string{"by its label app.kubernetes.io/instance=shop", "none of the 1 other Applications in the snapshot lists it in its status.resources: it waits to be pruned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.Unknown, tt.s, "", want{claims: true, fix: drift.FixNone, cause: drift.CauseUnknown, evidence: tt.want})
		})
	}
}

// TestSecondInstanceOnHeldOut86 takes the held-out case 86 (two Argo CD
// instances, each with an Application named x, tracking by the same label)
// as collected today: with the second instance's Application, which lists
// the ConfigMap in its status.resources, the object is a tracking clash; as
// the snapshot was written, with no other Application, it stays unknown and
// says what could not be ruled out.
func TestSecondInstanceOnHeldOut86(t *testing.T) {
	load := func() *drift.Snapshot {
		s, err := drift.LoadSnapshot("../testdata/heldout/86-two-argocd-instances-same-app-name-label.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	find := func(s *drift.Snapshot) drift.Finding {
		t.Helper()
		for _, f := range classifiers.Run(diagnose(t, s), classifiers.Registry) {
			if f.Resource.Name == "special-config-b" && len(f.Path) == 0 {
				return f
			}
		}
		t.Fatal("no finding for ConfigMap special-config-b")
		return drift.Finding{}
	}
	second := drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "x", "namespace": "argocd-two"},
		"spec":     map[string]any{"project": "default", "destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "bug"}},
		"status": map[string]any{"controllerNamespace": "argocd-two", "resources": []any{
			map[string]any{"version": "v1", "kind": "ConfigMap", "namespace": "bug", "name": "special-config-b", "status": "Synced"}}}}

	s := load()
	s.Cluster = append(s.Cluster, second)
	f := find(s)
	if f.Cause != drift.CauseTrackingClash || f.Remediation.Kind != drift.FixTrackingMethod {
		t.Errorf("with the second instance's Application: %s, fix %s; want tracking-clash, tracking-method (evidence %q)", f.Cause, f.Remediation.Kind, f.Evidence)
	}
	ev := drift.EvidenceText(f.Evidence, "\n")
	for _, w := range []string{"Application argocd-two/x lists it in its status.resources", "instance in argocd-two", `label app.kubernetes.io/instance=x: the name "x" is both applications' name`} {
		if !strings.Contains(ev, w) {
			t.Errorf("evidence lacks %q:\n%s", w, ev)
		}
	}

	f = find(load())
	if f.Cause != drift.CauseUnknown || !strings.Contains(drift.EvidenceText(f.Evidence, "\n"), "not ruled out") {
		t.Errorf("as written: %s, evidence %q; want unknown that does not rule another instance out", f.Cause, f.Evidence)
	}
}
