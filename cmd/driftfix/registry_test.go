package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// policyFixes parses a policy whose fixes section is the given flow mapping.
func policyFixes(fixes string) error {
	_, err := config.Parse([]byte("argocd: [{server: https://argocd.example.com, tokenEnv: T}]\npolicy:\n  fixes: " + fixes + "\n"))
	return err
}

// TestRegistryEntriesComplete fails when a cause or a fix kind of the
// registries lacks what a user meets it by: its line in docs/causes-and-fixes.md, its name
// in the policy file, and for a fix kind the title of its pull request.
func TestRegistryEntriesComplete(t *testing.T) {
	causes := docSection(t, "docs/causes-and-fixes.md", "causes")
	seen := map[drift.Cause]bool{}
	var fixable drift.Cause // a cause the policy may give fix kinds
	for _, c := range classifiers.Registry {
		switch {
		case c.Name == "" || c.Doc == "" || c.Classify == nil:
			t.Errorf("classifier %q needs a Name, a Doc and a Classify", c.Name)
		case seen[c.Name]:
			t.Errorf("cause %s is registered twice", c.Name)
		case !strings.Contains(causes, fmt.Sprintf("| `%s` | %s |", c.Name, c.Doc)):
			t.Errorf("cause %s has no row in the cause table of docs/causes-and-fixes.md (go generate ./cmd/driftfix)", c.Name)
		}
		seen[c.Name] = true
		if err := policyFixes(fmt.Sprintf("{%s: []}", c.Name)); err != nil {
			t.Errorf("the policy cannot name cause %s: %v", c.Name, err)
		}
		if fixable == "" && c.Name != drift.CauseManualChange {
			fixable = c.Name
		}
	}
	if err := policyFixes("{not-a-cause: []}"); err == nil {
		t.Error("the policy accepts a cause no classifier names")
	}
	if err := policyFixes(fmt.Sprintf("{%s: [not-a-fix-kind]}", fixable)); err == nil {
		t.Error("the policy accepts a fix kind no remedy plans")
	}

	kinds := docSection(t, "docs/causes-and-fixes.md", "fixes")
	ref := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	fallback := templates.PRTitle(templates.PRView{App: "web", Resource: ref, Findings: []templates.FindingView{{Resource: ref, Path: "/spec/x"}}})
	seenKind := map[drift.FixKind]bool{}
	for _, r := range remediations.Remedies {
		switch {
		case r.Kind == "" || r.Doc == "" || r.Plan == nil:
			t.Errorf("remedy %q needs a Kind, a Doc and a Plan", r.Kind)
		case seenKind[r.Kind]:
			t.Errorf("fix kind %s is registered twice", r.Kind)
		case !strings.Contains(kinds, fmt.Sprintf("| `%s` | %s |", r.Kind, r.Doc)):
			t.Errorf("fix kind %s has no row in the fix table of docs/causes-and-fixes.md (go generate ./cmd/driftfix)", r.Kind)
		}
		seenKind[r.Kind] = true
		if got, ok := remediations.Lookup(r.Kind); !ok || got.Title != r.Title {
			t.Errorf("fix kind %s is not found by remediations.Lookup", r.Kind)
		}
		v := templates.PRView{App: "web", Kind: r.Kind, Action: r.Title, Resource: ref, Findings: []templates.FindingView{{Resource: ref, Path: "/spec/x"}}}
		title := templates.PRTitle(v)
		if r.Title == "" || title == fallback || strings.ContainsAny(title, "{}") {
			t.Errorf("fix kind %s has no pull request title of its own: Title %q renders %q", r.Kind, r.Title, title)
		}
		if err := policyFixes(fmt.Sprintf("{%s: [%s]}", fixable, r.Kind)); err != nil {
			t.Errorf("the policy cannot name fix kind %s: %v", r.Kind, err)
		}
	}
}
