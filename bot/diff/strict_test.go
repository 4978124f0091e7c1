package diff

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestFitsAgreesWithStrictDecode checks the fast strict check against a real
// strict JSON decode into the compiled-in types.
func TestFitsAgreesWithStrictDecode(t *testing.T) {
	b := builtins()
	objs := []string{
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, labels: {a: b}, creationTimestamp: null}, spec: {replicas: 2, selector: {matchLabels: {a: b}}, strategy: {rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}}, template: {spec: {containers: [{name: c, image: i, resources: {limits: {cpu: 1, memory: 1Gi}}, ports: [{containerPort: 80}]}]}}}}`,
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: "2"}}`,
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 2.5}}`,
		`{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s}, spec: {strategy: {type: RollingUpdate}}}`,
		`{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {a: YQ==}, type: Opaque}`,
		`{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {a: 1}}`,
		`{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {ports: [{port: 80, targetPort: http}, {port: 81, targetPort: 8081}]}}`,
		`{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {ports: [{port: 80, targetPort: {x: 1}}]}}`,
		`{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, resources: {limits: {cpu: [1]}}}]}}`,
		`{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: m}, webhooks: [{name: w, clientConfig: {caBundle: ""}, sideEffects: None, admissionReviewVersions: [v1]}]}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: b}, binaryData: {x: eA==}, extra: 1}`,
	}
	for _, src := range objs {
		s, err := drift.ParseSnapshot([]byte("apiVersion: driftfix/v1\nkind: Snapshot\napplication: {apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}}\nresources:\n- target: " + src + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		o := s.Resources[0].Target
		typ := b.typeOf(drift.Str(o, "apiVersion"), drift.Str(o, "kind"))
		if typ == nil {
			t.Fatalf("no type for %s", src)
		}
		if got, want := b.fits(typ, o, 0), b.decodesStrictly(typ, o); got != want {
			t.Errorf("fits = %v, strict decode = %v for %s", got, want, src)
		}
	}
}
