package pipeline

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// realExpectations are the findings of the snapshots captured from the real
// stack (e2e/stack: kube-apiserver, kube-controller-manager, Argo CD 3.6.1) by
// `go test -tags e2e ./e2e -update-real`.
var realExpectations = map[string][]string{
	"e2e-manual":          {"Deployment /spec/replicas manual-change", "Deployment /spec/template/spec/containers/0/image manual-change"},
	"e2e-hpa":             {"Deployment /spec/replicas hpa-replicas"},
	"e2e-webhook-cpu":     {"Deployment /spec/template/spec/containers/0/resources/limits/cpu webhook-mutation"},
	"e2e-webhook-sidecar": nil, // Argo CD reports Synced: injected fields are live-only
	"e2e-controller":      {"ValidatingWebhookConfiguration /webhooks/0/clientConfig/caBundle controller-write"},
	"e2e-empty-ca":        {"ValidatingWebhookConfiguration /webhooks/0/clientConfig/caBundle controller-write"},
	"e2e-normalized":      {"Widget /metadata/labels normalized", "Widget /spec/color normalized"},
	"e2e-render":          {"ConfigMap /data/session-salt nondeterministic-render"},
	"e2e-tracking":        {"ConfigMap /metadata/labels/app.kubernetes.io~1instance tracking-clash"},
	"e2e-broad": {
		"Application /spec/ignoreDifferences/0 broad-ignore",
		"Deployment /spec/template/spec/containers/0/securityContext/privileged manual-change",
	},
}

func TestRealSnapshots(t *testing.T) {
	files, err := filepath.Glob("../../testdata/real/*.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, ok := realExpectations[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			_, rep := diagnoseFile(t, file)
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Resource.Kind+" "+f.Path.String()+" "+string(f.Cause))
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("findings %q, want %q", got, want)
			}
		})
	}
	for name := range realExpectations {
		if !seen[name] {
			t.Errorf("testdata/real/%s.json is missing", name)
		}
	}
	if _, err := os.Stat("../../testdata/real"); err != nil {
		t.Fatal(err)
	}
}
