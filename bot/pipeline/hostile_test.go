package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/templates"
)

// protected is one security-relevant path a hostile snapshot attacks.
type protected struct {
	kind, name string
	path       drift.Pointer
}

var protectLine = regexp.MustCompile(`(?m)^# protect: (\S+)/(\S+) (\S+)$`)

// secretLine names a value another writer put in the cluster that no output
// may show: "# secret: VALUE".
var secretLine = regexp.MustCompile(`(?m)^# secret: (\S+)$`)

// TestHostile plans fixes for every snapshot in testdata/hostile, each built
// the way an attacker with ordinary access would (a script's field manager,
// names that imitate controllers, injected privileged sidecars, rules that
// select them by name), and checks for every path its "# protect:" lines name:
// the change is reported to people with no fix; no plan that is kept changes,
// removes or ignores it; no file a plan writes changes its value; no ignore
// rule a plan writes covers it; and an existing rule that covers it is flagged.
// A value its "# secret:" lines name appears in no output: the report as
// `diagnose -o json` writes it (evidence included), every plan's edits,
// rationale and reasons, its pull request's body and its check's rows.
func TestHostile(t *testing.T) {
	files, err := filepath.Glob("../../testdata/hostile/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 12 {
		t.Fatalf("found %d hostile snapshots, want at least 12", len(files))
	}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var prot []protected
			for _, m := range protectLine.FindAllStringSubmatch(string(raw), -1) {
				prot = append(prot, protected{kind: m[1], name: m[2], path: drift.MustPointer(m[3])})
			}
			secrets := secretLine.FindAllStringSubmatch(string(raw), -1)
			if len(prot) == 0 && len(secrets) == 0 {
				t.Fatal("no # protect: or # secret: lines")
			}
			s := loadSnapshot(t, file)
			rep, plans, err := Fix(s, remediations.RepoFromSnapshot(s), drift.Sensitivity{}, now, render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			checkPlanSafety(t, s, rep, plans, prot, true)
			if len(secrets) == 0 {
				return
			}
			out, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			shown := string(out)
			for _, p := range plans {
				shown += fmt.Sprintf("%+v", p.Rationale) + p.Dropped + p.Instructions + p.Verification
				for _, e := range p.Edits {
					shown += string(e.After)
				}
				// The pull request's body and its check, as the bot publishes them.
				body, err := templates.PRBody(remediations.PRView("billing", "argocd", "https://argocd.example.com", p))
				if err != nil {
					t.Fatal(err)
				}
				shown += body
				for _, r := range CheckPlanned(p).Rows {
					shown += fmt.Sprint(r.Git, r.Live, drift.EvidenceTexts(r.Evidence))
				}
			}
			for _, m := range secrets {
				if strings.Contains(shown, m[1]) {
					t.Errorf("the value %q another writer put there is shown in an output", m[1])
				}
			}
		})
	}
}

// checkPlanSafety is the invariant TestHostile and FuzzPlanSafety share;
// mustReport also requires every protected path to be a finding.
func checkPlanSafety(t *testing.T, s *drift.Snapshot, rep *drift.Report, plans []remediations.Plan, prot []protected, mustReport bool) {
	t.Helper()
	hits := func(ref drift.Ref, p drift.Pointer, pr protected) bool {
		return ref.Kind == pr.kind && ref.Name == pr.name && p.Related(pr.path)
	}
	for _, pr := range prot {
		reported := false
		for _, f := range rep.Findings {
			if !hits(f.Resource, f.Path, pr) {
				continue
			}
			reported = true
			if f.Remediation.Kind != drift.FixNone || f.Remediation.Reason == "" {
				t.Errorf("%s/%s %s: fix %s (%s), want none with a reason", pr.kind, pr.name, f.Path, f.Remediation.Kind, f.Remediation.Reason)
			}
		}
		if !reported && mustReport {
			t.Errorf("%s/%s %s: not reported to people", pr.kind, pr.name, pr.path)
		}
	}
	for _, p := range plans {
		kept := p.Dropped == "" && (len(p.Edits) > 0 || p.Instructions != "")
		if !kept {
			continue
		}
		for _, f := range p.Findings {
			for _, pr := range prot {
				if hits(f.Resource, f.Path, pr) || hits(f.Resource, f.GitPath, pr) {
					t.Errorf("a %s plan is kept for %s %s", p.Kind, f.Resource, f.Path)
				}
			}
		}
	}
	for _, e := range remediations.Files(plans) {
		before, after := decodeDocs(t, e.Before), decodeDocs(t, e.After)
		for _, pr := range prot {
			b, inB := docValue(before, pr)
			a, inA := docValue(after, pr)
			if inB != inA || !drift.Equal(drift.NormalizeNumbers(a), drift.NormalizeNumbers(b)) {
				t.Errorf("%s changes %s/%s %s", e.File, pr.kind, pr.name, pr.path)
			}
		}
		for _, doc := range after {
			if drift.Str(doc, "kind") != "Application" {
				continue
			}
			for _, r := range rulesOf(doc) {
				checkRule(t, s, r, prot, e.File+" adds a rule that")
			}
		}
	}
	cmp, _, err := diff.Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	diff.CoverManagedFields(s, cmp)
	for _, r := range cmp.Rules {
		covers := false
		for _, cov := range r.Covered {
			for _, p := range cov.Paths {
				for _, pr := range prot {
					covers = covers || hits(s.Resources[cov.Index].Ref(), p, pr)
				}
			}
		}
		if !covers {
			continue
		}
		flagged := false
		for _, f := range rep.Findings {
			flagged = flagged || (f.Resource == r.Holder && f.Path.String() == r.Path.String() && f.Cause == drift.CauseBroadIgnore)
		}
		if !flagged {
			t.Errorf("rule %s of %s covers a protected path and is not flagged", r.Path, r.Holder)
		}
	}
}

// checkRule fails when an ignore rule covers a protected path of a resource.
func checkRule(t *testing.T, s *drift.Snapshot, r drift.IgnoreRule, prot []protected, what string) {
	t.Helper()
	for i := range s.Resources {
		res := &s.Resources[i]
		ref := res.Ref()
		if (r.Group != "*" && r.Group != ref.Group) || (r.Kind != "*" && r.Kind != ref.Kind) ||
			(r.Name != "" && r.Name != ref.Name) || (r.Namespace != "" && r.Namespace != ref.Namespace) {
			continue
		}
		for _, p := range diff.RuleCovers(&r, res) {
			for _, pr := range prot {
				if ref.Kind == pr.kind && ref.Name == pr.name && p.Related(pr.path) {
					t.Errorf("%s hides %s %s", what, ref, p)
				}
			}
		}
	}
}

func rulesOf(app drift.Object) []drift.IgnoreRule {
	var out []drift.IgnoreRule
	for _, e := range drift.List(app, "spec", "ignoreDifferences") {
		m := drift.Map(e)
		r := drift.IgnoreRule{Group: drift.Str(m, "group"), Kind: drift.Str(m, "kind"), Name: drift.Str(m, "name"), Namespace: drift.Str(m, "namespace")}
		for _, v := range drift.List(m, "jsonPointers") {
			r.JSONPointers = append(r.JSONPointers, drift.Str(map[string]any{"v": v}, "v"))
		}
		for _, v := range drift.List(m, "jqPathExpressions") {
			r.JQPathExpressions = append(r.JQPathExpressions, drift.Str(map[string]any{"v": v}, "v"))
		}
		for _, v := range drift.List(m, "managedFieldsManagers") {
			r.ManagedFieldsManagers = append(r.ManagedFieldsManagers, drift.Str(map[string]any{"v": v}, "v"))
		}
		out = append(out, r)
	}
	return out
}

func decodeDocs(t *testing.T, b []byte) []drift.Object {
	t.Helper()
	var out []drift.Object
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode a file a plan writes: %v", err)
		}
		if doc != nil {
			out = append(out, doc)
		}
	}
}

func docValue(docs []drift.Object, pr protected) (any, bool) {
	for _, d := range docs {
		if drift.Str(d, "kind") == pr.kind && drift.Str(d, "metadata", "name") == pr.name {
			return pr.path.Get(d)
		}
	}
	return nil, false
}
