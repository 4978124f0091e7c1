package remediations

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/appset"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

var testRule = ignoreRule{Group: "apps", Kind: "Deployment", Name: "orders", Namespace: "shop", JSONPointers: []string{"/spec/replicas"}}

func app(name string, rules ...any) drift.Object {
	spec := map[string]any{"project": "default", "source": map[string]any{"repoURL": "https://git.example.com/x.git", "path": "apps/" + name}}
	if len(rules) > 0 {
		spec["ignoreDifferences"] = rules
	}
	return map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": map[string]any{"name": name}, "spec": spec}
}

// TestCompareGenerated checks the reach of an edit of a generating source:
// only the Application it is for may change, and only by the rule.
func TestCompareGenerated(t *testing.T) {
	old := map[string]any{"group": "", "kind": "Service", "jsonPointers": []any{"/spec/clusterIP"}}
	rule := toPlainYAML(testRule.object())
	changedOther := app("payments", rule)
	moved := app("orders", rule)
	moved["spec"].(map[string]any)["source"].(map[string]any)["path"] = "elsewhere"
	cases := []struct {
		name          string
		before, after []drift.Object
		refused       string
	}{
		{name: "only the rule", before: []drift.Object{app("orders", old), app("payments")}, after: []drift.Object{app("orders", old, rule), app("payments")}},
		{name: "another application changes", before: []drift.Object{app("orders"), app("payments")}, after: []drift.Object{app("orders", rule), changedOther}, refused: "also change Application payments"},
		{name: "an application appears", before: []drift.Object{app("orders")}, after: []drift.Object{app("orders", rule), app("new")}, refused: "also change Application new"},
		{name: "an old rule is lost", before: []drift.Object{app("orders", old)}, after: []drift.Object{app("orders", rule)}, refused: "loses or adds"},
		{name: "more than the rule changes", before: []drift.Object{app("orders")}, after: []drift.Object{moved}, refused: "changes more"},
		{name: "the rule is missing", before: []drift.Object{app("orders")}, after: []drift.Object{app("orders")}, refused: "does not have the rule"},
		{name: "the application vanishes", before: []drift.Object{app("orders")}, after: nil, refused: "no longer makes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, why := compareGenerated("ApplicationSet s", "orders", tc.before, tc.after, testRule, false)
			if tc.refused == "" {
				if why != "" || got == nil {
					t.Fatalf("refused: %s", why)
				}
				return
			}
			if !strings.Contains(why, tc.refused) {
				t.Fatalf("why = %q, want %q", why, tc.refused)
			}
		})
	}
}

// TestUniqueCondition checks the templatePatch condition: a string
// parameter only this Application has, its name's value first.
func TestUniqueCondition(t *testing.T) {
	gen := func(name string, params map[string]any) appset.Generated {
		return appset.Generated{Application: app(name), Params: params}
	}
	cases := []struct {
		name string
		all  []appset.Generated
		want string // "" when none exists
	}{
		{name: "name", all: []appset.Generated{gen("a", map[string]any{"name": "a", "team": "x"}), gen("b", map[string]any{"name": "b", "team": "x"})}, want: `eq .name "a"`},
		{name: "nested basename", all: []appset.Generated{gen("a", map[string]any{"path": map[string]any{"basename": "a", "path": "apps/a"}}), gen("b", map[string]any{"path": map[string]any{"basename": "b", "path": "apps/b"}})}, want: `eq .path.basename "a"`},
		{name: "shared values only", all: []appset.Generated{gen("a", map[string]any{"team": "x"}), gen("b", map[string]any{"team": "x"})}},
		{name: "missing in another", all: []appset.Generated{gen("a", map[string]any{"only": "a"}), gen("b", map[string]any{"other": "b"})}},
		{name: "not an identifier", all: []appset.Generated{gen("a", map[string]any{"my-name": "a"}), gen("b", map[string]any{"my-name": "b"})}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := uniqueCondition(tc.all[0], tc.all)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("got %q, want none", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

func TestElementParam(t *testing.T) {
	cases := map[string]string{
		"{{- if .ignoreDifferences }}\nspec: {}\n{{- end }}":    "ignoreDifferences",
		`{{ toJson (index . "extraIgnoreDifferences") }}`:       "extraIgnoreDifferences",
		"{{ .a.ignoreDifferences }} {{ .b }}":                   "ignoreDifferences",
		"{{ .ignoreDifferences }} {{ .moreIgnoreDifferences }}": "",
		"spec: {}": "",
	}
	for in, want := range cases {
		if got := elementParam(in); got != want {
			t.Errorf("elementParam(%q) = %q, want %q", in, got, want)
		}
	}
}

// appSetContext is a planning context for Application orders, owned by the
// ApplicationSet in appsets/set.yaml.
func appSetContext(set []byte) (*Context, appOrigin) {
	a := app("orders")
	a["metadata"].(map[string]any)["namespace"] = "argocd"
	a["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": "s"}}
	c := &Context{Snapshot: &drift.Snapshot{Application: a}, Repo: Repo{"appsets/set.yaml": set}}
	return c, appOrigin{App: "orders", AppSet: "s"}
}

// FuzzAppSetIgnore edits arbitrary ApplicationSet files: it never panics,
// and an edit it makes resolves to the Application with the rule, every
// other Application unchanged, and making it again changes nothing.
func FuzzAppSetIgnore(f *testing.F) {
	for _, s := range []string{
		"apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: s\n  namespace: argocd\nspec:\n  generators:\n    - list:\n        elements:\n          - name: orders\n  template:\n    metadata:\n      name: '{{name}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/x.git\n        path: apps/orders\n      destination:\n        server: https://kubernetes.default.svc\n",
		"apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: s\nspec:\n  goTemplate: true\n  generators:\n    - list:\n        elements:\n          - name: orders\n          - name: payments\n  template:\n    metadata:\n      name: '{{.name}}'\n    spec:\n      project: default\n      source: {repoURL: https://git.example.com/x.git, path: 'apps/{{.name}}'}\n      destination: {server: https://kubernetes.default.svc}\n",
		"apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: s\nspec:\n  goTemplate: true\n  generators:\n    - list:\n        elements:\n          - {name: orders}\n          - name: payments\n            ignoreDifferences: []\n  template:\n    metadata: {name: '{{.name}}'}\n    spec:\n      project: default\n      source: {repoURL: https://git.example.com/x.git, path: 'apps/{{.name}}'}\n      destination: {server: https://kubernetes.default.svc}\n  templatePatch: |\n    {{- with .ignoreDifferences }}\n    spec:\n      ignoreDifferences: {{ toJson . }}\n    {{- end }}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, set []byte) {
		if len(set) > 4096 {
			return
		}
		c, o := appSetContext(set)
		ie, _ := c.ignoreInAppSet(o, testRule, false, "driftfix: test")
		if ie == nil || ie.already {
			return
		}
		if !hasRule(ie.app, testRule) {
			t.Fatalf("the edit's Application lacks the rule:\n%s", ie.edits[0].After)
		}
		if _, err := yamledit.Documents(ie.edits[0].After); err != nil {
			t.Fatalf("the edited file does not parse: %v\n%s", err, ie.edits[0].After)
		}
		c2, o2 := appSetContext(ie.edits[0].After)
		again, why := c2.ignoreInAppSet(o2, testRule, false, "driftfix: test")
		if again == nil || !again.already {
			t.Fatalf("making the edit again is not a no-op (%s):\n%s", why, ie.edits[0].After)
		}
	})
}

// FuzzEntriesNamed reads arbitrary values files: every entry it names
// exists, and is a map named after the application or a list item naming it.
func FuzzEntriesNamed(f *testing.F) {
	f.Add([]byte("apps:\n  orders:\n    path: a\n  payments: {path: b}\n"), "orders")
	f.Add([]byte("applications:\n  - name: orders\n    ignoreDifferences: []\n  - name: x\n"), "orders")
	f.Fuzz(func(t *testing.T, values []byte, name string) {
		if len(values) > 4096 {
			return
		}
		docs, err := yamledit.Documents(values)
		if err != nil || len(docs) != 1 {
			return
		}
		for _, p := range entriesNamed(docs[0], name, nil, 0) {
			v, ok := p.Get(docs[0])
			if !ok {
				t.Fatalf("entry %s does not exist", p)
			}
			m, isMap := v.(map[string]any)
			if !isMap {
				t.Fatalf("entry %s is a %T, not a map", p, v)
			}
			if p.Last() != name && m["name"] != name && m["app"] != name && m["appName"] != name {
				t.Fatalf("entry %s is not named %q", p, name)
			}
			out, err := yamledit.AppendItem(values, 0, append(append(drift.Pointer{}, p...), "ignoreDifferences"), testRule, "c")
			if err != nil {
				continue
			}
			again, err := yamledit.AppendItem(out, 0, append(append(drift.Pointer{}, p...), "ignoreDifferences"), testRule, "c")
			if err != nil || string(again) != string(out) {
				t.Fatalf("appending the rule twice changes the file again (%v)", err)
			}
		}
	})
}

// TestTemplatedRuleRefused: a path from the cluster that holds {{ is never
// written where a template engine reads it (an ApplicationSet's template).
func TestTemplatedRuleRefused(t *testing.T) {
	set := []byte("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: s\n  namespace: argocd\nspec:\n  generators:\n    - list:\n        elements:\n          - name: orders\n  template:\n    metadata:\n      name: '{{name}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/x.git\n        path: apps/orders\n      destination:\n        server: https://kubernetes.default.svc\n")
	c, o := appSetContext(set)
	if ie, why := c.ignoreInAppSet(o, testRule, false, ""); ie == nil {
		t.Fatalf("the plain rule is refused: %s", why)
	}
	evil := testRule
	evil.JSONPointers = []string{"/spec/data/{{ .Env }}"}
	if ie, why := c.ignoreInAppSet(o, evil, false, ""); ie != nil || !strings.Contains(why, "{{") {
		t.Fatalf("a rule holding {{ was written (%q)", why)
	}
}

// ManagedIdentities exposes, to the corpus tests, the resources an
// Application's sources in repo render (managedIdentities).
func ManagedIdentities(app drift.Object, repo Repo) ([]drift.Ref, error) {
	c := &Context{Snapshot: &drift.Snapshot{Application: app}, Repo: repo}
	return c.managedIdentities(app)
}

func TestJSONAppend(t *testing.T) {
	rule := jsonRule{Group: "apps", Kind: "Deployment", Name: "orders", JSONPointers: []string{"/spec/replicas"}}
	cases := []struct{ name, src, want string }{
		{"list with an element", "{\n  \"name\": \"orders\",\n  \"ignoreDifferences\": [\n    {\"group\": \"\", \"kind\": \"Service\"}\n  ]\n}\n",
			"{\n  \"name\": \"orders\",\n  \"ignoreDifferences\": [\n    {\"group\": \"\", \"kind\": \"Service\"},\n    {\n      \"group\": \"apps\",\n      \"kind\": \"Deployment\",\n      \"name\": \"orders\",\n      \"jsonPointers\": [\n        \"/spec/replicas\"\n      ]\n    }\n  ]\n}\n"},
		{"empty list", "{\n    \"name\": \"orders\",\n    \"ignoreDifferences\": []\n}\n",
			"{\n    \"name\": \"orders\",\n    \"ignoreDifferences\": [\n        {\n            \"group\": \"apps\",\n            \"kind\": \"Deployment\",\n            \"name\": \"orders\",\n            \"jsonPointers\": [\n                \"/spec/replicas\"\n            ]\n        }\n    ]\n}\n"},
		{"no key", "{\n  \"name\": \"orders\"\n}\n",
			"{\n  \"name\": \"orders\",\n  \"ignoreDifferences\": [\n    {\n      \"group\": \"apps\",\n      \"kind\": \"Deployment\",\n      \"name\": \"orders\",\n      \"jsonPointers\": [\n        \"/spec/replicas\"\n      ]\n    }\n  ]\n}\n"},
		{"one line", `{"name":"orders","ignoreDifferences":[]}`,
			`{"name":"orders","ignoreDifferences":[{"group":"apps","kind":"Deployment","name":"orders","jsonPointers":["/spec/replicas"]}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonAppend([]byte(tc.src), "ignoreDifferences", rule)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	for _, bad := range []string{`[1]`, `{"ignoreDifferences": {"a": 1}}`, `{"ignoreDifferences": null}`, `{"a": `} {
		if _, err := jsonAppend([]byte(bad), "ignoreDifferences", rule); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// FuzzJSONAppend: on any input the editor either refuses or returns JSON
// that is the input's object with the rule appended (jsonAppend checks it;
// this checks it again, and that it never panics).
func FuzzJSONAppend(f *testing.F) {
	for _, s := range []string{"{}", "{\n  \"ignoreDifferences\": [\n    {}\n  ]\n}", `{"a":[1,2],"ignoreDifferences":[]}`, `{"ignoreDifferences":["x"], "ignoreDifferences": []}`, "{\"a\": \"[\", \"ignoreDifferences\" : [ ] }"} {
		f.Add([]byte(s))
	}
	rule := jsonRule{Group: "apps", Kind: "Deployment", Name: "o", JSONPointers: []string{"/x"}}
	f.Fuzz(func(t *testing.T, src []byte) {
		out, err := jsonAppend(src, "ignoreDifferences", rule)
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		l, _ := m["ignoreDifferences"].([]any)
		if len(l) == 0 || drift.Str(l[len(l)-1], "name") != "o" {
			t.Fatalf("the rule is not last:\n%s", out)
		}
	})
}

// TestRuleIdentity: what a rule in a shared template may match on another
// Application decides whether driftfix writes it there; a doubt must match.
func TestRuleIdentity(t *testing.T) {
	dep := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "orders"}
	cases := []struct {
		name  string
		rule  ignoreRule
		id    drift.Ref
		match bool
	}{
		{"the same resource", ignoreRule{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "orders"}, dep, true},
		{"another namespace", ignoreRule{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "orders"}, drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "orders"}, false},
		{"another kind of the same name", ignoreRule{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "orders"}, drift.Ref{Kind: "Service", Namespace: "shop", Name: "orders"}, false},
		{"a cluster-scoped rule matches every namespace", ignoreRule{Group: "apps", Kind: "Deployment", Name: "orders"}, drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "orders"}, true},
		{"a resource of unknown namespace may be anywhere", ignoreRule{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "orders"}, drift.Ref{Group: "apps", Kind: "Deployment", Name: "orders"}, true},
	}
	for _, tc := range cases {
		if got := sameIdentity(tc.rule, tc.id); got != tc.match {
			t.Errorf("sameIdentity %s = %v", tc.name, got)
		}
		if got := ruleMatches(toPlainYAML(tc.rule.object()), tc.id); got != tc.match {
			t.Errorf("ruleMatches %s = %v", tc.name, got)
		}
	}
	for _, tc := range []struct {
		rule  map[string]any
		match bool
	}{
		{map[string]any{"group": "apps", "kind": "Deployment"}, true},
		{map[string]any{"group": "*", "kind": "Deployment", "name": "orders"}, true},
		{map[string]any{"group": "apps", "kind": "Deploy*"}, true},
		{map[string]any{"group": "", "kind": "Deployment"}, false},
		{map[string]any{"group": "apps", "kind": "Deployment", "name": "payments"}, false},
	} {
		if got := ruleMatches(tc.rule, dep); got != tc.match {
			t.Errorf("ruleMatches %v = %v, want %v", tc.rule, got, tc.match)
		}
	}
}
