package pipeline

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// caseExpectations lists, per case in testdata/cases, every finding as
// "Kind/name/path cause fix". The golden JSON pins the whole output; this table
// states what each case is about, so a golden rewritten by mistake still fails.
var caseExpectations = map[string][]string{
	"01-hpa-statefulset":                  {"StatefulSet/queue/spec/replicas hpa-replicas remove-field"},
	"02-replicas-no-hpa":                  {"Deployment/api/spec/replicas controller-write none"},
	"03-kubectl-scale-other-hpa":          {"Deployment/api/spec/replicas manual-change none"},
	"04-hpa-and-kubectl-scale":            {"Deployment/api/spec/replicas hpa-replicas remove-field"},
	"05-cabundle-cainjector-ssa":          nil,
	"06-cabundle-genca-renders":           {"ValidatingWebhookConfiguration/mesh-validator/webhooks/0/clientConfig/caBundle nondeterministic-render none"},
	"07-cabundle-genca-template":          {"ValidatingWebhookConfiguration/mesh-validator/webhooks/0/clientConfig/caBundle nondeterministic-render none"},
	"08-cr-quantity-defaulting-webhook":   {"Memcached/sessions/spec/resources/requests/cpu webhook-mutation set-value"},
	"09-cr-quantity-conversion":           {"Memcached/sessions/spec/resources/requests/cpu normalized set-value"},
	"10-cr-quantity-both":                 {"Memcached/sessions/spec/resources/requests/cpu normalized set-value"},
	"11-builtin-quantity-hidden":          nil,
	"12-builtin-unknown-field":            {"StatefulSet/db/spec/strategy normalized remove-field", "StatefulSet/db/spec/template/spec/containers/0/resources/requests/memory normalized set-value"},
	"13-crd-pruned-field":                 {"Schedule/nightly/spec/compress normalized remove-field"},
	"14-crd-default-in-list":              {"HTTPRoute/shop/spec/parentRefs/0/group normalized set-value", "HTTPRoute/shop/spec/parentRefs/0/kind normalized set-value"},
	"15-duration-normalized":              {"Certificate/shop-tls/spec/duration normalized set-value"},
	"16-empty-values-dropped":             nil,
	"17-webhook-adds-label":               {"Deployment/orders/metadata/labels/policy.example.com~1team webhook-mutation ignore-difference"},
	"18-webhook-overwrites-git":           {"Deployment/orders/spec/template/spec/containers/0/env/0/value webhook-mutation none"},
	"19-webhook-namespace-not-selected":   {"Deployment/orders/spec/template/spec/containers/0/env/0/value unknown none"},
	"20-webhook-object-selector-excludes": {"Deployment/orders/spec/template/spec/containers/0/env/0/value unknown none"},
	"21-manual-kubectl-patch":             {"ConfigMap/orders-config/data/LOG_LEVEL manual-change none"},
	"22-manual-adhoc-client":              {"ConfigMap/orders-config/data/LOG_LEVEL manual-change none"},
	"23-tracking-annotation-other-app":    {"ConfigMap/shared-config/metadata/annotations/argocd.argoproj.io~1tracking-id tracking-clash none"},
	"24-tracking-label-flux":              {"ConfigMap/orders-flags/metadata/labels/app.kubernetes.io~1instance tracking-clash tracking-method"},
	"25-tracking-custom-label-key-clean":  nil,
	"26-narrow-ignore-ok":                 nil,
	"27-broad-ignore-system-all": {
		"ConfigMap/argocd-cm/data/resource.customizations.ignoreDifferences.all broad-ignore narrow-ignore",
		"Deployment/api/spec/replicas hpa-replicas remove-field",
		"Deployment/api/spec/template/spec/containers/0/image manual-change none",
	},
	"28-broad-ignore-kubectl-manager": {
		"Application/api/spec/ignoreDifferences/0 broad-ignore narrow-ignore",
		"Deployment/api/spec/template/spec/containers/0/image manual-change none",
	},
	"29-ignore-covers-image": {
		"Application/api/spec/ignoreDifferences/0 broad-ignore narrow-ignore",
		"Deployment/api/spec/template/spec/containers/0/image manual-change none",
	},
	"30-secret-stringdata":         {"Secret/orders-api-key/data/API_KEY manual-change none"},
	"31-rbac-empty-and-aggregated": {"ClusterRole/shop-view/rules controller-write remove-field"},
	"32-predicted-normalized-live": {"ConfigMap/web-config/data/MODE unknown none"},
	"33-missing-and-extra":         {"ConfigMap/debug-overrides manual-change none", "Service/web-canary unknown none"},
	"34-helm-lookup-fallback":      {"Secret/grafana-admin/data/admin-password nondeterministic-render pin-helm-value"},
	"35-renders-agree-manual-edit": {"Secret/grafana-admin/data/admin-password manual-change none"},
	"36-jq-narrow-rule-sidecar":    nil,
	"37-cr-quantity-dry-run":       {"Memcached/sessions/spec/resources/requests/cpu normalized set-value"},
}

// TestCases diagnoses every snapshot in testdata/cases, checks the findings
// against caseExpectations and the whole JSON output against its golden file.
func TestCases(t *testing.T) {
	files, err := filepath.Glob("../../testdata/cases/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("found %d cases in testdata/cases, want at least 30", len(files))
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, ok := caseExpectations[name]
			if !ok {
				t.Fatalf("case %s has no entry in caseExpectations", name)
			}
			_, rep := diagnoseFile(t, file)
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Resource.Kind+"/"+f.Resource.Name+f.Path.String()+" "+string(f.Cause)+" "+string(f.Remediation.Kind))
				if len(f.Evidence) == 0 {
					t.Errorf("%s %s: no evidence", f.Resource, f.Path)
				}
			}
			sort.Strings(got)
			w := append([]string(nil), want...)
			sort.Strings(w)
			if strings.Join(got, "\n") != strings.Join(w, "\n") {
				t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(w, "\n  "))
			}
			raw, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			raw = append(raw, '\n')
			golden := strings.TrimSuffix(file, ".yaml") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, raw, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantRaw, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./bot -run Cases -update)", err)
			}
			if !bytes.Equal(raw, wantRaw) {
				t.Errorf("output differs from %s (run with -update and review the diff):\n%s", golden, raw)
			}
		})
	}
	for name := range caseExpectations {
		if !seen[name] {
			t.Errorf("caseExpectations names %s but testdata/cases/%s.yaml does not exist", name, name)
		}
	}
}

// TestDiagnoseIsDeterministic diagnoses the same snapshot many times: findings,
// evidence and order must be byte-identical, so PR bodies and digests are too.
func TestDiagnoseIsDeterministic(t *testing.T) {
	snap := loadSnapshot(t, "../../testdata/cases/27-broad-ignore-system-all.yaml")
	var first []byte
	for i := 0; i < 20; i++ {
		rep, err := Diagnose(snap, drift.Sensitivity{})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = raw
		} else if !bytes.Equal(raw, first) {
			t.Fatalf("run %d differs from run 0:\n%s\n%s", i, raw, first)
		}
	}
}

// loadSnapshot reads a snapshot file, or stops the test.
func loadSnapshot(tb testing.TB, file string) *drift.Snapshot {
	tb.Helper()
	s, err := drift.LoadSnapshot(file)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// diagnoseFile reads and diagnoses a snapshot file, or stops the test.
func diagnoseFile(tb testing.TB, file string) (*drift.Snapshot, *drift.Report) {
	tb.Helper()
	s := loadSnapshot(tb, file)
	rep, err := Diagnose(s, drift.Sensitivity{})
	if err != nil {
		tb.Fatal(err)
	}
	return s, rep
}
