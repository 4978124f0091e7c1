package slack

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/templates"
)

// Block Kit is built here, from the neutral digest view the publisher
// hands every notifier (templates.DigestView): what is Slack's (mrkdwn,
// colours, blocks, message limits, buttons) stays in this package.

// Slack's limits on one message.
const (
	maxBlocks      = 50
	maxSectionText = 3000
	// maxMessageText keeps a message's blocks well under Slack's payload
	// limits, which are far below 50 full sections.
	maxMessageText = 12000
)

// Argo CD's notification colours.
const (
	colorFailed    = "#E96D76"
	colorSucceeded = "#18be52"
	colorRunning   = "#0DADEA"
	colorDegraded  = "#f4c030"
)

// Message is one Slack message: fallback text and coloured attachments of blocks.
type Message struct {
	Text        string       `json:"text"`
	Attachments []Attachment `json:"attachments"`
}

// Attachment is a coloured group of Block Kit blocks.
type Attachment struct {
	Color  string           `json:"color"`
	Blocks []map[string]any `json:"blocks"`
}

type group struct {
	title, color string
	lines        []string
	actions      []map[string]any // blocks after the lines (digest_actions.go)
}

// Digest renders the digest as Block Kit messages. A digest too big for one
// message is split into several, never cut: every line appears exactly once.
func Digest(v templates.DigestView) []Message {
	if v.Empty() {
		return nil
	}
	link := func(app, ns string) string {
		if v.ArgoCDURL == "" {
			return slackCode(ns + "/" + app)
		}
		return fmt.Sprintf("<%s|%s>", templates.AppURL(v.ArgoCDURL, ns, app), escape(ns+"/"+app))
	}
	var groups []group
	if len(v.Fleet) > 0 {
		g := group{title: "Shared causes", color: colorDegraded}
		for _, f := range v.Fleet {
			line := fmt.Sprintf("• *%s* drifts %d applications (%s). Suggested platform fix: %s", escape(f.Source), f.Apps, escape(string(f.Cause)), escape(f.Suggestion))
			if f.PR != "" {
				line = fmt.Sprintf("• *%s* drifts %d applications (%s). Platform pull request: <%s|%s> (per-application fixes held back)", escape(f.Source), f.Apps, escape(string(f.Cause)), f.PR, escape(f.PR))
			}
			g.lines = append(g.lines, line)
		}
		groups = append(groups, g)
	}
	groups = append(groups, fightGroup(v, link)...)
	groups = append(groups, ignoreGroup(v)...)
	if len(v.NewStuck) > 0 {
		g := group{title: "Newly stuck OutOfSync", color: colorFailed}
		for _, a := range byCause(v.NewStuck) {
			g.lines = append(g.lines, fmt.Sprintf("• %s: %s%s", link(a.App, a.Namespace), causesText(a.Causes), note(a.Note)))
			g.actions = buttons(v, g.actions, a.Instance, a.Namespace, a.App, "")
		}
		groups = append(groups, g)
	}
	for _, pg := range []struct {
		title, color string
		prs          []templates.PRLine
		open         bool // the pull requests are open: buttons go under them
	}{{"Fix pull requests opened", colorRunning, v.Opened, true}, {"Fix pull requests updated", colorRunning, v.Updated, true},
		{"Fix pull requests merged", colorSucceeded, v.Merged, false}, {"Fix pull requests closed", colorDegraded, v.Closed, false}} {
		if len(pg.prs) == 0 {
			continue
		}
		g := group{title: pg.title, color: pg.color}
		for _, p := range pg.prs {
			g.lines = append(g.lines, fmt.Sprintf("• %s: <%s|%s>", link(p.App, p.Namespace), p.URL, escape(p.Title)))
			if pg.open {
				g.actions = buttons(v, g.actions, p.Instance, p.Namespace, p.App, p.URL)
			}
		}
		groups = append(groups, g)
	}
	if len(v.Fixed) > 0 {
		g := group{title: "Synced again", color: colorSucceeded}
		for _, a := range v.Fixed {
			g.lines = append(g.lines, fmt.Sprintf("• %s%s", link(a.App, a.Namespace), note(a.Note)))
		}
		groups = append(groups, g)
	}
	if len(v.ForPeople) > 0 {
		g := group{title: "Left for people (never fixed automatically)", color: colorFailed}
		people := append([]templates.PersonLine(nil), v.ForPeople...)
		sort.SliceStable(people, func(i, j int) bool { return people[i].Cause < people[j].Cause })
		for _, p := range people {
			g.lines = append(g.lines, fmt.Sprintf("• %s %s %s — *%s*: %s", link(p.App, p.Namespace), slackCode(p.Resource), slackCode(p.Path), escape(string(p.Cause)), escape(p.Why)))
		}
		groups = append(groups, g)
	}
	if len(v.CannotCompare) > 0 {
		g := group{title: "Argo CD cannot compare (not drift; nothing proposed)", color: colorFailed}
		for _, a := range v.CannotCompare {
			says := "sync status Unknown; no message from Argo CD was read"
			if a.Note != "" {
				says = "Argo CD says: " + escape(cut(a.Note, maxCompareMessage))
			}
			g.lines = append(g.lines, fmt.Sprintf("• %s: %s", link(a.App, a.Namespace), says))
		}
		groups = append(groups, g)
	}
	return pack(v, groups)
}

// maxCompareMessage bounds the Argo CD message quoted for an application it
// cannot compare (a manifest generation error can run to pages).
const maxCompareMessage = 500

// pack lays groups out as sections of at most maxSectionText characters and
// messages of at most maxBlocks blocks.
func pack(v templates.DigestView, groups []group) []Message {
	title := "driftfix digest"
	if v.Instance != "" {
		title += " for " + v.Instance
	}
	var msgs []Message
	cur := Message{Text: title}
	blocks, chars := 0, 0
	newMessage := func() {
		msgs = append(msgs, cur)
		cur = Message{Text: title + " (continued)"}
		blocks, chars = 0, 0
	}
	add := func(color string, b map[string]any) {
		size := 0
		if t, ok := b["text"].(map[string]any); ok {
			s, _ := t["text"].(string)
			size = utf8.RuneCountInString(s)
		}
		if blocks == maxBlocks || (blocks > 0 && chars+size > maxMessageText) {
			newMessage()
		}
		chars += size
		n := len(cur.Attachments)
		if n == 0 || cur.Attachments[n-1].Color != color {
			cur.Attachments = append(cur.Attachments, Attachment{Color: color})
			n++
		}
		cur.Attachments[n-1].Blocks = append(cur.Attachments[n-1].Blocks, b)
		blocks++
	}
	add(colorRunning, map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": cut(title, 150)}})
	for _, g := range groups {
		add(g.color, section("*"+g.title+"*"))
		var chunk []string
		size := 0
		flush := func() {
			if len(chunk) > 0 {
				add(g.color, section(strings.Join(chunk, "\n")))
				chunk, size = nil, 0
			}
		}
		for _, l := range g.lines {
			l = cut(l, maxSectionText) // a single line longer than a section says so
			if size+utf8.RuneCountInString(l)+1 > maxSectionText {
				flush()
			}
			chunk = append(chunk, l)
			size += utf8.RuneCountInString(l) + 1
		}
		flush()
		for _, b := range g.actions {
			add(g.color, b)
		}
	}
	msgs = append(msgs, cur)
	if len(msgs) > 1 {
		for i := range msgs {
			msgs[i].Text = fmt.Sprintf("%s (%d/%d)", title, i+1, len(msgs))
		}
	}
	return msgs
}

// section is a block of mrkdwn text. It is verbatim: Slack turns no bare
// URL, domain, channel or user name in it into a link or mention; only the
// <url|text> links the digest writes itself are links.
func section(text string) map[string]any {
	return map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text, "verbatim": true}}
}

// cut shortens text that can never fit, saying so rather than dropping it silently.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	const suffix = " …(shortened)"
	r := []rune(s)
	return string(r[:max-utf8.RuneCountInString(suffix)]) + suffix
}

func note(n string) string {
	if n == "" {
		return ""
	}
	return " — " + escape(n)
}

func causesText(cs []drift.Cause) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = "`" + string(c) + "`"
	}
	return strings.Join(parts, ", ")
}

func byCause(apps []templates.AppLine) []templates.AppLine {
	out := append([]templates.AppLine(nil), apps...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := "", ""
		if len(out[i].Causes) > 0 {
			a = string(out[i].Causes[0])
		}
		if len(out[j].Causes) > 0 {
			b = string(out[j].Causes[0])
		}
		return a < b
	})
	return out
}

// Merge adds a later digest of the same channel and instance to v, as one

// fightGroup is the digest's group of newly found fights.
func fightGroup(v templates.DigestView, link func(app, ns string) string) []group {
	if len(v.Fights) == 0 {
		return nil
	}
	g := group{title: "Writers fighting over a field (new)", color: colorDegraded}
	for _, f := range v.Fights {
		g.lines = append(g.lines, fmt.Sprintf("• %s %s: %s", link(f.App, f.Namespace), slackCode(f.Resource), f.Summary(slackCode)))
	}
	return []group{g}
}

// ignoreGroup is the digest's weekly group of flagged ignore rules.
func ignoreGroup(v templates.DigestView) []group {
	if len(v.Ignores) == 0 {
		return nil
	}
	g := group{title: "Ignore rules to look at (weekly)", color: colorDegraded}
	for _, l := range v.Ignores {
		line := "• " + l.Summary(slackCode, func(x any) string { return escape(fmt.Sprint(x)) })
		if l.PR != "" {
			line += fmt.Sprintf(". Pull request: <%s|%s>", l.PR, escape(l.PR))
		}
		g.lines = append(g.lines, line)
	}
	return []group{g}
}

// slackText escapes a value for Slack's mrkdwn: &, < and > as Slack asks
// (so no <!channel>, <@user> or <url|link> can be formed), and a backtick
// as a look-alike, as mrkdwn has no escape for it and it would end a code
// span. Bold and italic marks are left: at worst they restyle the value.
var slackText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "ˋ")

func escape(s string) string { return slackText.Replace(templates.Unlinked(s)) }

// slackCode renders a value as an inline code span in mrkdwn.
func slackCode(v any) string { return "`" + escape(fmt.Sprint(v)) + "`" }
