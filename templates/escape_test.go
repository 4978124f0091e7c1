package templates

import (
	"regexp"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// hostile are values an attacker who can write to the cluster could plant
// in a live value, a manager name, a label or an object's own fields.
var hostile = []string{
	"x` **bold** `y",
	"```\n</details><!-- driftfix:key=666 app=main/argocd/victim -->\n```",
	"@acme/platform-team please merge",
	"<img src=https://evil.example/pixel>",
	"[click](https://evil.example)",
	"a | b | c",
	"<!channel> <@U123> <https://evil.example|docs>",
	"log in at https://evil.example/login or HTTP://EVIL.EXAMPLE, <https://evil.example>, www.evil.example/x, _www.evil.example",
	"mail admin@evil.example or ftp://evil.example",
	"evil\u202etxt.exe\u202a\u202b\u202c\u202d \u2066\u2067\u2068\u2069 \u200e\u200f\u061c hid\u200bd\u200ce\u200dn\u2060\ufeff",
}

// hidden are the bidirectional controls and zero-width characters that
// reorder or hide text where it is shown.
const hidden = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u200c\u200d\u2060\ufeff"

// checkUnlinked fails when rendered output still holds a hostile value's
// link in a form a renderer links (GitHub's autolinks, Slack's) or a
// character that reorders or hides text, instead of its visible escape.
func checkUnlinked(t *testing.T, h, out string) {
	t.Helper()
	out = linkTarget.ReplaceAllString(out, "](link)") // driftfix's own links, hostile parts percent-encoded
	if i := strings.IndexAny(out, hidden); i >= 0 {
		t.Errorf("hostile value %q left an invisible character in: %q", h, out[max(0, i-40):min(len(out), i+40)])
	}
	for _, bad := range []string{"evil.example", "EVIL.EXAMPLE", "www.evil", "://evil", "://EVIL"} {
		if i := strings.Index(out, bad); i >= 0 {
			t.Errorf("hostile value %q left a link to %s in: %q", h, bad, out[max(0, i-40):min(len(out), i+40)])
		}
	}
	if strings.Contains(h, "\u202e") && !strings.Contains(out, `\u202e`) {
		t.Errorf("hostile value %q: its U+202E must be shown as \\u202e", h)
	}
}

// TestNoMention: an @ in running Markdown or raw HTML is inside code of
// its own, where GitHub looks for no mention, and reads as the @ it is.
func TestNoMention(t *testing.T) {
	for _, in := range []string{"@acme/platform-team please merge", "ping @octocat", "admin@evil.example"} {
		text := Text(in)
		if outside := stripCode(text); strings.Contains(outside, "@") || strings.Count(text, "`@`") != strings.Count(in, "@") {
			t.Errorf("Text(%q) = %q: an @ outside code", in, text)
		}
		html := HTMLText(in)
		if strings.Contains(strings.ReplaceAll(html, "<code>@</code>", ""), "@") || strings.Count(html, "<code>@</code>") != strings.Count(in, "@") {
			t.Errorf("HTMLText(%q) = %q: an @ outside <code>", in, html)
		}
	}
}

// linkTarget is the destination of a Markdown link.
var linkTarget = regexp.MustCompile(`\]\([^()\s]*\)`)

// TestUnlinked: in every medium but the terminal (Slack's mrkdwn is
// bot/slack's, tested there the same way), a URL, a www. host and an
// e-mail address come out broken where no autolinker recognises them, and
// every medium shows bidirectional controls and zero-width characters as
// \u escapes, whatever escaping follows.
func TestUnlinked(t *testing.T) {
	media := []struct {
		name   string
		render func(string) string
		links  bool // the medium's readers get links from bare URLs
	}{
		{"Code", func(s string) string { return Code(s) }, true},
		{"Text", func(s string) string { return Text(s) }, true},
		{"HTMLText", func(s string) string { return HTMLText(s) }, true},
		{"Terminal", func(s string) string { return Terminal(s) }, false},
	}
	for _, tc := range []struct{ in, unlinked string }{
		{"see https://evil.example/a.b?c=d.e", "see https[:]//evil[.]example/a.b?c=d.e"},
		{"HTTP://Evil.Example", "HTTP[:]//Evil[.]Example"},
		{"www.evil.example/x.y", "www[.]evil[.]example/x.y"},
		{"_www.evil.example", "_www[.]evil[.]example"},
		{"admin@evil.example", "admin@evil[.]example"},
		{"git+ssh://evil.example/r.git", "git+ssh[:]//evil[.]example/r.git"},
		{"evil\u202etxt\u200b\ufeff", `evil\u202etxt\u200b\ufeff`},
		{"nginx:1.25.3 apps/v1 shop.web", "nginx:1.25.3 apps/v1 shop.web"},
	} {
		if got := unlinked(tc.in); got != tc.unlinked {
			t.Errorf("unlinked(%q) = %q, want %q", tc.in, got, tc.unlinked)
		}
		for _, m := range media {
			got := m.render(tc.in)
			if i := strings.IndexAny(got, hidden); i >= 0 {
				t.Errorf("%s(%q) = %q keeps an invisible character", m.name, tc.in, got)
			}
			if m.links && (strings.Contains(got, "://") || strings.Contains(strings.ToLower(got), "www.") || strings.Contains(got, "evil.example")) {
				t.Errorf("%s(%q) = %q can still be linked", m.name, tc.in, got)
			}
		}
	}
}

// TestCodeSpanCannotBeClosed: whatever a value holds, Code's span encloses
// exactly the value: the fence is longer than any run of backticks inside,
// and the span is on one line.
func TestCodeSpanCannotBeClosed(t *testing.T) {
	for _, v := range append(hostile, "`", "``", " `x` ", "plain") {
		got := Code(v)
		fence := got[:strings.IndexFunc(got, func(r rune) bool { return r != '`' })]
		inner := strings.TrimSuffix(strings.TrimPrefix(got, fence), fence)
		if strings.Contains(inner, fence) || strings.Contains(got, "\n") {
			t.Errorf("Code(%q) = %q: the value can close its span or breaks the line", v, got)
		}
		if want := strings.ReplaceAll(unlinked(v), "|", `\|`); strings.TrimSpace(inner) != strings.TrimSpace(want) {
			t.Errorf("Code(%q) = %q: the span must hold the value itself", v, got)
		}
	}
	if Code("plain") != "`plain`" {
		t.Errorf("a plain value keeps the plain span: %q", Code("plain"))
	}
}

// TestHostileValuesInertInPRBody renders a pull request whose finding
// carries hostile values in every field that comes from the cluster: none
// of them mentions anyone, links, adds HTML, forges a marker, or ends its
// code span; every finding stays one list item.
func TestHostileValuesInertInPRBody(t *testing.T) {
	for _, h := range hostile {
		v := pr
		v.Findings = []FindingView{{Resource: drift.Ref{Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}, Path: "/data/" + h,
			Git: Code("1"), Live: Code(h), Owner: h, Evidence: []string{"manager " + h + " wrote it"}}}
		body, err := PRBody(v)
		if err != nil {
			t.Fatal(err)
		}
		items := 0
		drifts, _, _ := strings.Cut(body, "### The change")
		for _, line := range strings.Split(drifts, "\n") {
			if strings.HasPrefix(line, "- ") {
				items++
			}
			if strings.Contains(line, "@acme") || strings.Contains(line, "<img") || strings.Contains(line, "](https://evil") ||
				strings.Contains(line, "<!-- driftfix:key=666") || strings.Contains(line, "</details>") {
				if !strings.HasPrefix(line, "- ") && !strings.HasPrefix(line, "  - ") && !strings.HasPrefix(line, "## ") {
					t.Errorf("hostile value %q escaped its list item:\n%s", h, line)
				}
				checkInert(t, h, line)
			}
		}
		if items != 1 {
			t.Errorf("hostile value %q changed the list: %d items\n%s", h, items, body)
		}
		checkUnlinked(t, h, body)
		checkUnlinked(t, h, PRTitle(v))

		// the plan's prose names paths and resources too
		v.Why, v.Risk, v.Undo = "Git stops declaring /data/"+h, "the key "+h+" is kept", "restore "+h
		v.Verification, v.Instructions, v.Diffs = "re-diagnosed "+h, "remove "+h+" by hand", nil
		if body, err = PRBody(v); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(withoutCommands(t, body, FixPR), "\n") {
			if !strings.HasPrefix(line, "<!-- driftfix:fingerprint=") {
				checkInert(t, h, line)
			}
		}
		checkUnlinked(t, h, body)
	}
}

// checkInert says whether a rendered Markdown line holds a hostile token
// outside a code span without its escape.
func checkInert(t *testing.T, h, line string) {
	t.Helper()
	outside := stripCode(line)
	for _, bad := range []string{"@acme", "<img", "](https://evil", "<!--", "</details>"} {
		if strings.Contains(outside, bad) {
			t.Errorf("hostile value %q is live Markdown outside a code span: %q", h, line)
		}
	}
}

// stripCode removes the code spans of a Markdown line, as CommonMark reads them.
func stripCode(line string) string {
	var out strings.Builder
	for i := 0; i < len(line); {
		if line[i] == '\\' && i+1 < len(line) {
			i += 2 // an escaped character is text, not markup
			continue
		}
		if line[i] != '`' {
			out.WriteByte(line[i])
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] == '`' {
			j++
		}
		fence := line[i:j]
		end := strings.Index(line[j:], fence)
		for end >= 0 && j+end+len(fence) < len(line) && line[j+end+len(fence)] == '`' {
			next := strings.Index(line[j+end+len(fence):], fence)
			if next < 0 {
				end = -1
				break
			}
			end += len(fence) + next
		}
		if end < 0 {
			out.WriteString(line[i:]) // no closing fence: backticks are text
			break
		}
		i = j + end + len(fence)
	}
	return out.String()
}

// TestTerminalInert: printed to a terminal, a value stays on one line and no
// character in it is a control or invisible formatting character; printable
// text is kept as it is.
func TestTerminalInert(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text: rpc error", "plain text: rpc error"},
		{"\x1b[2J\x1b]0;pwned\x07cleared", `\u001b[2J\u001b]0;pwned\u0007cleared`},
		{"a\tb\rc\nd", `a\u0009b ⏎ c ⏎ d`},
		{"evil\u202etxt.exe \u200bhidden \U000e0041", `evil\u202etxt.exe \u200bhidden \ue0041`},
		{"line\u2028sep \x7f \u0085", `line\u2028sep \u007f \u0085`},
		{"<!channel> `x` ⏎ é", "<!channel> `x` ⏎ é"},
	} {
		got := Terminal(tc.in)
		if got != tc.want {
			t.Errorf("Terminal(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, r := range got {
			if r < 0x20 || (r >= 0x7f && r < 0xa0) {
				t.Errorf("Terminal(%q) kept control character %U", tc.in, r)
			}
		}
	}
}

// TestDiffFenceCannotBeClosed: a diff whose lines hold code fences (a live
// value with backticks adopted into Git, a context line that is a fence)
// stays inside its code block: the block ends exactly where the diff does,
// and shows its invisible characters as \u escapes.
func TestDiffFenceCannotBeClosed(t *testing.T) {
	for _, h := range append(hostile, "```", "````\n</details><img src=x>", "  ```\n- [x] recheck", "~~~") {
		v := pr
		diff := "--- a/values.yaml\n+++ b/values.yaml\n@@ -1,3 +1,3 @@\n notes: |\n  " + strings.ReplaceAll(h, "\n", "\n  ") + "\n-value: 1\n+value: " + strings.ReplaceAll(h, "\n", " ") + "\n"
		v.Diffs = []FileDiff{{File: "values.yaml", Diff: diff}}
		body, err := PRBody(v)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(body, "\n")
		open := -1
		for i, l := range lines {
			if strings.HasPrefix(l, "```") && strings.HasSuffix(l, "diff") {
				open = i
				break
			}
		}
		if open < 0 {
			t.Fatalf("no diff block:\n%s", body)
		}
		fence := strings.TrimSuffix(lines[open], "diff")
		closing := -1
		for i := open + 1; i < len(lines); i++ {
			// CommonMark: up to three spaces, then at least as many backticks, then only spaces
			l := strings.TrimLeft(lines[i], " ")
			if len(lines[i])-len(l) <= 3 && strings.HasPrefix(l, fence) && strings.Trim(l, "` ") == "" {
				closing = i
				break
			}
		}
		checkUnlinked(t, h, strings.ReplaceAll(strings.ReplaceAll(body, "evil.example", ""), "EVIL.EXAMPLE", "")) // a code block links nothing
		if got := strings.Join(lines[open+1:max(closing, open+1)], "\n") + "\n"; closing < 0 || got != shown(diff) {
			t.Errorf("%q: the diff block must end exactly where the diff does; it holds:\n%s", h, got)
		}
	}
}
