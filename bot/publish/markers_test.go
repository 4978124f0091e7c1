package publish

import (
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/plan"
)

// TestBodyKey: the key is read from the marker the template ends a body
// with; a marker quoted earlier (a live value) or followed by text is not.
func TestBodyKey(t *testing.T) {
	real := plan.KeyMarker("abc123", "main/argocd/shop")
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

// TestFitBody: a body over GitHub's limit is cut at the end of a line to fit
// with room to spare for nothing: a code block open at the cut is closed, a
// line says the rest is left out, and the markers that end the body stay
// whole, so the key and fingerprint read as before; a body within the
// limit is left as it is.
func TestFitBody(t *testing.T) {
	end := "\n<!-- driftfix:fingerprint=3f2a -->" + plan.KeyMarker("abc123", "main/argocd/shop")
	long := func(n int, line string) string { return strings.Repeat(line+"\n", n) }
	for _, tc := range []struct {
		name, body  string
		cut, fenced bool // cut: shortened; fenced: a code block was open at the cut
	}{
		{"fits", "## Fix\n" + long(100, "text") + end, false, false},
		{"exactly at the limit", strings.Repeat("x", maxBody-len(end)) + end, false, false},
		{"long text", "## Fix\n" + long(4000, strings.Repeat("t", 30)) + end, true, false},
		{"long diff block", "## Fix\n````diff\n" + long(4000, "+"+strings.Repeat("d", 30)) + "````\n\n### Risk\nnone\n" + end, true, true},
		{"tilde block after a closed one", "```\nx\n```\n~~~yaml\n" + long(4000, strings.Repeat("y", 30)) + "~~~\n" + end, true, true},
		{"one line longer than the limit", "## Fix\n" + strings.Repeat("z", 2*maxBody) + "\n" + end, true, false},
		{"multibyte characters", "## Fix\n" + long(3000, strings.Repeat("é", 20)) + end, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fitBody(tc.body)
			if len(got) > maxBody {
				t.Fatalf("%d bytes, over GitHub's %d", len(got), maxBody)
			}
			if !tc.cut {
				if got != tc.body {
					t.Error("a body within the limit must be left as it is")
				}
				return
			}
			if !strings.HasSuffix(got, "the full change is in this pull request's branch.*\n\n"+strings.TrimPrefix(end, "\n")) {
				t.Errorf("the cut body must say so and end with the markers whole:\n%s", got[max(0, len(got)-300):])
			}
			if key, app, ok := bodyKey(got); !ok || key != "abc123" || app != "main/argocd/shop" {
				t.Errorf("bodyKey after the cut = %q %q %v", key, app, ok)
			}
			if m := lastMarker(bodyFingerprint, got); m == nil || m[1] != "3f2a" {
				t.Errorf("the fingerprint after the cut: %q", m)
			}
			head, _, _ := strings.Cut(got, fitNote)
			if !strings.HasPrefix(tc.body, strings.TrimSuffix(head, "````\n")) && !strings.HasPrefix(tc.body, strings.TrimSuffix(head, "~~~\n")) {
				t.Error("what is kept must be the body's own first lines")
			}
			if f := openFence(head); f != "" {
				t.Errorf("a code block (%s) is left open before the note", f)
			}
			if closed := openFence(strings.TrimRight(head, "`~\n")+"\n") != ""; closed != tc.fenced {
				t.Errorf("a fence was closed: %v, want %v", closed, tc.fenced)
			}
		})
	}
}
