package remediations

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestLocateDocSkipsOnlyWhatCannotDeclare: files are parsed only where
// they can hold the document, and a name spelt with a YAML escape is
// still found, so a second document cannot hide from the one-document
// check.
func TestLocateDocSkipsOnlyWhatCannotDeclare(t *testing.T) {
	ref := drift.Ref{Group: "apps", Kind: "Deployment", Name: "web"}
	for _, tc := range []struct {
		name string
		repo Repo
		file string // "" : an error (none, or more than one)
	}{
		{"plain", Repo{"a.yaml": []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"), "b.yaml": []byte("kind: ConfigMap\n")}, "a.yaml"},
		{"escaped name", Repo{"a.yaml": []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: \"w\\x65b\"}\n")}, "a.yaml"},
		{"escaped twin", Repo{"a.yaml": []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"),
			"b.yaml": []byte("apiVersion: apps/v1\nkind: \"D\\u0065ployment\"\nmetadata: {name: \"w\\x65b\"}\n")}, ""},
		{"none", Repo{"a.yaml": []byte("apiVersion: v1\nkind: Service\nmetadata: {name: web}\n")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc, err := locateDoc(tc.repo, "", ref)
			if tc.file == "" {
				if err == nil {
					t.Fatalf("found %s, want an error", loc.file)
				}
				return
			}
			if err != nil || loc.file != tc.file {
				t.Fatalf("found %q (%v), want %s", loc.file, err, tc.file)
			}
		})
	}
}
