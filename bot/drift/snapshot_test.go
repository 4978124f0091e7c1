package drift

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const minimal = `apiVersion: driftfix/v1
kind: Snapshot
application:
  apiVersion: argoproj.io/v1alpha1
  kind: Application
  metadata: {name: web}
resources:
- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}, data: {a: "1"}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}, data: {a: "2"}}
`

func TestParseSnapshotMinimal(t *testing.T) {
	s, err := ParseSnapshot([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if s.AppName() != "web" || len(s.Resources) != 1 {
		t.Fatalf("parsed %q with %d resources", s.AppName(), len(s.Resources))
	}
	if got := s.Resources[0].Ref(); got != (Ref{Kind: "ConfigMap", Namespace: "n", Name: "c"}) {
		t.Fatalf("ref = %+v", got)
	}
}

func TestParseSnapshotJSON(t *testing.T) {
	in := `{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"web"}},
"resources":[{"target":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"n":1.5,"i":3}},"live":null}]}`
	s, err := ParseSnapshot([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	data := Map(s.Resources[0].Target, "data")
	if data["n"] != 1.5 || data["i"] != int64(3) {
		t.Fatalf("numbers decoded as %#v", data)
	}
}

func TestParseSnapshotErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
		line           int
	}{
		{"unknown top-level field", minimal + "extra: 1\n", `unknown field "extra"`, 10},
		{"missing resources", strings.Split(minimal, "resources:")[0], `missing required field "resources"`, 1},
		{"wrong apiVersion", strings.Replace(minimal, "driftfix/v1", "driftfix/v2", 1), `apiVersion must be "driftfix/v1"`, 1},
		{"wrong kind", strings.Replace(minimal, "kind: Snapshot", "kind: Snap", 1), `kind must be "Snapshot"`, 2},
		{"application not an Application", strings.Replace(minimal, "kind: Application", "kind: AppProject", 1), `application: kind must be "Application"`, 4},
		{"unknown resource field", strings.Replace(minimal, "  live:", "  lve:", 1), `resources[0]: unknown field "lve"`, 9},
		{"resource without name", strings.Replace(minimal, "metadata: {name: c, namespace: n}, data: {a: \"1\"}", "metadata: {namespace: n}", 1), `resources[0].target: missing required field "metadata.name"`, 8},
		{"resource without kind", strings.Replace(minimal, "{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}, data: {a: \"2\"}}", "{apiVersion: v1, metadata: {name: c}}", 1), `resources[0].live: missing required field "kind"`, 9},
		{"target and live disagree", strings.Replace(minimal, "metadata: {name: c, namespace: n}, data: {a: \"2\"}", "metadata: {name: d, namespace: n}", 1), `target is ConfigMap n/c but live is ConfigMap n/d`, 8},
		{"both null", strings.Replace(strings.Replace(minimal, "- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}, data: {a: \"1\"}}", "- target: null", 1), "  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}, data: {a: \"2\"}}", "  live: null", 1), "needs target or live", 8},
		{"duplicate key", strings.Replace(minimal, "data: {a: \"1\"}", "data: {a: \"1\", a: \"3\"}", 1), `key "a" appears twice`, 8},
		{"not yaml", "apiVersion: [", "not valid YAML or JSON", 1},
		{"two documents", minimal + "---\nfoo: 1\n", "more than one document", 10},
		{"scalar", "just text", "must be a mapping", 1},
		{"repo content not a string", minimal + "repo:\n  files:\n    a.yaml: {x: 1}\n", `repo.files["a.yaml"]: content must be a string`, 12},
		{"renders not lists", minimal + "renders: [{apiVersion: v1}]\n", "renders[0]: must be a list", 10},
		{"infinite number", strings.Replace(minimal, `{a: "1"}`, `{a: .inf}`, 1), "has no JSON form", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSnapshot([]byte(tt.in))
			if err == nil {
				t.Fatalf("no error; parsed %+v", s)
			}
			if s != nil {
				t.Fatal("a snapshot was returned with an error")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if pe.Line != tt.line {
				t.Errorf("error %q on line %d, want line %d", err, pe.Line, tt.line)
			}
		})
	}
}

func TestLoadSnapshotNamesFile(t *testing.T) {
	path := t.TempDir() + "/bad.yaml"
	if err := os.WriteFile(path, []byte(minimal+"bogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadSnapshot(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":10: ") {
		t.Fatalf("error %v does not start with the file and line", err)
	}
	if _, err := LoadSnapshot(path + ".missing"); err == nil || !strings.Contains(err.Error(), "read snapshot") {
		t.Fatalf("missing file error: %v", err)
	}
}

func TestAliasBomb(t *testing.T) {
	in := minimal + "cluster:\n- &a {apiVersion: v1, kind: X, metadata: {name: x}, l: [1,1,1,1,1,1,1,1,1,1]}\n"
	var b strings.Builder
	b.WriteString(minimal + "repo: {files: {}}\ncluster:\n- apiVersion: v1\n  kind: L\n  metadata: {name: l}\n  a: &a [x,x,x,x,x,x,x,x,x,x]\n")
	prev := "a"
	for i := 0; i < 8; i++ {
		name := string(rune('b' + i))
		b.WriteString("  " + name + ": &" + name + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = name
	}
	if _, err := ParseSnapshot([]byte(in)); err != nil {
		t.Fatalf("a single alias must parse: %v", err)
	}
	_, err := ParseSnapshot([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "alias") {
		t.Fatalf("exponential aliases must be refused, got %v", err)
	}
}

// TestAliasStandsForObject: a manifest written once with an anchor may be
// named again by alias wherever a manifest goes, as a render tool's YAML
// writer does for an object shared by two renders.
func TestAliasStandsForObject(t *testing.T) {
	in := minimal + "renders:\n- - &cm {apiVersion: v1, kind: ConfigMap, metadata: {name: shared}}\n  - {apiVersion: v1, kind: Secret, metadata: {name: s1}}\n- - *cm\n  - {apiVersion: v1, kind: Secret, metadata: {name: s2}}\n"
	s, err := ParseSnapshot([]byte(in))
	if err != nil {
		t.Fatalf("an alias to a manifest must parse: %v", err)
	}
	if len(s.Renders) != 2 || Str(s.Renders[1][0], "metadata", "name") != "shared" || Str(s.Renders[1][1], "metadata", "name") != "s2" {
		t.Fatalf("the alias must stand for the anchored manifest, got %v", s.Renders)
	}
	// An alias to something that is not a manifest is still refused by what it stands for.
	bad := minimal + "renders:\n- - &n 3\n- - *n\n"
	if _, err := ParseSnapshot([]byte(bad)); err == nil || !strings.Contains(err.Error(), "renders[0][0]: must be a Kubernetes object") {
		t.Fatalf("a scalar in place of a manifest must be refused, got %v", err)
	}
}

// FuzzParseSnapshot: arbitrary bytes never panic, and either parse completely
// or give a *ParseError.
func FuzzParseSnapshot(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(`{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"a","kind":"Application","metadata":{"name":"x"}},"resources":[]}`))
	f.Add([]byte("a: &x [*x]"))
	f.Add([]byte("<<: {a: 1}"))
	if b, err := os.ReadFile("../../testdata/cases/27-broad-ignore-system-all.yaml"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSnapshot(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if s != nil {
				t.Fatal("snapshot returned with an error")
			}
			return
		}
		if s.Application == nil || s.AppName() == "" {
			t.Fatal("parsed snapshot without an application name")
		}
		for _, r := range s.Resources {
			if r.Target == nil && r.Live == nil {
				t.Fatal("resource with neither target nor live")
			}
		}
	})
}

// FuzzQuickJSONReader checks that the quick JSON reader accepts a snapshot
// only when the YAML reader does, with the same values, and that what it
// refuses itself is a limit.
func FuzzQuickJSONReader(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"a","kind":"Application","metadata":{"name":"x"}},"resources":[]}`))
	f.Add([]byte(`{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"a","kind":"Application","metadata":{"name":"x"}},"resources":[{"target":null,"live":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"n":1.5e3,"i":-7,"big":123456789012345678901,"s":"\u00e9\ud83d\ude00\n","t":true,"z":null}}}],"repo":{"files":{"a.yaml":"x: 1\n"}}}`))
	f.Add([]byte(`{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"a","kind":"Application","metadata":{"name":"x"}},"resources":[],"cluster":[],"renders":[[]],"repo":null}`))
	if files, err := filepath.Glob("../../testdata/cases/*.yaml"); err == nil {
		for _, file := range files {
			if s, err := LoadSnapshot(file); err == nil {
				if b, err := json.Marshal(s); err == nil {
					f.Add(b)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxStringBytes: 64, MaxResources: 4}.withDefaults()
		quick, ok, qerr := parseJSONSnapshot(data, lim)
		if !ok {
			return
		}
		if qerr != nil {
			if !strings.Contains(qerr.Error(), "over the limit") {
				t.Fatalf("the quick reader refused with %v, which is not a limit", qerr)
			}
			return
		}
		slow, err := parseYAMLSnapshot(data, lim)
		if err != nil {
			t.Fatalf("the quick reader accepted what the YAML reader refuses: %v", err)
		}
		if !reflect.DeepEqual(quick, slow) {
			t.Fatalf("the readers disagree:\nquick %#v\nyaml  %#v", quick, slow)
		}
	})
}

// TestQuickReaderLeavesControlsToYAML: a JSON snapshot holding a raw DEL or
// C1 control character (valid JSON, not valid YAML) is refused as the YAML
// reader refuses it, naming it; the same character escaped is read by both.
func TestQuickReaderLeavesControlsToYAML(t *testing.T) {
	snap := func(name string) string {
		return `{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"a","kind":"Application","metadata":{"name":"` + name + `"}},"resources":[]}`
	}
	for _, tc := range []struct {
		name, input string
		ok          bool
	}{
		{"raw DEL", snap("x\x7f"), false},
		{"raw DEL in a key", strings.Replace(snap("x"), `"name"`, "\"na\x7fme\"", 1), false},
		{"raw C1 control", snap("x\u0080"), false},
		{"raw NEL", snap("x\u0085"), true},
		{"escaped DEL", snap(`x\u007f`), true},
		{"non-ASCII letters", snap("café-ä"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSnapshot([]byte(tc.input))
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "control characters")) {
				t.Fatalf("want the YAML reader's refusal naming control characters, got %v", err)
			}
			if _, quick, _ := parseJSONSnapshot([]byte(tc.input), Limits{}.withDefaults()); quick != tc.ok {
				t.Fatalf("quick reader took it: %v, want %v", quick, tc.ok)
			}
		})
	}
}

// TestQuickReaderLeavesSlashEscapeToYAML: JSON's \/ escape, which the YAML
// reader does not know, is refused as the YAML reader refuses it, naming
// its line; outside snapshots (DecodeJSON) it reads as encoding/json reads it.
func TestQuickReaderLeavesSlashEscapeToYAML(t *testing.T) {
	data := []byte(`{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"a","kind":"Application","metadata":{"name":"x","annotations":{"u":"a\/b"}}},"resources":[]}`)
	_, err := ParseSnapshot(data)
	if err == nil || !strings.Contains(err.Error(), "escape") {
		t.Fatalf("a snapshot with \\/: %v, want the YAML reader's error", err)
	}
	if v, ok := DecodeJSON([]byte(`"a\/b"`)); !ok || v != "a/b" {
		t.Fatalf("DecodeJSON: %v %v", v, ok)
	}
}
