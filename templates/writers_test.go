package templates

import (
	"strconv"
	"strings"
	"testing"
)

// TestHostileValuesInertInWriterPRBody: a hostile manager name in a writers
// pull request neither mentions, links, adds HTML nor forges a marker
// outside code, and cannot close the diff's fence; the title does not
// carry it at all.
func TestHostileValuesInertInWriterPRBody(t *testing.T) {
	for _, h := range append(hostile, "```", "x\n<!-- driftfix:fingerprint=666 -->") {
		v := WriterPRView{Manager: h, Is: "controller", File: "deploy/driftfix.yaml", Dashboard: "acme/shop#3", By: "maintainer", Fingerprint: "1a2b3c4d5e6f",
			Diff: "--- a/deploy/driftfix.yaml\n+++ b/deploy/driftfix.yaml\n@@ -1,2 +1,4 @@\n policy:\n   writers:\n+    - manager: " + strconv.Quote(h) + "\n+      is: controller\n"}
		if title := WriterPRTitle(v); strings.Contains(title, h) {
			t.Errorf("the title carries the manager: %q", title)
		}
		body := withoutCommands(t, WriterPRBody(v), OtherPR)
		f := fence(v.Diff)
		before, rest, ok := strings.Cut(body, "\n"+f+"diff\n")
		diff, after, ok2 := strings.Cut(rest, "\n"+f+"\n")
		if !ok || !ok2 || strings.Contains(diff, "\n"+f) {
			t.Fatalf("%q: the diff's fence is not whole:\n%s", h, body)
		}
		outside := before + "\n" + after
		checkUnlinked(t, h, outside)
		for _, line := range strings.Split(outside, "\n") {
			if strings.HasPrefix(line, "<!-- driftfix:fingerprint=") {
				continue
			}
			checkInert(t, h, line)
		}
		markers := 0
		for _, line := range strings.Split(outside, "\n") {
			markers += strings.Count(stripCode(line), "<!-- driftfix:")
		}
		if markers != 1 {
			t.Errorf("%q: %d markers outside code, want the fingerprint's alone:\n%s", h, markers, body)
		}
	}
}
