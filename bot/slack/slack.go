// Package slack is driftfix's Slack notifier (publish.Notifier): it lays the
// neutral digest view out as Block Kit messages (digest.go, with the
// buttons of digest_actions.go) and posts them with the Slack Web API
// (slack-go), the first message of a digest in the channel, the rest in its
// thread. It knows nothing about causes; it lays out what the view says. It
// also serves the digest's buttons, Slack's signed interactivity requests
// (interact.go).
package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/driftfix/driftfix/templates"
	"github.com/slack-go/slack"
)

// Notifier posts digests.
type Notifier struct {
	opts    []slack.Option
	tokenFn func() string

	cmu     sync.Mutex
	client  *slack.Client
	token   string // the client's
	retries int
	backoff time.Duration
	log     *slog.Logger
	// maxWait caps one Retry-After wait.
	maxWait time.Duration

	mu          sync.Mutex
	calls, errs int
}

// Calls counts the messages sent, by API method.
func (n *Notifier) Calls() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return map[string]int{"chat.postMessage": n.calls}
}

// Errors counts the attempts that failed, by API method.
func (n *Notifier) Errors() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return map[string]int{"chat.postMessage": n.errs}
}

// Config says how to reach Slack. APIURL is for Slack-compatible test servers.
type Config struct {
	Token string
	// TokenFunc, when set, is asked for the token before every message (a
	// token file read again when it changes); it replaces Token.
	TokenFunc func() string
	APIURL    string
	Retries   int // on 429, 5xx and connection errors, default 5
	// Backoff is the first wait after a 5xx or a connection error, doubled
	// each time (default 1s).
	Backoff time.Duration
	Logger  *slog.Logger
}

// New builds a notifier.
func New(cfg Config) (*Notifier, error) {
	if cfg.TokenFunc == nil {
		tok := cfg.Token
		cfg.TokenFunc = func() string { return tok }
	}
	if cfg.TokenFunc() == "" {
		return nil, errors.New("slack: no token: give the bot token in a file or the environment")
	}
	opts := []slack.Option{}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(strings.TrimRight(cfg.APIURL, "/")+"/"))
	}
	n := &Notifier{opts: opts, tokenFn: cfg.TokenFunc, retries: cfg.Retries, backoff: cfg.Backoff, log: cfg.Logger, maxWait: time.Minute}
	if n.retries == 0 {
		n.retries = 5
	}
	if n.backoff == 0 {
		n.backoff = time.Second
	}
	if n.log == nil {
		n.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return n, nil
}

// Render lays a digest out as Block Kit messages (Digest), each encoded as
// the JSON Send reads back: the publisher keeps them, opaque, until each is
// sent. An empty digest is no message.
func (n *Notifier) Render(v templates.DigestView) ([]string, error) {
	var out []string
	for _, m := range Digest(v) {
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("slack: encode the digest: %w", err)
		}
		out = append(out, string(raw))
	}
	return out, nil
}

// Send posts one message Render made to channel, in thread unless it is
// empty, and returns its timestamp (the thread, when it starts one).
func (n *Notifier) Send(ctx context.Context, channel, thread, message string) (string, error) {
	var m Message
	if err := json.Unmarshal([]byte(message), &m); err != nil {
		return "", fmt.Errorf("slack: read a rendered message for %s: %w", channel, err)
	}
	return n.PostOne(ctx, channel, thread, m)
}

// Post sends a digest to a channel: the first message in the channel, the
// others as replies in its thread. It returns the thread's timestamp.
func (n *Notifier) Post(ctx context.Context, channel string, msgs []Message) (string, error) {
	return n.Reply(ctx, channel, "", msgs)
}

// Reply sends messages as replies in the thread of message ts in channel
// (with ts empty, as Post does). It returns the thread's timestamp.
func (n *Notifier) Reply(ctx context.Context, channel, ts string, msgs []Message) (string, error) {
	thread := ts
	for i, m := range msgs {
		ts, err := n.PostOne(ctx, channel, thread, m)
		if err != nil {
			return thread, fmt.Errorf("slack: post message %d of %d to %s: %w", i+1, len(msgs), channel, err)
		}
		if thread == "" {
			thread = ts
		}
	}
	return thread, nil
}

// PostOne sends one message to channel, in thread unless it is empty, and
// returns the message's timestamp.
func (n *Notifier) PostOne(ctx context.Context, channel, thread string, m Message) (string, error) {
	opts, err := options(m)
	if err != nil {
		return "", err
	}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	return n.post(ctx, channel, opts)
}

// post sends one message, waiting out 429s as Slack asks and retrying 5xx
// answers and connection errors with backoff.
func (n *Notifier) post(ctx context.Context, channel string, opts []slack.MsgOption) (string, error) {
	backoff := n.backoff
	for attempt := 0; ; attempt++ {
		client, token := n.current()
		_, ts, err := client.PostMessageContext(ctx, channel, opts...)
		n.mu.Lock()
		n.calls++
		if err != nil {
			n.errs++
		}
		n.mu.Unlock()
		if err == nil || attempt >= n.retries || ctx.Err() != nil {
			return ts, redact(err, token)
		}
		var rl *slack.RateLimitedError
		var sc slack.StatusCodeError
		var wait time.Duration
		switch {
		case errors.As(err, &rl):
			wait = min(max(rl.RetryAfter, time.Second), n.maxWait)
			n.log.Warn("slack rate limit, waiting", "channel", channel, "retry_after", wait.String())
		case errors.As(err, &sc) && sc.Code >= 500, transient(err):
			wait = backoff
			backoff = min(backoff*2, n.maxWait)
			n.log.Warn("slack call failed, retrying", "channel", channel, "wait", wait.String(), "error", redact(err, token).Error())
		default: // Slack said no (invalid_auth, channel_not_found, …): retrying changes nothing
			return ts, redact(err, token)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
	}
}

// current returns a client for the token as it is now, built again when
// the token changed (a rotated token file).
func (n *Notifier) current() (*slack.Client, string) {
	tok := n.tokenFn()
	n.cmu.Lock()
	defer n.cmu.Unlock()
	if n.client == nil || tok != n.token {
		n.client, n.token = slack.New(tok, n.opts...), tok
	}
	return n.client, tok
}

// transient reports a connection error: no answer came.
func transient(err error) bool {
	var ne net.Error
	var ue *url.Error
	return errors.As(err, &ne) || errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// options turns a rendered message into slack-go options: fallback text and
// coloured attachments holding Block Kit blocks.
func options(m Message) ([]slack.MsgOption, error) {
	var atts []slack.Attachment
	for _, a := range m.Attachments {
		raw, err := json.Marshal(a.Blocks)
		if err != nil {
			return nil, fmt.Errorf("slack: encode blocks: %w", err)
		}
		var blocks slack.Blocks
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return nil, fmt.Errorf("slack: decode blocks: %w", err)
		}
		atts = append(atts, slack.Attachment{Color: a.Color, Blocks: blocks})
	}
	return []slack.MsgOption{slack.MsgOptionText(m.Text, false), slack.MsgOptionAttachments(atts...)}, nil
}

func redact(err error, token string) error {
	if err == nil || token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "[token]"))
}
