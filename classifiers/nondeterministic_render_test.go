package classifiers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

const randomTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: flags
data:
  BETA: {{ randAlphaNum 8 | quote }}
`

const stableTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: flags
  annotations:
    rolled: {{ now | quote }}
data:
  BETA: {{ .Values.beta | quote }}
`

func chart(template string) map[string]string {
	return map[string]string{
		"apps/web/Chart.yaml":           "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"apps/web/templates/flags.yaml": template,
	}
}

func TestNondeterministicRender(t *testing.T) {
	const beta = "/data/BETA"
	target := flags("", "", `BETA: "k2Jd9xQa"`, "")
	live := flags("", "", `BETA: "Pq81mZtr"`, argoOwnsFlags)
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"independent renders disagree", snap{target: target, live: live, renders: [][]string{{flags("", "", `BETA: "aa0Lr7Ws"`, "")}}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseNondeterministicRender, evidence: []string{
				"2 independent renders of the same revision and inputs disagree at /data/BETA", `render 1 of the same revision has /data/BETA "aa0Lr7Ws" where the compared render has "k2Jd9xQa"`}}},
		{"a render without the object", snap{target: target, live: live, renders: [][]string{{`{apiVersion: v1, kind: ConfigMap, metadata: {name: other, namespace: shop}}`}}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseNondeterministicRender, evidence: []string{"render 1 of the same revision has no ConfigMap shop/flags"}}},
		{"independent renders agree", snap{target: target, live: live, renders: [][]string{{target}}, files: chart(randomTemplate)},
			want{claims: false, cause: drift.CauseUnknown}},
		{"the chart template writes the field with a random function", snap{target: target, live: live, files: chart(randomTemplate)},
			want{claims: true, fix: drift.FixPinHelmValue, cause: drift.CauseNondeterministicRender, evidence: []string{
				"apps/web/templates/flags.yaml:6 writes BETA with randAlphaNum (a value generated on every render)"}}},
		{"a random function in the chart writes another field", snap{target: target, live: live, files: chart(stableTemplate)},
			want{claims: false, cause: drift.CauseUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.NondeterministicRender, tt.s, beta, tt.want)
		})
	}
}

// TestNondeterministicChecksum: a pod template annotation that checksums a
// template which generates a random value changes on every render too.
func TestNondeterministicChecksum(t *testing.T) {
	web := func(sum string) string {
		return replaceOnce(webTarget(2), "metadata: {labels: {app: web}}", "metadata: {labels: {app: web}, annotations: {checksum/config: "+sum+"}}")
	}
	files := map[string]string{
		"apps/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"apps/web/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      annotations:
        checksum/config: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
`,
		"apps/web/templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: web\nstringData:\n  key: {{ randAlphaNum 32 }}\n",
	}
	s := snap{target: web("9f1c"), live: replaceOnce(webLive(2, "", "", ""), "metadata: {labels: {app: web}}", "metadata: {labels: {app: web}, annotations: {checksum/config: 77ab}}"), files: files}
	checkDiff(t, classifiers.NondeterministicRender, s, "/spec/template/metadata/annotations/checksum~1config",
		want{claims: true, fix: drift.FixPinHelmValue, cause: drift.CauseNondeterministicRender, evidence: []string{
			"apps/web/templates/deployment.yaml:9 writes checksum/config as a checksum of secret.yaml, which changes every render: apps/web/templates/secret.yaml:6 calls randAlphaNum"}})
}

// renderOf is a further render as driftfix's collector records it: the
// manifests, then the object naming the revision argocd-server rendered.
func renderOf(revision string, manifests ...string) []string {
	info := `{apiVersion: driftfix.io/v1, kind: RenderInfo, metadata: {name: render-1}, revision: "` + revision + `"}`
	if strings.HasPrefix(revision, "[") {
		info = `{apiVersion: driftfix.io/v1, kind: RenderInfo, metadata: {name: render-1}, revisions: ` + revision + `}`
	}
	return append(manifests, info)
}

// appAt is the default application compared at revision (status.sync).
func appAt(revision string) string {
	return strings.Replace(defaultApp, "status: {sync: {status: OutOfSync}}", "status: {sync: {status: OutOfSync, revision: "+revision+"}}", 1)
}

const multiSourceApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  sources:
  - {repoURL: https://git.example.com/shop.git, path: apps/web, targetRevision: main}
  - {repoURL: https://git.example.com/values.git, targetRevision: main, ref: values}
status: {sync: {status: OutOfSync, revisions: [c0ffee, 5eed]}}
`

// TestNondeterministicRenderRevision: only renders of the revision Argo CD
// compared are evidence. A render of the branch head after a push (another
// revision), of a revision not recorded, or when the compared revision is
// not known, is not, and the evidence says so where a template is evidence.
func TestNondeterministicRenderRevision(t *testing.T) {
	const beta = "/data/BETA"
	target := flags("", "", `BETA: "k2Jd9xQa"`, "")
	live := flags("", "", `BETA: "Pq81mZtr"`, argoOwnsFlags)
	pushed := flags("", "", `BETA: "v2-after-push"`, "")
	notEvidence := "render 1 is of revision beef, not c0ffee, the revision Argo CD compared, so it is no evidence that the render changes"
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"a render of the compared revision disagrees", snap{app: appAt("c0ffee"), target: target, live: live, renders: [][]string{renderOf("c0ffee", pushed)}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseNondeterministicRender, evidence: []string{
				"2 independent renders of revision c0ffee and inputs disagree at /data/BETA", `render 1 of revision c0ffee has /data/BETA "v2-after-push"`}}},
		{"a render of the branch head after a push", snap{app: appAt("c0ffee"), target: target, live: live, renders: [][]string{renderOf("beef", pushed)}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a render of the branch head, a random function elsewhere in the chart", snap{app: appAt("c0ffee"), target: target, live: live, renders: [][]string{renderOf("beef", pushed)}, files: chart(stableTemplate)},
			want{claims: false, cause: drift.CauseUnknown}},
		{"a render of the branch head, the template is evidence", snap{app: appAt("c0ffee"), target: target, live: live, renders: [][]string{renderOf("beef", pushed)}, files: chart(randomTemplate)},
			want{claims: true, fix: drift.FixPinHelmValue, cause: drift.CauseNondeterministicRender, evidence: []string{
				"apps/web/templates/flags.yaml:6 writes BETA with randAlphaNum", notEvidence}}},
		{"one render of the compared revision, one of the head", snap{app: appAt("c0ffee"), target: target, live: live,
			renders: [][]string{renderOf("c0ffee", flags("", "", `BETA: "aa0Lr7Ws"`, "")), renderOf("beef", pushed)}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseNondeterministicRender, evidence: []string{
				"2 independent renders of revision c0ffee and inputs disagree", `render 1 of revision c0ffee has /data/BETA "aa0Lr7Ws"`,
				"render 2 is of revision beef, not c0ffee"}}},
		{"the compared revision is not known", snap{target: target, live: live, renders: [][]string{renderOf("beef", pushed)}, files: chart(randomTemplate)},
			want{claims: true, fix: drift.FixPinHelmValue, cause: drift.CauseNondeterministicRender, evidence: []string{
				"render 1 is of revision beef, but the revision Argo CD compared is not known, so it is no evidence"}}},
		{"the render records no revision", snap{app: appAt("c0ffee"), target: target, live: live, renders: [][]string{renderOf("", pushed)}},
			want{claims: false, cause: drift.CauseUnknown}},
		{"several sources, renders of the compared revisions", snap{app: multiSourceApp, target: target, live: live, renders: [][]string{renderOf("[c0ffee, 5eed]", pushed)}},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseNondeterministicRender, evidence: []string{"render 1 of revision c0ffee,5eed has /data/BETA"}}},
		{"several sources, one source's revision moved", snap{app: multiSourceApp, target: target, live: live, renders: [][]string{renderOf("[c0ffee, f00d]", pushed)}},
			want{claims: false, cause: drift.CauseUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.NondeterministicRender, tt.s, beta, tt.want)
		})
	}
}

// TestNondeterministicRenderNamespace: argocd-server's manifests carry no
// namespace where Git gives none; Argo CD places namespaced objects in the
// destination namespace and clears it on cluster-scoped ones before it
// compares, and so does the comparison with further renders. A resource
// deleted by hand whose renders agree is not a changing render.
func TestNondeterministicRenderNamespace(t *testing.T) {
	const id = `argocd.argoproj.io/tracking-id: "shop:/ConfigMap:shop/flags"`
	target := flags("", id, `BETA: "on"`, "")
	noNamespace := strings.Replace(target, "namespace: shop, ", "", 1)
	role := `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: reader%s}, rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]}`
	crd := `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: widgets.example.com},
  spec: {group: example.com, scope: %s, names: {kind: Widget, plural: widgets}, versions: [{name: v1, served: true, storage: true}]}}`
	widget := `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w%s}, spec: {size: 1}}`
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"deleted by hand, the render has no namespace", snap{app: appAt("c0ffee"), target: target, renders: [][]string{renderOf("c0ffee", noNamespace)}},
			want{claims: false}},
		{"deleted by hand, a render without the resulting namespace in an old snapshot", snap{target: target, renders: [][]string{{noNamespace}}},
			want{claims: false}},
		{"deleted by hand, the render really differs", snap{app: appAt("c0ffee"), target: target, renders: [][]string{renderOf("c0ffee", strings.Replace(noNamespace, `BETA: "on"`, `BETA: "off"`, 1))}},
			want{claims: true, fix: drift.FixNone, evidence: []string{"render 1 of revision c0ffee has"}}},
		{"deleted by hand, cluster-scoped, the chart gives it a namespace", snap{app: appAt("c0ffee"), target: fmt.Sprintf(role, ""), renders: [][]string{renderOf("c0ffee", fmt.Sprintf(role, ", namespace: shop"))}},
			want{claims: false}},
		{"deleted by hand, a namespaced custom resource", snap{app: appAt("c0ffee"), target: fmt.Sprintf(widget, ", namespace: shop"), cluster: []string{fmt.Sprintf(crd, "Namespaced")},
			renders: [][]string{renderOf("c0ffee", fmt.Sprintf(widget, ""))}},
			want{claims: false}},
		{"deleted by hand, a cluster-scoped custom resource the chart gives a namespace", snap{app: appAt("c0ffee"), target: fmt.Sprintf(widget, ""), cluster: []string{fmt.Sprintf(crd, "Cluster")},
			renders: [][]string{renderOf("c0ffee", fmt.Sprintf(widget, ", namespace: shop"))}},
			want{claims: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, classifiers.NondeterministicRender, tt.s, "", tt.want)
			in := diagnose(t, tt.s.build(t))
			for _, f := range classifiers.Run(in, classifiers.Registry) {
				if f.Cause == drift.CauseNondeterministicRender && !tt.want.claims {
					t.Errorf("%s %q is called %s: %q", f.Resource, f.Path, f.Cause, f.Evidence)
				}
			}
		})
	}
}
