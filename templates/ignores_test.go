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
		body := withoutCommands(t, IgnorePRBody(v), OtherPR)
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

// TestIgnoreLineBroadOrSensitive: a broad rule is "broader than what it
// hides"; a rule scoped narrowly on a sensitive path "covers a sensitive
// path", once even when the inventory names the path too, in the digest
// and dashboard line and in the pull request that narrows it.
func TestIgnoreLineBroadOrSensitive(t *testing.T) {
	const path = "/spec/template/spec/containers/0/image of Deployment shop/web (image)"
	for _, tc := range []struct {
		name            string
		line            IgnoreLine
		summary, title  string
		body            string
		absent          []string
		sensitiveLabels int
	}{
		{name: "broad", line: IgnoreLine{Broad: "it names no resource"},
			summary: "is broader than what it hides: it names no resource", title: "narrow a broad ignore rule",
			body: "This rule is broader than what it hides", absent: []string{"sensitive"}},
		{name: "narrow, on a sensitive path", line: IgnoreLine{NarrowSensitive: path},
			summary: "covers a sensitive path: " + path, title: "narrow an ignore rule that covers a sensitive path",
			body: "This rule is scoped narrowly but covers a sensitive path", absent: []string{"broad"}, sensitiveLabels: 1},
		{name: "narrow, on a sensitive path the inventory names too", line: IgnoreLine{NarrowSensitive: path, Sensitive: "Deployment shop/web /spec/template/spec/containers/0/image (image)"},
			summary: "covers a sensitive path: Deployment shop/web /spec/template/spec/containers/0/image (image)", title: "narrow an ignore rule that covers a sensitive path",
			body: "This rule is scoped narrowly but covers a sensitive path", absent: []string{"broad"}, sensitiveLabels: 1},
		{name: "broad, and on a sensitive path", line: IgnoreLine{Broad: "it names no resource; it also covers a sensitive path: " + path},
			summary: "is broader than what it hides: it names no resource; it also covers", title: "narrow a broad ignore rule",
			body: "This rule is broader than what it hides", absent: []string{"scoped narrowly"}, sensitiveLabels: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.line
			l.Holder, l.Key = "Application argocd/shop", "spec.ignoreDifferences[0]"
			sum := l.Summary(func(x any) string { return "`" + x.(string) + "`" }, func(x any) string { return x.(string) })
			if !strings.Contains(sum, tc.summary) {
				t.Errorf("summary %q lacks %q", sum, tc.summary)
			}
			if n := strings.Count(sum, "covers a sensitive path: "); n != tc.sensitiveLabels {
				t.Errorf("summary %q says %d times that it covers a sensitive path, want %d", sum, n, tc.sensitiveLabels)
			}
			v := IgnorePRView{Instance: "main", File: "argocd/shop.yaml", Narrowed: []IgnoreLine{l}, NarrowWhy: "why", NarrowRisk: "risk", Diff: "-x\n", Verification: "ok", Fingerprint: "abc"}
			if title := IgnorePRTitle(v); !strings.Contains(title, tc.title) {
				t.Errorf("title %q lacks %q", title, tc.title)
			}
			body := IgnorePRBody(v)
			if !strings.Contains(body, tc.body) {
				t.Errorf("body lacks %q:\n%s", tc.body, body)
			}
			intro, _, _ := strings.Cut(body, "\n- ")
			for _, w := range tc.absent {
				if strings.Contains(sum, w) || strings.Contains(intro, w) || strings.Contains(IgnorePRTitle(v), w) {
					t.Errorf("%q said of it:\n%s\n%s\n%s", w, IgnorePRTitle(v), sum, body)
				}
			}
		})
	}
}
