package publish

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/plan"
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
	m := lastMarker(plan.KeyMarkerRE, body)
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

// maxBody is the most characters GitHub takes in a pull request's body;
// fitBody counts bytes, never fewer.
const maxBody = 65536

// fitNote replaces the part of a body fitBody leaves out.
const fitNote = "\n*The rest of this description is left out to keep it within GitHub's limit of 65,536 characters: the full change is in this pull request's branch.*\n"

// fitBody keeps a pull request body within GitHub's limit, whatever wrote
// it: a longer one is cut at the end of a line, a code block open there is
// closed, a line says the rest is left out, and the markers that end the
// body (its key, fingerprint) are kept whole after it, so bodyKey and
// lastMarker read it as before. The templates abbreviate their own diffs
// first; this is the last guard, so a body GitHub would refuse (422) never
// fails the cycle after the branch was pushed.
func fitBody(body string) string {
	if len(body) <= maxBody {
		return body
	}
	head, tail := body, ""
	for {
		loc := markerRE.FindAllStringIndex(head, -1)
		if len(loc) == 0 || strings.TrimSpace(head[loc[len(loc)-1][1]:]) != "" {
			break
		}
		head, tail = head[:loc[len(loc)-1][0]], head[loc[len(loc)-1][0]:]+tail
	}
	room := maxBody - len(tail) - len(fitNote) - len("\n\n")
	if room <= 0 {
		return body // only markers: nothing driftfix can cut
	}
	for {
		cut := strings.LastIndexByte(head[:room], '\n') + 1
		closing := ""
		if f := openFence(head[:cut]); f != "" {
			closing = f + "\n"
		}
		if cut+len(closing) <= room {
			return head[:cut] + closing + fitNote + "\n" + tail
		}
		room = cut - 1 // the fence did not fit after this line: cut a line earlier
	}
}

// openFence is the fence of the fenced code block still open at the end of
// text, "" when none is.
func openFence(text string) string {
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		fence, _ = fenceStep(fence, line)
	}
	return fence
}
