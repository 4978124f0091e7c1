package classifiers_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// labelled is Deployment shop/web with labels (the body of a flow map) and
// managedFields (the body of a flow list).
func labelled(labels string, managedFields string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {%s}
  managedFields: [%s]
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "registry.example.com/web:1.0"}]}
`, labels, managedFields)
}

const argoOwnsLabels = `{manager: argocd-controller, operation: Apply, apiVersion: apps/v1, time: "2026-09-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:app": {}, "f:team": {}, "f:skip": {}}}, "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}}`

const kubectlOwnsTeam = `{manager: kubectl-label, operation: Update, apiVersion: apps/v1, time: "2026-09-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:team": {}}}}}`

func namespace(labels string) string {
	return fmt.Sprintf("{apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {%s}}}", labels)
}

func mutator(nsSelector, objSelector, resources string) string {
	return fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: policy-mutator}
webhooks:
- name: team.policy.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {service: {name: policy, namespace: policy-system, path: /mutate}}
  namespaceSelector: %s
  objectSelector: %s
  rules: [{apiGroups: ["apps"], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [%s], scope: Namespaced}]
`, nsSelector, objSelector, resources)
}

// withConditions adds matchConditions (name, expression pairs) to a webhook
// configuration made by mutator.
func withConditions(cfg string, pairs ...string) string {
	var b strings.Builder
	b.WriteString("  matchConditions:\n")
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, "  - name: %s\n    expression: %q\n", pairs[i], pairs[i+1])
	}
	return replaceOnce(cfg, "  rules:", b.String()+"  rules:")
}

// ssaApp syncs with server-side apply, so a field Git does not declare shows
// in the diff when the live object has it.
var ssaApp = strings.Replace(defaultApp, "  source:", "  syncPolicy: {syncOptions: [ServerSideApply=true]}\n  source:", 1)

const enforced = `{matchLabels: {enforce: "true"}}`

func TestWebhookMutation(t *testing.T) {
	const path = "/metadata/labels/team"
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"a webhook adds a label", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), mutator(enforced, "{}", "deployments")}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{
				"MutatingWebhookConfiguration policy-mutator (webhook team.policy.example.com) admits this object: rule apps/v1 deployments on CREATE, UPDATE",
				"namespaceSelector enforce=true matches Namespace shop", "recorded under argocd-controller", "the webhook adds (not shown: a 4-byte string another writer put there"}}},
		{"a webhook overwrites Git's value", snap{app: ssaApp, target: labelled("app: web, team: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), mutator(enforced, "{}", `"*"`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"Git declares \"web\", the webhook stores (not shown: a 4-byte string another writer put there"}}},
		{"the Namespace was not collected: only its name label is known", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{mutator(`{matchLabels: {kubernetes.io/metadata.name: shop}}`, "{}", "deployments")}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"labels not collected; only kubernetes.io/metadata.name known"}}},
		{"the namespaceSelector excludes the namespace", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "false"`), mutator(enforced, "{}", "deployments")}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"the objectSelector excludes the object", snap{app: ssaApp, target: labelled(`app: web, skip: "yes"`, ""), live: labelled(`app: web, skip: "yes", team: shop`, argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), mutator(enforced, "{matchExpressions: [{key: skip, operator: DoesNotExist}]}", "deployments")}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"the rules admit other resources only", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), mutator(enforced, "{}", "statefulsets")}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a rule for cluster-scoped objects only", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), replaceOnce(mutator(enforced, "{}", "deployments"), "scope: Namespaced", "scope: Cluster")}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"two webhooks admit it: the first is named, the other counted", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), mutator(enforced, "{}", "deployments"), replaceOnce(mutator("{}", "{}", "deployments"), "policy-mutator", "sidecar-injector")}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"MutatingWebhookConfiguration policy-mutator", "1 other mutating webhooks also admit this object"}}},
		// The API server's own matchers decide (k8s.io/apiserver's webhook predicates).
		{"resources */* admit the object itself", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), replaceOnce(mutator(enforced, "{}", `"*/*"`), `apiGroups: ["apps"]`, `apiGroups: ["*"]`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{`rule apps/v1 deployments on CREATE, UPDATE (the rule names apiGroups ["*"]`}}},
		{"resources deployments/* admit the object itself", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), mutator(enforced, "{}", `"deployments/*"`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation}},
		{"resources deployments/status admit only the status subresource", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), mutator(enforced, "{}", `"deployments/status"`)}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a rule for DELETE only", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), replaceOnce(mutator(enforced, "{}", "deployments"), "[CREATE, UPDATE]", "[DELETE]")}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"operations * admit a create", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), replaceOnce(mutator(enforced, "{}", "deployments"), "[CREATE, UPDATE]", `["*"]`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation}},
		{"the objectSelector matches the old object (Git's labels), not the new one", snap{app: ssaApp, target: labelled(`app: web, inject: "yes"`, ""), live: labelled(`app: web, team: shop`, argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), mutator(enforced, `{matchLabels: {inject: "yes"}}`, "deployments")}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"objectSelector inject=yes matches"}}},
		{"matchPolicy Equivalent: a rule naming another served version admits it", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), replaceOnce(mutator(enforced, "{}", "deployments"), `apiVersions: ["*"]`, `apiVersions: ["v1beta2"]`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"matchPolicy Equivalent"}}},
		{"matchPolicy Exact: a rule naming another version does not", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), replaceOnce(replaceOnce(mutator(enforced, "{}", "deployments"), `apiVersions: ["*"]`, `apiVersions: ["v1beta2"]`), "  rules:", "  matchPolicy: Exact\n  rules:")}},
			want{claims: false, cause: drift.CauseUnknown}},
		// matchConditions (CEL) on the object decide too; those that read the
		// request or the authorizer cannot be decided from a snapshot.
		{"matchConditions that read the request are named as not evaluated", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), withConditions(mutator(enforced, "{}", "deployments"), "not-system", `!request.userInfo.username.startsWith('system:')`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"1 matchConditions (not-system); not-system, which read the request or the authorizer, not evaluated here"}}},
		{"a matchCondition on the object excludes it, whatever one on the request says", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), withConditions(mutator(enforced, "{}", "deployments"), "not-system", `!request.userInfo.username.startsWith('system:')`, "api-only", `object.metadata.name.startsWith('api')`)}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a matchCondition on the object that holds", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), withConditions(mutator(enforced, "{}", "deployments"), "web-only", `object.metadata.name == 'web'`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"its matchConditions (web-only) hold on a create of Git's object"}}},
		{"a matchCondition on the object that excludes it", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), withConditions(mutator(enforced, "{}", "deployments"), "api-only", `object.metadata.name.startsWith('api')`)}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"two matchConditions, both holding on a create", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), withConditions(mutator(enforced, "{}", "deployments"), "web-only", `object.metadata.name == 'web'`, "not-on-update", `oldObject == null || !has(object.metadata.labels)`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"hold on a create of Git's object"}}},
		{"a matchCondition false on every request that could have admitted it", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), withConditions(mutator(enforced, "{}", "deployments"), "web-only", `object.metadata.name == 'web'`, "opted-in", `has(object.metadata.labels) && 'inject' in object.metadata.labels`)}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a matchCondition on the old object: held on the update from Git's object", snap{app: ssaApp, target: labelled(`app: web, inject: "yes"`, ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), withConditions(mutator(enforced, "{}", "deployments"), "was-opted-in", `oldObject != null && 'inject' in oldObject.metadata.labels`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"hold on an update from Git's object to the live one"}}},
		{"a matchCondition with a Kubernetes CEL library function cannot be evaluated here", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels),
			cluster: []string{namespace(`enforce: "true"`), withConditions(mutator(enforced, "{}", "deployments"), "small", `quantity('1').isLessThan(quantity('2'))`)}},
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"1 matchConditions (small), which could not be evaluated here"}}},
		{"a person labelled it after admission", snap{app: ssaApp, target: labelled("app: web", ""), live: labelled("app: web, team: shop", argoOwnsLabels+", "+kubectlOwnsTeam),
			cluster: []string{namespace(`enforce: "true"`), mutator(enforced, "{}", "deployments")}},
			want{claims: false, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A webhook the matchers admit is granted the path only where the
			// dry run shows it writes the value: these rows are about the
			// matchers, so each hand-over row gets the dry run such a webhook
			// answers (the live object). TestWebhookGrantNeedsDryRun holds
			// the rows without one or with a contradicting one.
			if tt.want.fix == drift.FixIgnoreDifference {
				tt.s.dryRun = dryRunOf(t, tt.s.live)
			}
			checkDiff(t, classifiers.WebhookMutation, tt.s, path, tt.want)
		})
	}
}

// dryRunOf is the dry-run answer that reproduces a live object: the object
// without its managedFields, as the collector records it.
func dryRunOf(t *testing.T, live string) string {
	t.Helper()
	obj, ok := parseYAML(t, live).(map[string]any)
	if !ok {
		t.Fatalf("live is not an object: %s", live)
	}
	delete(drift.Map(obj, "metadata"), "managedFields")
	out, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestWebhookGrantNeedsDryRun: a matching webhook is granted a path only
// where the snapshot's server-side dry run of Git's manifest reproduces the
// live value. A dry run that holds Git's value refutes the webhook (another
// writer changed it after admission, though Argo CD's own manager name is
// on it); without a dry run a person decides, and the evidence says what
// access would decide it.
func TestWebhookGrantNeedsDryRun(t *testing.T) {
	const path = "/metadata/labels/team"
	cluster := []string{namespace(`enforce: "true"`), mutator(enforced, "{}", "deployments")}
	overwritten := labelled("app: web, team: shop", argoOwnsLabels)
	tests := []struct {
		name   string
		target string
		live   string
		dryRun string
		want   want
		proof  drift.Proof
	}{
		{"the dry run stores the live value: granted, with the proof", labelled("app: web, team: web", ""), overwritten, labelled("app: web, team: shop", ""),
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"stores the live value at /metadata/labels/team"}}, drift.ProofDryRunHolds},
		{"the dry run holds Git's value: refuted, a client using Argo CD's name wrote it", labelled("app: web, team: web", ""), overwritten, labelled("app: web, team: web", ""),
			want{claims: false, cause: drift.CauseUnknown}, drift.ProofDryRunRefutes},
		{"the dry run adds no such label: refuted", labelled("app: web", ""), overwritten, labelled("app: web", ""),
			want{claims: false, cause: drift.CauseUnknown}, drift.ProofDryRunRefutes},
		{"no dry run: a person decides, and the evidence says which access decides", labelled("app: web, team: web", ""), overwritten, "",
			want{claims: true, fix: drift.FixNone, cause: drift.CauseWebhookMutation, evidence: []string{"dryRun=All under Argo CD's manager argocd-controller", "patch on Deployment"}}, drift.ProofDryRunMissing},
		{"a person's manager and a refuting dry run: manual change", labelled("app: web, team: web", ""), labelled("app: web, team: shop", argoOwnsLabels+", "+kubectlOwnsTeam), labelled("app: web, team: web", ""),
			want{claims: false, cause: drift.CauseManualChange}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snap{app: ssaApp, target: tt.target, live: tt.live, dryRun: tt.dryRun, cluster: cluster}
			checkDiff(t, classifiers.WebhookMutation, s, path, tt.want)
			if tt.proof == "" {
				return
			}
			in := diagnose(t, s.build(t))
			for _, f := range classifiers.Run(in, classifiers.Registry) {
				if f.Path.String() != path {
					continue
				}
				if !slices.ContainsFunc(f.Evidence, func(e drift.Evidence) bool { return e.Kind == drift.EvidenceDryRun && e.Proof == tt.proof }) {
					t.Errorf("%s finding records no dry-run evidence with proof %q: %+v", f.Cause, tt.proof, f.Evidence)
				}
				granted := f.Remediation.Grant != ""
				if granted != (tt.proof == drift.ProofDryRunHolds) {
					t.Errorf("grant %q with proof %q: only a reproducing dry run grants", f.Remediation.Grant, tt.proof)
				}
				if granted && !strings.Contains(f.Remediation.Grant, string(drift.ProofDryRunHolds)) {
					t.Errorf("grant %q does not record its proof", f.Remediation.Grant)
				}
				// A workload's label is on the allow-list of hand-overs: the
				// grant names the entry and its source.
				if granted && !strings.Contains(f.Remediation.Grant, "the allow-list of hand-overs lets a labelling webhook keep /metadata/labels") {
					t.Errorf("grant %q does not name the allow-list entry it rests on", f.Remediation.Grant)
				}
			}
		})
	}
}

// TestWebhookFillsText: a webhook that fills a placeholder in a text Git
// declares (a config file in an annotation or ConfigMap) is not asked to be
// written into Git, where its substitution (often a credential) would land;
// a scalar the webhook replaces as a whole still is.
func TestWebhookFillsText(t *testing.T) {
	annotated := func(v string) string {
		return replaceOnce(labelled(`config: "`+v+`"`, ""), "  labels: {", "  annotations: {")
	}
	cluster := []string{namespace(`enforce: "true"`), mutator(enforced, "{}", "deployments")}
	tests := []struct {
		name      string
		git, live string
		want      want
	}{
		{"a placeholder filled in", `url: db:5432\npassword: $(store:db-password)\n`, `url: db:5432\npassword: hunter2\n`,
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"rewrote part of the text Git declares"}}},
		{"a line added to the file", `url: db:5432\n`, `url: db:5432\nproxy: mesh:15001\n`,
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"rewrote part of the text"}}},
		{"the whole text replaced", `mode: a\nlevel: 1\n`, `mode: b\nlevel: 2\n`,
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation, evidence: []string{"Git declares"}}},
		{"one line replaced", `debug`, `info`,
			want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snap{app: ssaApp, target: annotated(tt.git), live: annotated(tt.live), dryRun: annotated(tt.live), cluster: cluster}
			checkDiff(t, classifiers.WebhookMutation, s, "/metadata/annotations/config", tt.want)
		})
	}
}

// TestArgoCDManagerNamesProveOnlyTheApply: a value that differs from Git
// under any of Argo CD's own manager names (bot/drift/writers.yaml, part
// argocd) proves only Argo CD's apply request; no other manager is never
// read as "a webhook did it". Each name gets no grant without a dry run
// that reproduces the value, and a dry run that holds Git's value names the
// client that may have used the name.
func TestArgoCDManagerNamesProveOnlyTheApply(t *testing.T) {
	cluster := []string{namespace(`enforce: "true"`), mutator(enforced, "{}", "deployments")}
	var names []string
	for m := range drift.ArgoCDManagers {
		names = append(names, m)
	}
	slices.Sort(names)
	if len(names) < 2 {
		t.Fatalf("Argo CD's manager names from the catalog: %q, want the controller's under both apply modes", names)
	}
	for _, m := range names {
		owned := strings.ReplaceAll(argoOwnsLabels, "manager: argocd-controller", "manager: "+m)
		live := labelled("app: web, team: shop", owned)
		for _, row := range []struct {
			name   string
			dryRun string
			want   want
		}{
			{"no dry run", "", want{claims: true, fix: drift.FixNone, cause: drift.CauseWebhookMutation,
				evidence: []string{"recorded under " + m, "Argo CD's own manager: that proves only Argo CD's apply request"}}},
			{"a dry run holding Git's value", labelled("app: web, team: web", ""), want{claims: false, cause: drift.CauseUnknown}},
			{"a dry run reproducing the live value", labelled("app: web, team: shop", ""), want{claims: true, fix: drift.FixIgnoreDifference, cause: drift.CauseWebhookMutation}},
		} {
			t.Run(m+"/"+row.name, func(t *testing.T) {
				s := snap{app: ssaApp, target: labelled("app: web, team: web", ""), live: live, dryRun: row.dryRun, cluster: cluster}
				checkDiff(t, classifiers.WebhookMutation, s, "/metadata/labels/team", row.want)
				if row.want.cause != drift.CauseUnknown {
					return
				}
				for _, f := range classifiers.Run(diagnose(t, s.build(t)), classifiers.Registry) {
					if f.Path.String() == "/metadata/labels/team" && !strings.Contains(drift.EvidenceText(f.Evidence, "\n"), "a client sending Argo CD's manager name") {
						t.Errorf("the refuted finding does not say who may have used Argo CD's name:\n%s", drift.EvidenceText(f.Evidence, "\n"))
					}
				}
			})
		}
	}
}
