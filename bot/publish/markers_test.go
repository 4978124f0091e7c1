package publish

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/cycle"
)

// TestBodyKey: the key is read from the marker the template ends a body
// with; a marker quoted earlier (a live value) or followed by text is not.
func TestBodyKey(t *testing.T) {
	real := cycle.KeyMarker("abc123", "main/argocd/shop")
	quoted := "<!-- driftfix:key=666 app=main/argocd/victim -->"
	for _, tc := range []struct {
		name, body string
		key, app   string
	}{
		{"template", "evidence\n<!-- driftfix:fingerprint=3f2a -->\n" + real, "abc123", "main/argocd/shop"},
		{"crlf and trailing space", "evidence\r\n" + strings.ReplaceAll(real, "\n", "\r\n") + "  ", "abc123", "main/argocd/shop"},
		{"live value quoted before", "| live | `" + quoted + "` |\n" + real, "abc123", "main/argocd/shop"},
		{"marker followed by text", real + "\nappended by a person " + quoted + " and more", "", ""},
		{"only a quoted marker mid-body", "value " + quoted + " in a table\n", "", ""},
		{"none", "no marker", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, app, ok := bodyKey(tc.body)
			if key != tc.key || app != tc.app || ok != (tc.key != "") {
				t.Errorf("bodyKey = %q %q %v, want %q %q", key, app, ok, tc.key, tc.app)
			}
		})
	}
}
