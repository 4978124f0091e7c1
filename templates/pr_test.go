package templates

import (
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// lines makes a diff of n lines of width characters each after the line's
// mark, with a unified diff's headers.
func lines(file string, n, width int, fill string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n@@ -1,%d +1,%d @@\n", file, file, n, n)
	for i := 0; i < n; i++ {
		mark := " "
		if i%3 == 0 {
			mark = "-"
		}
		b.WriteString(mark + strings.Repeat(fill, width) + "\n")
	}
	return b.String()
}

// TestPRBodyWithinLimit: however long the diffs or the findings, the body
// stays within MaxPRBody, leaving room for the markers the cycle appends:
// a diff is cut after its lines that fit, inside a code block that still
// closes, with a line saying how many lines are left out and that the full
// change is in the branch; later diffs are not shown before an earlier
// one's end; findings that do not fit are counted; everything after the
// diffs and the fingerprint marker at the end stay whole.
func TestPRBodyWithinLimit(t *testing.T) {
	many := make([]FindingView, 1000)
	for i := range many {
		many[i] = FindingView{Resource: drift.Ref{Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}, Path: fmt.Sprintf("/data/key-%04d", i),
			Git: Code("a"), Live: Code("b"), Evidence: []string{strings.Repeat("evidence ", 10)}}
	}
	for _, tc := range []struct {
		name         string
		diffs        []FileDiff
		findings     []FindingView
		cut          []bool // per diff: some lines left out
		moreFindings bool
	}{
		{"fits", []FileDiff{{File: "a.yaml", Diff: lines("a.yaml", 50, 40, "x")}}, nil, []bool{false}, false},
		{"one long diff", []FileDiff{{File: "a.yaml", Diff: lines("a.yaml", 5000, 40, "x")}}, nil, []bool{true}, false},
		{"one huge line", []FileDiff{{File: "a.yaml", Diff: "--- a/a.yaml\n+++ b/a.yaml\n@@ -1 +1 @@\n-" + strings.Repeat("y", 100000) + "\n"}}, nil, []bool{true}, false},
		{"invisible characters grow when shown", []FileDiff{{File: "a.yaml", Diff: lines("a.yaml", 3000, 10, "\u202e")}}, nil, []bool{true}, false},
		{"backticks lengthen the fence", []FileDiff{{File: "a.yaml", Diff: lines("a.yaml", 3000, 30, "`````")}}, nil, []bool{true}, false},
		{"three diffs, the second long", []FileDiff{
			{File: "a.yaml", Diff: lines("a.yaml", 10, 20, "a")},
			{File: "b.yaml", Diff: lines("b.yaml", 4000, 40, "b")},
			{File: "c.yaml", Diff: lines("c.yaml", 10, 20, "c")},
		}, nil, []bool{false, true, true}, false},
		{"many findings", []FileDiff{{File: "a.yaml", Diff: lines("a.yaml", 2000, 40, "x")}}, many, []bool{true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := pr
			v.Diffs = tc.diffs
			if tc.findings != nil {
				v.Findings = tc.findings
			}
			body, err := PRBody(v)
			if err != nil {
				t.Fatal(err)
			}
			if len(body) > MaxPRBody {
				t.Fatalf("body of %d bytes, over %d", len(body), MaxPRBody)
			}
			if !strings.HasSuffix(strings.TrimSpace(body), "### How to undo\n"+v.Undo+"\n\n"+CommandsSection(FixPR)+"\n---\n<sub>Opened by driftfix. Close this pull request without merging and driftfix will not propose this fix again; comment `/driftfix ignore` to stop it for this application.</sub>\n<!-- driftfix:fingerprint=3f2a9c1d -->") {
				t.Errorf("the end of the body was cut:\n%s", body[max(0, len(body)-400):])
			}
			for i, d := range tc.diffs {
				notice := fmt.Sprintf("of the diff of `%s` left out to keep this description within GitHub's size limit: the full change is in this pull request's branch.", d.File)
				if strings.Contains(body, notice) != tc.cut[i] {
					t.Errorf("diff %s: cut %v, but the notice is there: %v", d.File, tc.cut[i], !tc.cut[i])
				}
				shownLines := blockOf(t, body, d.File)
				if !strings.HasPrefix(shown(d.Diff), shownLines) || (shownLines == shown(d.Diff)) == tc.cut[i] {
					t.Errorf("diff %s must show its first lines, all of them only when it is not cut: %d of %d bytes shown", d.File, len(shownLines), len(shown(d.Diff)))
				}
			}
			if more := strings.Contains(body, "more differing fields, left out to keep this description within GitHub's size limit"); more != tc.moreFindings {
				t.Errorf("findings counted instead of listed: %v, want %v", more, tc.moreFindings)
			}
			if again, _ := PRBody(v); again != body {
				t.Error("the body is not deterministic")
			}
		})
	}
}

// blockOf is the content of the diff code block of a file, "" when the body
// shows none; it fails when the block does not close.
func blockOf(t *testing.T, body, file string) string {
	t.Helper()
	ls := strings.Split(body, "\n")
	for i, l := range ls {
		f := strings.TrimSuffix(l, "diff")
		if !strings.HasPrefix(l, "```") || !strings.HasSuffix(l, "diff") || i+1 >= len(ls) || ls[i+1] != "--- a/"+file {
			continue
		}
		for j := i + 1; j < len(ls); j++ {
			if strings.HasPrefix(ls[j], f) && strings.Trim(ls[j], "`") == "" {
				return strings.Join(ls[i+1:j], "\n") + "\n"
			}
		}
		t.Fatalf("the diff block of %s does not close", file)
	}
	return ""
}

// TestPRBodyVerifiedOnlyWithVerification: the body says "Verified" only with
// what the plan was verified by; a view without one says it is not verified
// (the cycle opens no pull request for such a plan; the template holds the
// line too).
func TestPRBodyVerifiedOnlyWithVerification(t *testing.T) {
	for _, tc := range []struct {
		name         string
		verification string
		want, not    string
	}{
		{"verified", "re-diagnosed the application", "### Verified\nre-diagnosed the application\n", "### Not verified"},
		{"no verification", "", "### Not verified\n", "### Verified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := pr
			v.Verification = tc.verification
			body, err := PRBody(v)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(body, tc.want) || strings.Contains(body, tc.not) {
				t.Errorf("body lacks %q or holds %q:\n%s", tc.want, tc.not, body)
			}
			if !strings.Contains(body, "\n\n### Risk\n") {
				t.Errorf("the section after it lost its layout:\n%s", body)
			}
		})
	}
}
