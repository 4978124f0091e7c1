package publish

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/cycle"
)

// closedMarker ends every comment driftfix writes when it closes its own
// pull request, so a closed PR can be told apart from one a person closed
// even when the state database is lost.
const closedMarker = "<!-- driftfix:closed-by-driftfix -->"

// stoppedMarker, with closedMarker, ends the comment driftfix closes its
// pull request with when a person asked it to stop (/driftfix ignore, the
// dashboard's stop box): a lost state database reads the rejection again
// from GitHub instead of proposing the fix anew.
const stoppedMarker = "<!-- driftfix:stopped -->"

// snoozedMarker, with closedMarker, ends the comment driftfix closes its
// pull request with for a /driftfix snooze, saying until when.
func snoozedMarker(until time.Time) string {
	return "<!-- driftfix:snoozed-until=" + until.UTC().Format(time.RFC3339) + " -->"
}

var snoozedRE = regexp.MustCompile(`<!-- driftfix:snoozed-until=([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z) -->`)

// snoozedUntil reads the snooze a closing comment of driftfix's records.
func snoozedUntil(body string) (time.Time, bool) {
	m := snoozedRE.FindStringSubmatch(body)
	if m == nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, m[1])
	return t, err == nil
}

// labelRefusedMarker marks the one comment that says a label event was not
// followed (its applier cannot write to the repository).
func labelRefusedMarker(event int64) string {
	return "<!-- driftfix:label-refused=" + strconv.FormatInt(event, 10) + " -->"
}

// bodyFingerprint is the marker of the fix's content in a PR body.
var bodyFingerprint = regexp.MustCompile(`<!-- driftfix:fingerprint=([0-9a-f]+) -->`)

// markerRE is any of the markers the template ends a body with.
var markerRE = regexp.MustCompile(`<!-- driftfix:[a-z]+=[^<>]* -->`)

// heldMarker marks the one comment that says why a PR's branch was not updated.
func heldMarker(fingerprint string) string { return "<!-- driftfix:held=" + fingerprint + " -->" }

// bodyKey reads the fix key and application from the marker driftfix's
// template ends a PR body with. Only the last marker counts, and only when
// nothing but white space follows it, so a live value quoted earlier in the
// body cannot supply one.
func bodyKey(body string) (key, app string, ok bool) {
	m := lastMarker(cycle.KeyMarkerRE, body)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// lastMarker is the last match of re in body, provided only white space and
// further driftfix markers follow it.
func lastMarker(re *regexp.Regexp, body string) []string {
	all := re.FindAllStringSubmatchIndex(body, -1)
	if len(all) == 0 {
		return nil
	}
	last := all[len(all)-1]
	if rest := strings.TrimSpace(markerRE.ReplaceAllString(body[last[1]:], "")); rest != "" {
		return nil
	}
	out := make([]string, len(last)/2)
	for i := range out {
		out[i] = body[last[2*i]:last[2*i+1]]
	}
	return out
}
