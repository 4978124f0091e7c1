package templates

import (
	"fmt"
	"strings"
	"unicode"
)

// Values from a cluster (live values, label and annotation values, manager
// names, object names, paths through arbitrary keys) are written by whoever
// can write to the cluster, not by driftfix. Each is escaped for the medium
// it lands in, so that it reads as the text it is and can neither format,
// link, mention, hide markers nor close the code span around it.

// oneLine puts a value on one line: a line break would end a list item or a
// table row around it.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ⏎ ").Replace(s)
}

// Code renders a value as a Markdown code span that no character in it can
// close: the fence is one backtick longer than the longest run of backticks
// inside, padded when the value begins or ends with a backtick (CommonMark's
// rule). A pipe is escaped so that the span does not split a table row.
func Code(v any) string {
	s := strings.ReplaceAll(oneLine(fmt.Sprint(v)), "|", `\|`)
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || (longest > 0 && (strings.HasPrefix(s, " ") || strings.HasSuffix(s, " "))) {
		s = " " + s + " "
	}
	return fence + s + fence
}

// markdownText escapes a value for running Markdown text (evidence, reasons):
// every ASCII punctuation mark that could format, link or start HTML is
// backslash-escaped, and @ is written as an entity so that no one is
// mentioned.
var markdownText = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`,
	"#", `\#`, "|", `\|`, "~", `\~`, "!", `\!`, "@", "&#64;", "&", "&amp;",
)

// Text renders a value as plain Markdown text on one line.
func Text(v any) string { return markdownText.Replace(oneLine(fmt.Sprint(v))) }

// slackText escapes a value for Slack's mrkdwn: &, < and > as Slack asks
// (so no <!channel>, <@user> or <url|link> can be formed), and a backtick
// as a look-alike, as mrkdwn has no escape for it and it would end a code
// span. Bold and italic marks are left: at worst they restyle the value.
var slackText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "ˋ")

func escape(s string) string { return slackText.Replace(oneLine(s)) }

// slackCode renders a value as an inline code span in mrkdwn.
func slackCode(v any) string { return "`" + escape(fmt.Sprint(v)) + "`" }

// Terminal renders a value for a terminal, on one line: a control or
// invisible formatting character (escape sequences, tabs, carriage returns,
// bidirectional overrides, zero-width marks) is written as its \u escape, so
// it can neither move the cursor, recolour, retitle the window, split a
// table column, nor reorder or hide what is printed around it.
func Terminal(v any) string {
	var b strings.Builder
	for _, r := range oneLine(fmt.Sprint(v)) {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// htmlText escapes a value for text inside raw HTML (a <summary> line, which
// Markdown leaves as HTML: backslash escapes do not work there).
var htmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "@", "&#64;", "`", "&#96;", "[", "&#91;", "]", "&#93;")

// HTMLText renders a value as text on one line inside raw HTML.
func HTMLText(v any) string { return htmlText.Replace(oneLine(fmt.Sprint(v))) }
