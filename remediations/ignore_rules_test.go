package remediations_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// TestJudgeBothWordings: the broad-ignore diagnosis words a broad rule "is
// broad: …" and a rule scoped narrowly on a sensitive path "is scoped
// narrowly (…), but covers a sensitive path: …"; judgeBroad keeps the two
// apart, and the digest line says "is broader than what it hides" only of a
// broad rule, "covers a sensitive path" of the other. The evidence is the
// diagnosis's own, of the orders application with one rule in place of its
// two.
func TestJudgeBothWordings(t *testing.T) {
	for _, tc := range []struct {
		name, rule string
		broad      []string // in Judgment.Broad ("" means: empty)
		sensitive  string
		summary    []string
		absent     []string
	}{
		{name: "narrow, on a sensitive path",
			rule:      `{group: apps, kind: Deployment, name: orders, namespace: shop, jsonPointers: [/spec/template/spec/containers/0/image]}`,
			sensitive: "/spec/template/spec/containers/0/image of Deployment shop/orders (image)",
			summary:   []string{"covers a sensitive path: /spec/template/spec/containers/0/image of Deployment shop/orders (image)"},
			absent:    []string{"broad", "scoped narrowly", "whatever another writer"}},
		{name: "broad",
			rule:    `{group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}`,
			broad:   []string{"it names no resource"},
			summary: []string{"is broader than what it hides: it names no resource"},
			absent:  []string{"sensitive", "is broad:"}},
		{name: "broad, and on a sensitive path",
			rule:    `{group: apps, kind: Deployment, jsonPointers: [/spec/template/spec/containers/0/image]}`,
			broad:   []string{"it names no resource", "; it also covers a sensitive path: /spec/template/spec/containers/0/image of Deployment shop/orders (image)"},
			summary: []string{"is broader than what it hides: it names no resource"},
			absent:  []string{"is broad:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := drift.LoadSnapshot("../bot/testdata/ignores/orders.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var rule map[string]any
			if err := yaml.Unmarshal([]byte(tc.rule), &rule); err != nil {
				t.Fatal(err)
			}
			drift.Map(s.Application, "spec")["ignoreDifferences"] = []any{rule}
			rep, err := pipeline.Diagnose(s, drift.Sensitivity{})
			if err != nil {
				t.Fatal(err)
			}
			var js []remediations.Judgment
			for _, f := range rep.Findings {
				if f.Cause == drift.CauseBroadIgnore && len(f.Evidence) > 0 {
					js = append(js, remediations.Judge(f.Evidence))
				}
			}
			if len(js) != 1 {
				t.Fatalf("%d broad-ignore findings, want 1: %+v", len(js), rep.Findings)
			}
			j := js[0]
			if j.Sensitive != tc.sensitive {
				t.Errorf("sensitive %q, want %q", j.Sensitive, tc.sensitive)
			}
			if (j.Broad == "") != (len(tc.broad) == 0) {
				t.Errorf("broad %q, want it to hold %q", j.Broad, tc.broad)
			}
			for _, w := range tc.broad {
				if !strings.Contains(j.Broad, w) {
					t.Errorf("broad %q lacks %q", j.Broad, w)
				}
			}
			l := templates.IgnoreLine{Holder: "Application argocd/orders", Key: "spec.ignoreDifferences[0]", Broad: j.Broad, NarrowSensitive: j.Sensitive}
			sum := l.Summary(func(x any) string { return "`" + x.(string) + "`" }, func(x any) string { return x.(string) })
			for _, w := range tc.summary {
				if !strings.Contains(sum, w) {
					t.Errorf("summary %q lacks %q", sum, w)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(sum, w) {
					t.Errorf("summary %q says %q", sum, w)
				}
			}
		})
	}
}
