package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// DefaultMaxInteraction bounds an interactivity request's body. Slack's
// block_actions payload carries the whole message the button was in; a
// digest message is far below this.
const DefaultMaxInteraction = 1 << 20

// Actions is what the digest's buttons do, on the bot's side. App is an
// application's key (instance/namespace/name) as the button carries it.
type Actions interface {
	// Known reports whether the last cycle saw the application.
	Known(app string) bool
	// WriteAccess returns a GitHub login's permission on the repository
	// the application reads and whether it may push there.
	WriteAccess(ctx context.Context, app, login string) (permission string, ok bool, err error)
	// Snooze holds the application's digest lines back until a time.
	Snooze(ctx context.Context, app string, until time.Time, by string) error
	// Recheck queues the application to be diagnosed again now.
	Recheck(ctx context.Context, app string) error
}

// Actors is who may press the buttons, as the policy says it now: Slack
// user IDs mapped to GitHub logins, and Slack user group IDs.
type Actors func() (people map[string]string, userGroups []string)

// Interactions serves Slack's interactivity requests for the digest's
// buttons (block_actions). It checks the request's signature with the
// app's signing secret (X-Slack-Signature over the body and
// X-Slack-Request-Timestamp, at most five minutes old) and its size,
// answers at once, then checks who pressed and acts, and tells the person
// what came of it in a reply only they see (the payload's response_url).
type Interactions struct {
	// Secret is the Slack app's signing secret, read for each request (a
	// rotated file needs no restart); empty refuses every request.
	Secret func() string
	// MaxBody bounds a request's body (default DefaultMaxInteraction): larger is 413.
	MaxBody int64
	// Actors says who may act; nil: nobody.
	Actors Actors
	// Slack reads user groups' members (usergroups.users.list, scope
	// usergroups:read); nil when no user group is named.
	Slack *Notifier
	// Actions does what was pressed.
	Actions Actions
	// ResponseURLPrefix is what a response_url must start with (default
	// Slack's hooks): driftfix posts nowhere else.
	ResponseURLPrefix string
	// HTTP posts the replies (default: a client with a 10s timeout).
	HTTP *http.Client
	// Log gets a line per action (nil: discard).
	Log *slog.Logger
	// Now is the clock for snoozes (default time.Now).
	Now func() time.Time
	// Seen, when set, is told each request's action (snooze, recheck, or
	// "" before it is known) and what became of it: done, failed,
	// refused, unknown, forged, replayed, too_large, bad, busy.
	Seen func(action, outcome string)

	once    sync.Once
	slots   chan struct{} // actions in hand
	reading chan struct{} // bodies being read
	wg      sync.WaitGroup

	mu   sync.Mutex
	sigs map[string]time.Time // signatures taken within replayWindow
}

// replayWindow is how long a signed request stays valid (Slack's five
// minutes either way): a request seen again within it is a replay.
const replayWindow = 5 * time.Minute

// firstTime records a request's signature and reports whether it is new;
// signatures older than twice the window are forgotten on the way.
func (in *Interactions) firstTime(sig string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	now := time.Now()
	if in.sigs == nil {
		in.sigs = map[string]time.Time{}
	}
	for k, at := range in.sigs {
		if now.Sub(at) > 2*replayWindow {
			delete(in.sigs, k)
		}
	}
	if _, seen := in.sigs[sig]; seen {
		return false
	}
	in.sigs[sig] = now
	return true
}

// maxInFlight bounds the actions handled at once, maxReading the request
// bodies read at once.
const (
	maxInFlight = 16
	maxReading  = 64
)

// DefaultResponseURLPrefix is where Slack's response URLs point.
const DefaultResponseURLPrefix = "https://hooks.slack.com/"

func (in *Interactions) seen(action, outcome string) {
	if in.Seen != nil {
		in.Seen(action, outcome)
	}
}

func (in *Interactions) log() *slog.Logger {
	if in.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return in.Log
}

// Wait waits for the actions in hand to finish (their replies sent).
func (in *Interactions) Wait() { in.wg.Wait() }

// ServeHTTP answers one interactivity request.
func (in *Interactions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	refuse := func(code int, outcome, msg string) {
		in.seen("", outcome)
		in.log().Warn("slack interaction refused", "status", code, "problem", msg)
		http.Error(w, msg, code)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(http.StatusMethodNotAllowed, "bad", "Slack's interactivity requests are POSTed here")
		return
	}
	secret := ""
	if in.Secret != nil {
		secret = in.Secret()
	}
	if secret == "" {
		refuse(http.StatusServiceUnavailable, "bad", "driftfix has no Slack signing secret to check requests with")
		return
	}
	in.once.Do(func() {
		in.slots = make(chan struct{}, maxInFlight)
		in.reading = make(chan struct{}, maxReading)
	})
	select { // a flood of large bodies holds at most maxReading × MaxBody
	case in.reading <- struct{}{}:
		defer func() { <-in.reading }()
	case <-time.After(time.Second):
		refuse(http.StatusServiceUnavailable, "busy", "driftfix is reading too many requests at once; press again")
		return
	}
	max := in.MaxBody
	if max <= 0 {
		max = DefaultMaxInteraction
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		refuse(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the request is larger than %d bytes, the most driftfix reads", max))
		return
	case err != nil:
		refuse(http.StatusBadRequest, "bad", "read the request: "+err.Error())
		return
	}
	sv, err := slack.NewSecretsVerifier(r.Header, secret)
	switch {
	case errors.Is(err, slack.ErrExpiredTimestamp):
		refuse(http.StatusUnauthorized, "replayed", "X-Slack-Request-Timestamp is more than five minutes away from driftfix's clock: a replayed request, or a clock that is off")
		return
	case err != nil:
		refuse(http.StatusUnauthorized, "forged", "the request is not signed as Slack signs it (X-Slack-Signature, X-Slack-Request-Timestamp): "+err.Error())
		return
	}
	sv.Write(body)
	if sv.Ensure() != nil {
		refuse(http.StatusUnauthorized, "forged", "X-Slack-Signature does not match the request: it is not signed with the signing secret driftfix reads")
		return
	}
	if !in.firstTime(r.Header.Get("X-Slack-Signature")) {
		refuse(http.StatusUnauthorized, "replayed", "this request was received before: a replay is not acted on again")
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		refuse(http.StatusBadRequest, "bad", "the request has no payload form field")
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		refuse(http.StatusBadRequest, "bad", "the payload is not an interaction: "+err.Error())
		return
	}
	if cb.Type != slack.InteractionTypeBlockActions {
		in.log().Info("slack interaction ignored", "type", string(cb.Type))
		w.WriteHeader(http.StatusOK) // Slack wants a 200 for what driftfix does not act on too
		return
	}
	for _, a := range cb.ActionCallback.BlockActions {
		if a.ActionID != ButtonSnooze && a.ActionID != ButtonRecheck {
			continue // the Open link, which Slack also reports, or not a driftfix button
		}
		select {
		case in.slots <- struct{}{}:
		default:
			refuse(http.StatusServiceUnavailable, "busy", "driftfix is handling too many button presses at once; press again")
			return
		}
		in.wg.Add(1)
		go func(user, responseURL, action, app string) {
			defer in.wg.Done()
			defer func() { <-in.slots }()
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), time.Minute)
			defer cancel()
			msg := in.act(ctx, user, action, app)
			if err := in.reply(ctx, responseURL, msg); err != nil {
				in.log().Warn("reply to a slack button", "user", user, "error", err.Error())
			}
		}(cb.User.ID, cb.ResponseURL, a.ActionID, a.Value)
	}
	w.WriteHeader(http.StatusOK)
}

// act checks who pressed and does what they pressed; it returns what to
// tell them.
func (in *Interactions) act(ctx context.Context, user, action, app string) string {
	log := in.log().With("user", user, "action", action, "app", app)
	name := strings.TrimPrefix(action, "driftfix_")
	if in.Actions == nil || !in.Actions.Known(app) {
		in.seen(name, "unknown")
		log.Info("slack button refused: unknown application")
		return fmt.Sprintf("driftfix's last cycle did not see the application %q: nothing done.", app)
	}
	who, why := in.allowed(ctx, user, app)
	if why != "" {
		in.seen(name, "refused")
		log.Info("slack button refused", "why", why)
		return why
	}
	switch action {
	case ButtonSnooze:
		now := time.Now
		if in.Now != nil {
			now = in.Now
		}
		until := now().Add(SnoozeFor)
		if err := in.Actions.Snooze(ctx, app, until, who); err != nil {
			in.seen(name, "failed")
			log.Warn("slack snooze failed", "error", err.Error())
			return fmt.Sprintf("driftfix could not snooze %s: %v", app, err)
		}
		in.seen(name, "done")
		log.Info("application snoozed from slack", "until", until.UTC().Format(time.RFC3339), "by", who)
		return fmt.Sprintf("Snoozed %s until %s: the digest leaves it out until then.", app, until.UTC().Format("2006-01-02 15:04 MST"))
	default:
		if err := in.Actions.Recheck(ctx, app); err != nil {
			in.seen(name, "failed")
			log.Warn("slack recheck failed", "error", err.Error())
			return fmt.Sprintf("driftfix could not queue a recheck of %s: %v", app, err)
		}
		in.seen(name, "done")
		log.Info("recheck queued from slack", "by", who)
		return fmt.Sprintf("A recheck of %s is queued: its result comes in the next digest.", app)
	}
}

// allowed says who the user is (for the record) when they may act on app,
// or why not.
func (in *Interactions) allowed(ctx context.Context, user, app string) (who, why string) {
	var people map[string]string
	var groups []string
	if in.Actors != nil {
		people, groups = in.Actors()
	}
	var reasons []string
	if login, ok := people[user]; ok {
		perm, can, err := in.Actions.WriteAccess(ctx, app, login)
		switch {
		case err != nil:
			reasons = append(reasons, fmt.Sprintf("driftfix could not read the GitHub permission of %s (%v)", login, err))
		case can:
			return user + " (GitHub " + login + ")", ""
		default:
			reasons = append(reasons, fmt.Sprintf("your GitHub account %s has %s access to the repository of %s, and write access is needed", login, perm, app))
		}
	} else {
		reasons = append(reasons, "your Slack account "+user+" is not mapped to a GitHub account in the policy's slack.people")
	}
	for _, g := range groups {
		if in.Slack == nil {
			reasons = append(reasons, "driftfix has no Slack token to read user group "+g)
			break
		}
		members, err := in.Slack.groupMembers(ctx, g)
		if err != nil {
			hint := ""
			if strings.Contains(err.Error(), "missing_scope") {
				hint = "; the Slack app's bot token needs usergroups:read"
			}
			reasons = append(reasons, fmt.Sprintf("driftfix could not read the members of user group %s (%v%s)", g, err, hint))
			continue
		}
		for _, m := range members {
			if m == user {
				return user + " (user group " + g + ")", ""
			}
		}
	}
	if len(groups) > 0 {
		reasons = append(reasons, "you are in none of the user groups of slack.actors.userGroups")
	}
	return "", "driftfix did not act: " + strings.Join(reasons, "; ") + "."
}

// groupMembers lists a user group's members (usergroups.users.list).
func (n *Notifier) groupMembers(ctx context.Context, group string) ([]string, error) {
	client, token := n.current()
	users, err := client.GetUserGroupMembersContext(ctx, group)
	return users, redact(err, token)
}

// reply posts an ephemeral message, seen only by the person who pressed,
// to the payload's response_url.
func (in *Interactions) reply(ctx context.Context, responseURL, text string) error {
	prefix := in.ResponseURLPrefix
	if prefix == "" {
		prefix = DefaultResponseURLPrefix
	}
	if !strings.HasPrefix(responseURL, prefix) {
		return fmt.Errorf("response_url %q is not under %s: not posted", responseURL, prefix)
	}
	body, _ := json.Marshal(map[string]any{"response_type": "ephemeral", "replace_original": false, "text": text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("post the reply: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := in.HTTP
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("post the reply: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("post the reply: Slack answered %s", resp.Status)
	}
	return nil
}
