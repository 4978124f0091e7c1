package templates

import (
	"strings"
	"testing"
)

// TestHostileValuesInertInIgnorePRBody: the holder, key, file and reasons
// of the rules an ignore-rule pull request removes or narrows come from
// the cluster and its repositories; in the body they stay inside code spans
// or escaped text, every rule stays one list item, the diff's fence holds,
// and no marker is planted.
func TestHostileValuesInertInIgnorePRBody(t *testing.T) {
	for _, h := range hostile {
		l := IgnoreLine{Holder: "Application argocd/" + h, Key: "spec.ignoreDifferences[0]", Where: h + ":3", Stale: true, Broad: h}
		v := IgnorePRView{Instance: "main", Repo: "https://git.example.com/x.git", File: "argocd/" + h + ".yaml", Removed: []IgnoreLine{l, l}, Narrowed: []IgnoreLine{l},
			NarrowWhy: h, NarrowRisk: h, StaleAfterDays: 14, Diff: "-  - /data/" + h + "\n", Verification: "re-diagnosed " + h, Fingerprint: "abc"}
		body := IgnorePRBody(v)
		fence, items, markers := "", 0, 0
		for _, line := range strings.Split(body, "\n") {
			switch {
			case fence == "" && strings.HasPrefix(line, "```"):
				fence = strings.TrimRight(line, "abcdefghijklmnopqrstuvwxyz")
				continue
			case fence != "":
				if line == fence {
					fence = ""
				}
				continue
			}
			if strings.HasPrefix(line, "- ") {
				items++
			}
			markers += strings.Count(stripCode(line), "<!-- driftfix:")
			if !strings.HasPrefix(line, "<!-- driftfix:fingerprint=") {
				checkInert(t, h, line)
			}
		}
		if fence != "" {
			t.Errorf("hostile value %q left a fenced block open:\n%s", h, body)
		}
		if items != 3 {
			t.Errorf("hostile value %q changed the list of rules: %d items\n%s", h, items, body)
		}
		if markers != 1 {
			t.Errorf("hostile value %q planted a marker outside a code block:\n%s", h, body)
		}
		if title := IgnorePRTitle(v); strings.Contains(title, "\n") {
			t.Errorf("hostile value %q broke the title onto two lines: %q", h, title)
		}
	}
}
