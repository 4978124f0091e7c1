package templates

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/drift"
)

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

// DigestView is what changed in one cycle, for one channel.
type DigestView struct {
	Instance  string // Argo CD instance name
	ArgoCDURL string
	NewStuck  []AppLine
	Opened    []PRLine
	Updated   []PRLine
	Merged    []PRLine
	Closed    []PRLine
	Fixed     []AppLine // Synced again after a merged fix
	ForPeople []PersonLine
	Fleet     []FleetLine
	// CannotCompare are the applications Argo CD cannot compare with Git,
	// each with Argo CD's message as its Note: neither drift nor stuck, and
	// nothing is proposed for them.
	CannotCompare []AppLine
	// Fights are two writers taking turns at a field, each reported once.
	Fights []FightLine
	// Ignores are the ignore rules the inventory flags, posted at most
	// once a week.
	Ignores []IgnoreLine
	// Buttons puts Open, Snooze and Recheck buttons under the lines of
	// stuck applications and fix pull requests (digest_actions.go).
	Buttons bool `json:",omitempty"`
}

// AppLine is one application and a short note. Instance (not shown) routes
// the line to its instance's digest.
type AppLine struct {
	App, Namespace, Note string
	Causes               []drift.Cause
	Instance             string
	Key                  string // the fix it follows up, if any
}

// PRLine is one pull request.
type PRLine struct {
	App, Namespace, Title, URL string
	Instance                   string
	Key                        string // the fix's key: its news goes in the thread that announced it
}

// PersonLine is a finding driftfix leaves to people.
type PersonLine struct {
	App, Namespace string
	Instance       string
	Resource       drift.Ref
	Path           string
	Cause          drift.Cause
	Why            string
}

// FleetLine is one cause shared by many applications (one webhook drifting
// forty apps), with the one platform fix that ends it.
type FleetLine struct {
	Instance   string
	Cause      drift.Cause
	Source     string // e.g. "MutatingWebhookConfiguration istio-sidecar-injector"
	Apps       int
	Suggestion string
	// PR is the open platform pull request that makes the change, if any.
	PR string
}

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

// Empty reports whether nothing changed, so no digest is sent.
func (v DigestView) Empty() bool {
	return len(v.NewStuck)+len(v.Opened)+len(v.Updated)+len(v.Merged)+len(v.Closed)+len(v.Fixed)+len(v.ForPeople)+len(v.Fleet)+len(v.CannotCompare)+len(v.Fights)+len(v.Ignores) == 0
}

type group struct {
	title, color string
	lines        []string
	actions      []map[string]any // blocks after the lines (digest_actions.go)
}

// Digest renders the digest as Block Kit messages. A digest too big for one
// message is split into several, never cut: every line appears exactly once.
func Digest(v DigestView) []Message {
	if v.Empty() {
		return nil
	}
	link := func(app, ns string) string {
		if v.ArgoCDURL == "" {
			return slackCode(ns + "/" + app)
		}
		return fmt.Sprintf("<%s|%s>", AppURL(v.ArgoCDURL, ns, app), escape(ns+"/"+app))
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
			g.actions = v.buttons(g.actions, a.Instance, a.Namespace, a.App, "")
		}
		groups = append(groups, g)
	}
	for _, pg := range []struct {
		title, color string
		prs          []PRLine
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
				g.actions = v.buttons(g.actions, p.Instance, p.Namespace, p.App, p.URL)
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
		people := append([]PersonLine(nil), v.ForPeople...)
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
func pack(v DigestView, groups []group) []Message {
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

func byCause(apps []AppLine) []AppLine {
	out := append([]AppLine(nil), apps...)
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
// digest sent when quiet hours end: each news line once, in the order it
// came; the fleet and cannot-compare lines, which say how things are now,
// as the later digest has them, and the weekly ignore-rule section as the
// latest digest that carries it.
func (v *DigestView) Merge(later DigestView) {
	if v.Instance == "" {
		v.Instance, v.ArgoCDURL = later.Instance, later.ArgoCDURL
	}
	v.NewStuck = appendOnce(v.NewStuck, later.NewStuck)
	v.Opened = appendOnce(v.Opened, later.Opened)
	v.Updated = appendOnce(v.Updated, later.Updated)
	v.Merged = appendOnce(v.Merged, later.Merged)
	v.Closed = appendOnce(v.Closed, later.Closed)
	v.Fixed = appendOnce(v.Fixed, later.Fixed)
	v.ForPeople = appendOnce(v.ForPeople, later.ForPeople)
	v.Fights = appendOnce(v.Fights, later.Fights) // each told once: never dropped
	v.Fleet, v.CannotCompare = later.Fleet, later.CannotCompare
	if len(later.Ignores) > 0 {
		v.Ignores = later.Ignores // the weekly section, as it is now
	}
}

// appendOnce appends the lines of more that lines does not hold yet.
func appendOnce[T any](lines, more []T) []T {
	seen := map[string]bool{}
	key := func(l T) string { b, _ := json.Marshal(l); return string(b) }
	for _, l := range lines {
		seen[key(l)] = true
	}
	for _, l := range more {
		if k := key(l); !seen[k] {
			seen[k] = true
			lines = append(lines, l)
		}
	}
	return lines
}
