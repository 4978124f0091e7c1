package remediations

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// TestTemplateAppend edits the one Application of a Helm template through
// its masked text: only lines are added; a template whose YAML its control
// flow shapes is refused.
func TestTemplateAppend(t *testing.T) {
	const tpl = "{{/* the app */}}\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{ .Values.name }}\nspec:\n  destination:\n    server: {{ .Values.server | quote }}\n  project: default\n"
	out, err := templateAppend([]byte(tpl), drift.MustPointer("/spec/ignoreDifferences"), testRule, "why")
	if err != nil {
		t.Fatal(err)
	}
	want := tpl + "  ignoreDifferences:\n    # why\n    - group: apps\n      kind: Deployment\n      name: orders\n      namespace: shop\n      jsonPointers:\n        - /spec/replicas\n"
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	for _, refused := range []string{
		"{{- range .Values.apps }}\nkind: Application\nmetadata:\n  name: {{ .name }}\nspec: {}\n{{- end }}\n",
		"kind: Application\nspec:\n  {{- if .Values.x }}\n  project: a\n  {{- end }}\n",
		"kind: Application\nmetadata:\n  name: {{ .Values.x\n  }}\n",
		"kind: Application\n---\nkind: Application\n",
	} {
		if out, err := templateAppend([]byte(refused), drift.MustPointer("/spec/ignoreDifferences"), testRule, ""); err == nil {
			t.Errorf("edited a template it cannot read:\n%s\n->\n%s", refused, out)
		}
	}
}

// FuzzTemplateAppend edits arbitrary templates: an edit only adds lines,
// every line of the template is kept in order, and the masked result reads
// the rule back.
func FuzzTemplateAppend(f *testing.F) {
	f.Add([]byte("kind: Application\nmetadata:\n  name: {{ .Values.n }}\nspec:\n  project: p\n"))
	f.Add([]byte("# c\nkind: Application\nspec:\n  ignoreDifferences:\n    - kind: Service\n      group: \"\"\n  x: {{ .Values.x }}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 2048 {
			return
		}
		out, err := templateAppend(src, drift.MustPointer("/spec/ignoreDifferences"), testRule, "c")
		if err != nil {
			return
		}
		in := strings.SplitAfter(string(src), "\n")
		got := strings.SplitAfter(string(out), "\n")
		j := 0
		for _, l := range got {
			if j < len(in) && l == in[j] {
				j++
			}
		}
		if j != len(in) {
			t.Fatalf("the edit dropped or changed template lines:\n%s\n->\n%s", src, out)
		}
		masked, ok := maskTemplate(out)
		if !ok {
			t.Fatalf("the edited template no longer masks:\n%s", out)
		}
		docs, err := yamledit.Documents(masked)
		if err != nil {
			t.Fatalf("the edited template is no longer YAML once masked: %v\n%s", err, out)
		}
		found := false
		for _, d := range docs {
			found = found || hasRule(d.(map[string]any), testRule)
		}
		if !found {
			t.Fatalf("the rule does not read back:\n%s", out)
		}
	})
}

// TestRangeHook: a template that makes its Applications in a range over a
// values collection comes to read each element's ignore rules (and, when
// asked, to keep them at sync), with only lines added; other forms are
// refused.
func TestRangeHook(t *testing.T) {
	const body = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{ $name }}\nspec:\n  project: default\n  syncPolicy:\n    syncOptions:\n      - CreateNamespace=true\n"
	tpl := "{{- range $name, $app := .Values.apps }}\n---\n" + body + "{{- end }}\n"
	coll, hook, ok := rangeHook([]byte(tpl), true)
	if !ok || coll.String() != "/apps" {
		t.Fatalf("not a range over .Values.apps: %v %v", ok, coll)
	}
	out, err := hook([]byte(tpl))
	if err != nil {
		t.Fatal(err)
	}
	want := "{{- range $name, $app := .Values.apps }}\n---\n" + strings.Replace(body, "      - CreateNamespace=true\n",
		"      - CreateNamespace=true\n      {{- if $app.ignoreDifferences }}\n      - RespectIgnoreDifferences=true\n      {{- end }}\n", 1) +
		"  {{- with $app.ignoreDifferences }}\n  ignoreDifferences:\n    {{- toYaml . | nindent 4 }}\n  {{- end }}\n{{- end }}\n"
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	if again, err := hook(out); err != nil || string(again) != string(out) {
		t.Fatalf("hooking twice changes the template (%v):\n%s", err, again)
	}
	for _, refused := range []string{
		body, // no range
		"{{- range .Values.a }}\n" + body + "{{- end }}\n{{- range .Values.b }}\n" + body + "{{- end }}\n", // two
		"{{- range .Values.a }}\nkind: Application\nspec:\n  ignoreDifferences: {{ .x }}\n{{- end }}\n",    // writes its own
	} {
		if _, hook, ok := rangeHook([]byte(refused), false); ok {
			if out, err := hook([]byte(refused)); err == nil {
				t.Errorf("hooked a template it should refuse:\n%s\n->\n%s", refused, out)
			}
		}
	}
}

func TestElementFor(t *testing.T) {
	list := []any{map[string]any{"name": "guestbook"}, map[string]any{"name": "guestbook-ui"}, map[string]any{"name": "orders", "path": "x"}}
	cases := []struct {
		coll any
		app  string
		want string // "" when none is certain
	}{
		{list, "orders", "/2"},
		{list, "example.orders", "/2"},
		{list, "example.guestbook-ui", "/1"},
		{list, "guestbook-ui-2", "/1"}, // the longest name it contains
		{[]any{map[string]any{"name": "alpha"}, map[string]any{"name": "omega"}}, "alpha-omega", ""}, // two as long
		{map[string]any{"orders": map[string]any{}, "pay": map[string]any{}}, "orders", "/orders"},
		{map[string]any{"orders": "flat"}, "orders", ""},
	}
	for _, tc := range cases {
		p, ok := elementFor(tc.coll, tc.app)
		if got := map[bool]string{true: p.String()}[ok]; got != tc.want {
			t.Errorf("elementFor(%s) = %q, want %q", tc.app, got, tc.want)
		}
	}
}
