package slack

import (
	"fmt"
	"strings"
	"time"

	"github.com/driftfix/driftfix/templates"
)

// The action IDs of the digest's buttons: the interactivity endpoint
// (bot/slack.Interactions) reads them back from Slack's block_actions
// payload, with the application's key as the button's value.
const (
	ButtonOpenPR  = "driftfix_open_pr" // a link: Slack opens the fix pull request
	ButtonSnooze  = "driftfix_snooze"  // hold the application's digest lines back for SnoozeFor
	ButtonRecheck = "driftfix_recheck" // diagnose the application again now
)

// SnoozeFor is how long the Snooze button holds an application's digest
// lines back.
const SnoozeFor = 7 * 24 * time.Hour

// ButtonKey is the value the Snooze and Recheck buttons carry: the
// application's key as the bot names it (instance/namespace/name).
func ButtonKey(instance, namespace, app string) string {
	return instance + "/" + namespace + "/" + app
}

// maxButtonText is Slack's limit on a button's text.
const maxButtonText = 75

// MaxButtonRows bounds the rows of buttons under one group of lines, so a
// first digest of a large fleet stays a few messages: the lines past it
// have none, and a note says so.
const MaxButtonRows = 15

// buttons appends, when the digest has buttons, an actions block for one
// application: Open (with the pull request's URL, when there is one),
// Snooze and Recheck. Each button names the application, since the block
// comes after its group's lines.
func buttons(v templates.DigestView, blocks []map[string]any, instance, namespace, app, prURL string) []map[string]any {
	switch {
	case !v.Buttons || len(blocks) > MaxButtonRows:
		return blocks
	case len(blocks) == MaxButtonRows:
		note := fmt.Sprintf("Buttons for the first %d lines only: act on the others from the Drift Dashboard or their pull requests.", MaxButtonRows)
		return append(blocks, map[string]any{"type": "context", "elements": []map[string]any{{"type": "mrkdwn", "text": note, "verbatim": true}}})
	}
	name := namespace + "/" + app
	key := ButtonKey(instance, namespace, app)
	button := func(id, text string) map[string]any {
		return map[string]any{"type": "button", "action_id": id, "text": map[string]any{"type": "plain_text", "text": cut(text, maxButtonText)}}
	}
	var elems []map[string]any
	if prURL != "" && (strings.HasPrefix(prURL, "https://") || strings.HasPrefix(prURL, "http://")) {
		b := button(ButtonOpenPR, "Open the fix PR of "+name)
		b["url"], b["style"] = prURL, "primary"
		elems = append(elems, b)
	}
	snooze := button(ButtonSnooze, "Snooze "+name+" for 7 days")
	snooze["value"] = key
	snooze["confirm"] = map[string]any{
		"title":   map[string]any{"type": "plain_text", "text": "Snooze for 7 days?"},
		"text":    map[string]any{"type": "plain_text", "text": cut("For 7 days the digest leaves "+name+" out and driftfix opens or updates no fix pull request for it; an open one stays open.", 300)},
		"confirm": map[string]any{"type": "plain_text", "text": "Snooze"},
		"deny":    map[string]any{"type": "plain_text", "text": "Cancel"},
	}
	recheck := button(ButtonRecheck, "Recheck "+name+" now")
	recheck["value"] = key
	elems = append(elems, snooze, recheck)
	return append(blocks, map[string]any{"type": "actions", "elements": elems})
}
