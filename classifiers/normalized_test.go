package classifiers_test

import (
	"fmt"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// cache is custom resource Cache shop/c with a spec (the body of a flow map);
// argocd-controller applied cpu and mode.
func cache(spec string) string {
	return fmt.Sprintf(`{apiVersion: example.com/v1, kind: Cache, metadata: {name: c, namespace: shop, managedFields: [{manager: argocd-controller, operation: Apply, apiVersion: example.com/v1, time: "2026-09-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:cpu": {}, "f:mode": {}}}}]}, spec: {%s}}`, spec)
}

const cacheCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: caches.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Cache, plural: caches}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cpu: {x-kubernetes-int-or-string: true}
              mode: {type: string, default: fast}
`

func TestNormalized(t *testing.T) {
	cacheWebhook := replaceOnce(replaceOnce(mutator("{}", "{}", "caches"), `apiGroups: ["apps"]`, `apiGroups: ["example.com"]`), "policy-mutator", "cache-defaults")
	tests := []struct {
		name string
		s    snap
		path string
		want want
	}{
		{"a quantity in another spelling", snap{target: cache(`cpu: "0.5"`), live: cache(`cpu: 500m`)}, "/spec/cpu",
			want{claims: true, fix: drift.FixSetValue, cause: drift.CauseNormalized, evidence: []string{
				`Git writes "0.5", the API server stores "500m"`, "no mutating webhook or other field manager explains the rewrite", `writing "500m" in Git`}}},
		{"a webhook, not the API server, rewrote the spelling", snap{target: cache(`cpu: "0.5"`), live: cache(`cpu: 500m`), cluster: []string{cacheWebhook}}, "/spec/cpu",
			want{claims: false, cause: drift.CauseWebhookMutation}},
		{"a different quantity is no spelling", snap{target: cache(`cpu: "0.5"`), live: cache(`cpu: "1"`)}, "/spec/cpu",
			want{claims: false, cause: drift.CauseUnknown}},
		{"a field the CRD schema does not declare is pruned", snap{target: cache(`cpu: 500m, size: 3`), live: cache(`cpu: 500m`), cluster: []string{cacheCRD}}, "/spec/size",
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseNormalized, evidence: []string{"CustomResourceDefinition caches.example.com (version v1) does not declare /spec/size, so the API server prunes it"}}},
		{"without the CRD nothing shows the field is pruned", snap{target: cache(`cpu: 500m, size: 3`), live: cache(`cpu: 500m`)}, "/spec/size",
			want{claims: false, cause: drift.CauseUnknown}},
		{"a schema default", snap{app: ssaApp, target: cache(`cpu: 500m`), live: cache(`cpu: 500m, mode: fast`), cluster: []string{cacheCRD}}, "/spec/mode",
			want{claims: true, fix: drift.FixSetValue, cause: drift.CauseNormalized, evidence: []string{`CustomResourceDefinition caches.example.com defaults /spec/mode to "fast"`}}},
		{"a value other than the schema default", snap{app: ssaApp, target: cache(`cpu: 500m`), live: cache(`cpu: 500m, mode: slow`), cluster: []string{cacheCRD}}, "/spec/mode",
			want{claims: false}},
		{"an empty value the API server drops", snap{target: cache(`cpu: 500m, tags: {}`), live: cache(`cpu: 500m`)}, "/spec/tags",
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseNormalized, evidence: []string{"the API server does not store empty values"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.Normalized, tt.s, tt.path, tt.want)
		})
	}
}

// apiDeployment is Deployment shop/api with a CPU limit; extra is more of its
// spec (the body of a flow map, with a leading comma).
func apiDeployment(cpu, extra string, live bool) string {
	mf := ""
	if live {
		mf = `, managedFields: [{manager: argocd-controller, operation: Apply, apiVersion: apps/v1, time: "2026-09-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:selector": {}, "f:template": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"api\"}": {".": {}, "f:image": {}, "f:name": {}, "f:resources": {"f:limits": {"f:cpu": {}}}}}}}}}}]`
	}
	return fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: shop%s}, spec: {replicas: 1, selector: {matchLabels: {app: api}}%s, template: {metadata: {labels: {app: api}}, spec: {containers: [{name: api, image: "registry.example.com/api:2", resources: {limits: {cpu: %q}}}]}}}}`, mf, extra, cpu)
}

// TestNormalizedStoredForm: what the API server stores, derived from the
// type of a built-in kind or answered by a dry-run apply.
func TestNormalizedStoredForm(t *testing.T) {
	const cpu = "/spec/template/spec/containers/0/resources/limits/cpu"
	misfit := snap{app: ssaApp, target: apiDeployment("1000m", ", serviceName: api", false), live: apiDeployment("1", "", true)}
	tests := []struct {
		name string
		s    snap
		path string
		want want
	}{
		{"a field the type lacks is dropped", misfit, "/spec/serviceName",
			want{claims: true, fix: drift.FixRemoveField, cause: drift.CauseNormalized, evidence: []string{
				"serviceName is not a field of the type, so the API server drops it", "does not decode strictly into its type"}}},
		{"so the quantity spelling shows", misfit, cpu,
			want{claims: true, fix: drift.FixSetValue, cause: drift.CauseNormalized, evidence: []string{`Git writes "1000m"`, `it is "1", which is what the live object holds`}}},
		{"the dry-run stores what live holds", snap{target: cache(`cpu: "2", size: 3`), live: cache(`cpu: "2", size: 4`), dryRun: cache(`cpu: "2", size: 4`)}, "/spec/size",
			want{claims: true, fix: drift.FixSetValue, cause: drift.CauseNormalized, evidence: []string{"a server-side dry-run apply of Git's manifest shows the API server stores 4"}}},
		{"the dry-run stores Git's value", snap{target: cache(`cpu: "2", size: 3`), live: cache(`cpu: "2", size: 4`), dryRun: cache(`cpu: "2", size: 3`)}, "/spec/size",
			want{claims: false, cause: drift.CauseUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.Normalized, tt.s, tt.path, tt.want)
		})
	}
}
