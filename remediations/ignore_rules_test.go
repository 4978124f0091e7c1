package remediations_test

import (
	"strings"
	"testing"
	"time"

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

// TestRuleInventoryRemovesStaleRule: the orders application declares two
// rules in its own manifest; the one naming a Service it does not have
// hides nothing. Idle for less than staleAfter it is flagged but no file is
// changed; idle for longer, its file's change removes exactly it, with the
// manifest's comments kept, verified by diagnosing the application without
// it, and it holds back the application's own fix of that rule.
func TestRuleInventoryRemovesStaleRule(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		idle  time.Duration
		files int
	}{
		{"idle 13 days", 13 * 24 * time.Hour, 0},
		{"idle 15 days", 15 * 24 * time.Hour, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := drift.LoadSnapshot("../bot/testdata/ignores/orders.yaml")
			if err != nil {
				t.Fatal(err)
			}
			inv := &remediations.RuleInventory{Instance: "main", Snaps: []remediations.RuleSnap{{Snapshot: s}}, Now: now, Stale: 14 * 24 * time.Hour,
				Complete: true, Diagnose: pipeline.Diagnose,
				RuleIdle: func(rule string, idle bool) time.Time {
					if !idle {
						return time.Time{}
					}
					return now.Add(-tc.idle)
				}}
			rep, err := inv.Judge()
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Lines) != 1 || !rep.Lines[0].Stale || rep.Lines[0].Where == "" {
				t.Fatalf("lines %+v, want the one stale rule, with where it is declared", rep.Lines)
			}
			if len(rep.Keys) != 1 || len(rep.Files) != tc.files {
				t.Fatalf("keys %v, files %d; want its file's key and %d files to change", rep.Keys, len(rep.Files), tc.files)
			}
			if tc.files == 0 {
				return
			}
			f := rep.Files[0]
			c, why, err := inv.Change(f, s.Repo.Files[f.File])
			if err != nil || why != "" {
				t.Fatalf("change not made: %v %s", err, why)
			}
			after := string(c.After)
			if strings.Contains(after, "orders-legacy") || !strings.Contains(after, "# the autoscaler owns replicas") || !strings.Contains(after, "- /spec/replicas") {
				t.Errorf("the change does not remove exactly the stale rule, comments kept:\n%s", after)
			}
			if c.Key != f.Key || len(c.Rules) != 1 || len(c.Holds) != 1 || !strings.Contains(c.View.Verification, "no new difference") {
				t.Errorf("change %+v", c)
			}
			if again, why, _ := inv.Change(f, after); why == "" {
				t.Errorf("a file that has the change already changed again: %s", again.After)
			}
		})
	}
}
