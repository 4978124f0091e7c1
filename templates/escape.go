package templates

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Values from a cluster (live values, label and annotation values, manager
// names, object names, paths through arbitrary keys) are written by whoever
// can write to the cluster, not by driftfix; a chart's files by whoever
// wrote the chart. Each is escaped for the medium it lands in, so that it
// reads as the text it is and can neither format, link, mention, hide
// markers nor close the code span around it. Every medium starts from
// inert (terminals) or unlinked (Markdown, HTML and Slack).

// oneLine puts a value on one line: a line break would end a list item or a
// table row around it.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ⏎ ").Replace(s)
}

// inert puts a value on one line and shows every control or invisible
// formatting character as its \u escape: escape sequences, tabs,
// bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
// U+061C), zero-width characters (U+200B–U+200D, U+2060, U+FEFF), line and
// paragraph separators. So nothing can move a terminal's cursor, reorder
// the text around it (Trojan Source) or hide a character from a reader.
func inert(s string) string { return visible(oneLine(s), "") }

// visible writes each control or invisible formatting character of s as
// its \u escape, except those in keep.
func visible(s, keep string) string {
	var b strings.Builder
	for _, r := range s {
		if (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029') && !strings.ContainsRune(keep, r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// shown is a block of text (a diff, a rule) for a code block: its lines
// kept, every other control or invisible formatting character shown as in
// inert. GitHub links nothing inside a code block.
func shown(s string) string { return visible(s, "\n\r\t") }

// linkRE finds what a Markdown renderer or Slack turns into a link by
// itself: a URL with a scheme, a host starting with www., an e-mail address.
var linkRE = regexp.MustCompile(`(?i)[a-z][a-z0-9+.-]*://[^\s/?#]*|www\.[^\s/?#]*|[a-z0-9._%+-]+@[a-z0-9_-]+(?:\.[a-z0-9_-]+)+`)

// Unlinked is unlinked for the renderers outside this package (bot/slack's
// Block Kit): a value with every link broken, on one line, every invisible
// character shown.
func Unlinked(s string) string { return unlinked(s) }

// unlinked is inert with every URL, www. host and e-mail address broken
// where it stays readable, the way security advisories write them
// (https[:]//evil[.]example, www[.]evil[.]example, a@evil[.]example): no
// autolinker (GitHub's Markdown, Slack) recognises the result, inside a
// code span or out.
func unlinked(s string) string {
	return linkRE.ReplaceAllStringFunc(inert(s), func(m string) string {
		scheme, rest, ok := strings.Cut(m, "://")
		if !ok {
			scheme, rest = "", m
		} else {
			scheme += "[:]//"
		}
		return scheme + strings.ReplaceAll(rest, ".", "[.]")
	})
}

// Code renders a value as a Markdown code span that no character in it can
// close: the fence is one backtick longer than the longest run of backticks
// inside, padded when the value begins or ends with a backtick (CommonMark's
// rule). A pipe is escaped so that the span does not split a table row.
func Code(v any) string {
	s := strings.ReplaceAll(unlinked(fmt.Sprint(v)), "|", `\|`)
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
// backslash-escaped, and @ is a code span of its own so that no one is
// mentioned: GitHub mentions no one inside code, while an entity (&#64;)
// is decoded back to an @ before mentions are looked for.
var markdownText = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`,
	"#", `\#`, "|", `\|`, "~", `\~`, "!", `\!`, "@", "`@`", "&", "&amp;",
)

// Text renders a value as plain Markdown text on one line.
func Text(v any) string { return markdownText.Replace(unlinked(fmt.Sprint(v))) }

// Terminal renders a value for a terminal, on one line (see inert): it can
// neither move the cursor, recolour, retitle the window, split a table
// column, nor reorder or hide what is printed around it.
func Terminal(v any) string { return inert(fmt.Sprint(v)) }

// htmlText escapes a value for text inside raw HTML (a <summary> line, which
// Markdown leaves as HTML: backslash escapes do not work there); @ is a
// <code> element of its own, as in markdownText.
var htmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "@", "<code>@</code>", "`", "&#96;", "[", "&#91;", "]", "&#93;")

// HTMLText renders a value as text on one line inside raw HTML.
func HTMLText(v any) string { return htmlText.Replace(unlinked(fmt.Sprint(v))) }
