package remediations

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// TestVendoredBy checks the rule that tells a vendored copy: a vendor-like
// directory, or a Makefile or script of the repository that names the path.
func TestVendoredBy(t *testing.T) {
	repo := Repo{
		"Makefile":               []byte("update:\n\tcurl -sSL https://example.com/x.yaml -o deploy/a/upstream.yaml\n"),
		"hack/sync.sh":           []byte("#!/bin/sh\nkubectl kustomize remote > charts/b/crds.yaml\n"),
		"deploy/c/Makefile":      []byte("fetch:\n\tcurl -o release.yaml https://example.com/r.yaml\n"),
		"deploy/a/upstream.yaml": nil, "charts/b/crds.yaml": nil, "deploy/c/release.yaml": nil,
	}
	cases := []struct {
		file, want string // want: a word of the reason, "" for not vendored
	}{
		{"vendor/cert-manager/install.yaml", "under vendor/"},
		{"apps/upstream/metrics.yaml", "under apps/upstream/"},
		{"third_party/x/y.yaml", "under third_party/"},
		{"deploy/a/upstream.yaml", "Makefile writes it"},
		{"charts/b/crds.yaml", "hack/sync.sh writes it"},
		{"deploy/c/release.yaml", "deploy/c/Makefile writes it"},
		{"deploy/a/upstream.yaml.orig", ""},
		{"other/deploy/a/upstream.yaml", ""},
		{"deploy/a/local.yaml", ""},
		{"vendors/x.yaml", ""},
	}
	for _, tc := range cases {
		got := vendoredBy(repo, tc.file)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("vendoredBy(%s) = %q, want %q", tc.file, got, tc.want)
		}
	}
}

// FuzzPatchPath maps paths into arbitrary patch documents: a path it
// returns can be written with the YAML editor, and reads back the value.
func FuzzPatchPath(f *testing.F) {
	f.Add([]byte("spec:\n  template:\n    spec:\n      containers:\n        - name: web\n          image: x\n"), "/spec/template/spec/containers/0/resources/limits/cpu")
	f.Add([]byte("metadata:\n  name: web\n"), "/spec/replicas")
	f.Fuzz(func(t *testing.T, patch []byte, pointer string) {
		if len(patch) > 2048 {
			return
		}
		gp, err := drift.ParsePointer(pointer)
		if err != nil || len(gp) == 0 {
			return
		}
		docs, err := yamledit.Documents(patch)
		if err != nil || len(docs) != 1 {
			return
		}
		target := map[string]any{"spec": map[string]any{"replicas": 1, "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web"}}}}}}
		p, ok := patchPath(target, docs[0], gp)
		if !ok {
			return
		}
		out, err := yamledit.SetValue(patch, 0, p, "1")
		if err != nil {
			return // the editor refuses what it cannot write in place
		}
		after, err := yamledit.Documents(out)
		if err != nil {
			t.Fatalf("the edited patch does not parse: %v\n%s", err, out)
		}
		if v, ok := p.Get(after[0]); !ok || v != "1" {
			t.Fatalf("%s reads back %v after the edit:\n%s", p, v, out)
		}
	})
}
