package classifiers_test

import (
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
