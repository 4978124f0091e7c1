package slack_test

import (
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/slack"
)

// Slack's notifier stands behind the publisher's Notifier port.
var _ publish.Notifier = (*slack.Notifier)(nil)
