package yamledit

import (
	"errors"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

const argocdCM = `# Argo CD's settings, owned by the platform team.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm # do not rename
  namespace: argocd
data:
  # who may log in
  admin.enabled: "false"
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers:
    - /spec/replicas
  timeout.reconciliation: 180s
`

func TestSetBlock(t *testing.T) {
	rule := "jsonPointers:\n- /spec/replicas\n- /metadata/labels/team\n"
	for _, tc := range []struct {
		name, src string
		p         drift.Pointer
		text      string
		want      string // the lines that replace or follow the kept ones
	}{
		{"replaces a block in place, keeping the lines around it", argocdCM,
			drift.Pointer{"data", "resource.customizations.ignoreDifferences.apps_Deployment"}, rule,
			strings.Replace(argocdCM, "    - /spec/replicas\n", "    - /spec/replicas\n    - /metadata/labels/team\n", 1)},
		{"adds a key at the end of the mapping", argocdCM,
			drift.Pointer{"data", "resource.customizations.ignoreDifferences.Service"}, "jsonPointers:\n- /spec/clusterIP\n",
			argocdCM + "  resource.customizations.ignoreDifferences.Service: |\n    jsonPointers:\n    - /spec/clusterIP\n"},
		{"creates missing mappings (Helm values)", "# values\nserver:\n  replicas: 2\n",
			drift.Pointer{"configs", "cm", "k"}, "a: 1\n",
			"# values\nserver:\n  replicas: 2\nconfigs:\n  cm:\n    k: |\n      a: 1\n"},
		{"replaces a plain value, keeping its comment", "data:\n  k: old # was set by hand\n",
			drift.Pointer{"data", "k"}, "x\ny",
			"data:\n  k: |- # was set by hand\n    x\n    y\n"},
		{"keeps blank lines inside the text", "data:\n  a: 1\n",
			drift.Pointer{"data", "b"}, "x\n\ny\n",
			"data:\n  a: 1\n  b: |\n    x\n\n    y\n"},
		{"adds below a trailing line of spaces, which the new text would otherwise take in", "spec:\n  template:\n    a: 1\n      \n",
			drift.Pointer{"spec", "patch"}, "x\n",
			"spec:\n  template:\n    a: 1\n      \n  patch: |\n    x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := SetBlock([]byte(tc.src), 0, tc.p, tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Fatalf("got:\n%s\nwant:\n%s", out, tc.want)
			}
			again, err := SetBlock(out, 0, tc.p, tc.text)
			if err != nil || string(again) != string(out) {
				t.Fatalf("setting the same text twice changed the file (err %v):\n%s", err, again)
			}
		})
	}
}

func TestSetBlockRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, src, text string
		p               drift.Pointer
	}{
		{"indented first line", argocdCM, "  x\n", drift.Pointer{"data", "k"}},
		{"trailing blank lines", argocdCM, "x\n\n", drift.Pointer{"data", "k"}},
		{"line of spaces", argocdCM, "x\n  \ny\n", drift.Pointer{"data", "k"}},
		{"a mapping in place", argocdCM, "x\n", drift.Pointer{"data"}},
		{"flow mapping", "data: {a: 1}\n", "x\n", drift.Pointer{"data", "b"}},
		{"root", argocdCM, "x\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := SetBlock([]byte(tc.src), 0, tc.p, tc.text); !errors.Is(err, ErrUnsupported) {
				t.Fatalf("want ErrUnsupported, got %v:\n%s", err, out)
			}
		})
	}
}

const jsonPatch = `# argocd-cm settings, as a JSON 6902 patch
- op: add
  path: /data/timeout.reconciliation
  value: 180s
`

func TestAppendTopItem(t *testing.T) {
	item := map[string]any{"op": "add", "path": "/data/k", "value": "jsonPointers:\n- /spec/replicas\n"}
	out, err := AppendTopItem([]byte(jsonPatch), 0, item, "driftfix: one rule")
	if err != nil {
		t.Fatal(err)
	}
	want := jsonPatch + "# driftfix: one rule\n- op: add\n  path: /data/k\n  value: |\n    jsonPointers:\n    - /spec/replicas\n"
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	if again, err := AppendTopItem(out, 0, item, "driftfix: one rule"); err != nil || string(again) != string(out) {
		t.Fatalf("appending the same item twice changed the file (err %v):\n%s", err, again)
	}
	if _, err := AppendTopItem([]byte(argocdCM), 0, item, ""); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("a mapping document: want ErrUnsupported, got %v", err)
	}
}

// FuzzSetBlock writes random text at random paths of random documents: the
// editor never panics, refuses with a typed error, or returns YAML whose
// document holds exactly the text there (and every other document and field
// as it was, which SetBlock verifies), and a second write of the same text changes nothing.
func FuzzSetBlock(f *testing.F) {
	f.Add(argocdCM, uint16(7), "jsonPointers:\n- /a\n", false)
	f.Add("data:\n  k: v # c\n", uint16(2), "x\ny", true)
	f.Add("- op: add\n  path: /data/k\n  value: |\n    a\n", uint16(3), "b\n", false)
	f.Add("a:\n  b: |-\n    x\n  c: 1\n", uint16(2), "é\n\n\tz\n", true)
	f.Fuzz(func(t *testing.T, src string, pick uint16, text string, add bool) {
		docs, err := Documents([]byte(src))
		if err != nil || len(docs) == 0 {
			return
		}
		var ps []drift.Pointer
		pointers(docs[0], drift.Pointer{}, &ps)
		p := ps[int(pick)%len(ps)]
		if add {
			p = append(append(drift.Pointer{}, p...), "added.key")
		}
		out, err := SetBlock([]byte(src), 0, p, text)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrNotFound) {
				t.Fatalf("untyped refusal: %v", err)
			}
			return
		}
		after, err := Documents(out)
		if err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		if got, ok := p.Get(after[0]); !ok || got != text {
			t.Fatalf("%s holds %q, want %q:\n%s", p, got, text, out)
		}
		again, err := SetBlock(out, 0, p, text)
		if err != nil || string(again) != string(out) {
			t.Fatalf("a second write changed the file (err %v):\n%s\nthen:\n%s", err, out, again)
		}
	})
}

// FuzzAppendTopItem appends random items to random documents: it never
// panics, refuses with a typed error, or returns YAML whose list ends with
// exactly the item after every item it held before.
func FuzzAppendTopItem(f *testing.F) {
	f.Add(jsonPatch, "/data/k", "a\nb\n")
	f.Add("- a\n- b # c\n", "x", "")
	f.Add("-   op: add\n    path: /x\n", "/y", "v")
	f.Fuzz(func(t *testing.T, src, path, value string) {
		before, err := Documents([]byte(src))
		if err != nil || len(before) == 0 {
			return
		}
		item := map[string]any{"op": "add", "path": path, "value": value}
		out, err := AppendTopItem([]byte(src), 0, item, "driftfix")
		if err != nil {
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrNotFound) {
				t.Fatalf("untyped refusal: %v", err)
			}
			return
		}
		after, err := Documents(out)
		if err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		l, _ := after[0].([]any)
		old, _ := before[0].([]any)
		if string(out) == src {
			return // the list already held it
		}
		if len(l) != len(old)+1 || !drift.Equal(l[len(l)-1], toPlain(item)) || !drift.Equal(l[:len(old)], old) {
			t.Fatalf("list not appended to:\n%s\nthen:\n%s", src, out)
		}
	})
}
