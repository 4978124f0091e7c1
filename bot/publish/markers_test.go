package publish

import (
	"strings"
	"testing"
	"time"

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

// TestSnoozedUntil: the snooze is read from driftfix's marker only in its
// exact form; anything else is no snooze.
func TestSnoozedUntil(t *testing.T) {
	until := time.Date(2026, 12, 16, 12, 0, 0, 0, time.UTC)
	if got, ok := snoozedUntil("Snoozed.\n\n" + snoozedMarker(until.In(time.FixedZone("x", 3600))) + "\n" + closedMarker); !ok || !got.Equal(until) {
		t.Errorf("snoozedUntil = %v, %v", got, ok)
	}
	for _, body := range []string{"", closedMarker, "<!-- driftfix:snoozed-until=2026-12-16 -->", "<!-- driftfix:snoozed-until=2026-13-45T99:00:00Z -->"} {
		if got, ok := snoozedUntil(body); ok {
			t.Errorf("snoozedUntil(%q) = %v", body, got)
		}
	}
}
