package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v89/github"
)

// DefaultMaxBody bounds a delivery's body. GitHub caps payloads at 25 MB;
// the events driftfix acts on are far smaller.
const DefaultMaxBody = 5 << 20

// Deliveries remembers the deliveries received (the state store).
type Deliveries interface {
	// FirstDelivery records an id and reports whether it is new.
	FirstDelivery(ctx context.Context, id string, now time.Time) (bool, error)
	// ForgetDelivery forgets an id, so the delivery sent again is new.
	ForgetDelivery(ctx context.Context, id string) error
}

// Receiver serves GitHub's webhook deliveries: it checks the signature
// (X-Hub-Signature-256, with go-github's validation) and the size, takes
// each delivery once (X-GitHub-Delivery), drops events of repositories the
// bot does not watch, queues the work and answers at once. Each refusal's
// body says why.
type Receiver struct {
	// Secret is the webhook secret, read when a delivery comes (a rotated
	// secret file needs no restart); empty refuses every delivery.
	Secret func() string
	// MaxBody bounds a delivery's body (default DefaultMaxBody): larger is 413.
	MaxBody int64
	// Deliveries remembers the ids received; nil takes every delivery.
	Deliveries Deliveries
	// Watches reports whether the bot watches a repository (its web URL);
	// nil watches all. The work's handler checks again what it acts on.
	Watches func(repoURL string) bool
	// Queue receives the work.
	Queue *Queue
	// Log gets a line per delivery (nil: discard).
	Log *slog.Logger
	// Seen, when set, is told each delivery's event and what became of it
	// (queued, coalesced, duplicate, ignored, refused, ...).
	Seen func(event, outcome string)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxInFlight bounds the deliveries read at once (default 64), so a
	// flood of large bodies holds at most MaxInFlight × MaxBody; a delivery
	// that waits more than a second for its turn is refused with 503.
	MaxInFlight int

	once  sync.Once
	slots chan struct{}
}

func (rc *Receiver) log() *slog.Logger {
	if rc.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return rc.Log
}

func (rc *Receiver) seen(event, outcome string) {
	if rc.Seen != nil {
		rc.Seen(event, outcome)
	}
}

// ServeHTTP answers one delivery.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	event, id := gh.WebHookType(r), gh.DeliveryID(r)
	refuse := func(code int, outcome, msg string) {
		rc.seen(event, outcome)
		rc.log().Warn("webhook delivery refused", "event", event, "delivery", id, "status", code, "problem", msg)
		http.Error(w, msg, code)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(http.StatusMethodNotAllowed, "refused", "GitHub's webhook deliveries are POSTed here")
		return
	}
	secret := ""
	if rc.Secret != nil {
		secret = rc.Secret()
	}
	if secret == "" {
		refuse(http.StatusServiceUnavailable, "refused", "driftfix has no webhook secret to check deliveries with")
		return
	}
	sig := r.Header.Get(gh.SHA256SignatureHeader)
	if sig == "" {
		refuse(http.StatusUnauthorized, "unsigned", "the delivery has no "+gh.SHA256SignatureHeader+" header: set the App's webhook secret")
		return
	}
	rc.once.Do(func() {
		n := rc.MaxInFlight
		if n <= 0 {
			n = 64
		}
		rc.slots = make(chan struct{}, n)
	})
	select {
	case rc.slots <- struct{}{}:
		defer func() { <-rc.slots }()
	case <-time.After(time.Second):
		refuse(http.StatusServiceUnavailable, "busy", "driftfix is reading too many deliveries at once; send it again")
		return
	}
	max := rc.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		refuse(http.StatusRequestEntityTooLarge, "refused", fmt.Sprintf("the payload is larger than %d bytes, the most driftfix reads", max))
		return
	case err != nil:
		refuse(http.StatusBadRequest, "refused", "read the payload: "+err.Error())
		return
	}
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		refuse(http.StatusBadRequest, "refused", fmt.Sprintf("Content-Type %q: want application/json", r.Header.Get("Content-Type")))
		return
	}
	payload, err := gh.ValidatePayloadFromBody(ct, bytes.NewReader(body), sig, []byte(secret))
	switch {
	case err != nil && strings.Contains(err.Error(), "Content-Type"):
		refuse(http.StatusBadRequest, "refused", err.Error()+": want application/json")
		return
	case err != nil:
		refuse(http.StatusUnauthorized, "forged", gh.SHA256SignatureHeader+" does not match the payload: the delivery is not signed with the webhook secret driftfix reads")
		return
	}
	if event == "" || id == "" {
		refuse(http.StatusBadRequest, "refused", "the delivery has no "+gh.EventTypeHeader+" or "+gh.DeliveryIDHeader+" header")
		return
	}
	parsed, err := gh.ParseWebHook(event, payload)
	if err != nil {
		if strings.HasPrefix(err.Error(), "unknown X-Github-Event") {
			rc.answer(w, event, id, http.StatusAccepted, "ignored", "ignored: "+event+" is not an event driftfix acts on")
			return
		}
		refuse(http.StatusBadRequest, "refused", "the "+event+" payload is not valid JSON: "+err.Error())
		return
	}
	works, why := FromEvent(parsed)
	if len(works) == 0 {
		rc.answer(w, event, id, http.StatusAccepted, "ignored", "ignored: "+why)
		return
	}
	if rc.Watches != nil && works[0].RepoURL != "" && !rc.Watches(works[0].RepoURL) {
		rc.answer(w, event, id, http.StatusAccepted, "unknown", "ignored: driftfix does not watch "+works[0].Repo)
		return
	}
	now := time.Now
	if rc.Now != nil {
		now = rc.Now
	}
	if rc.Deliveries != nil {
		first, err := rc.Deliveries.FirstDelivery(r.Context(), id, now())
		if err != nil {
			refuse(http.StatusServiceUnavailable, "refused", "driftfix could not record the delivery; send it again")
			rc.log().Error("record a webhook delivery", "delivery", id, "error", err.Error())
			return
		}
		if !first {
			rc.answer(w, event, id, http.StatusOK, "duplicate", "already received delivery "+id+": not acted on again")
			return
		}
	}
	var said []string
	outcome := ""
	for _, wk := range works {
		wk.Delivery = id
		o, err := rc.Queue.Add(wk)
		if err != nil {
			if rc.Deliveries != nil {
				rc.Deliveries.ForgetDelivery(context.WithoutCancel(r.Context()), id)
			}
			refuse(http.StatusServiceUnavailable, "full", err.Error()+": send the delivery again later; the next cycle catches up")
			return
		}
		if outcome == "" || o == Queued {
			outcome = string(o)
		}
		said = append(said, string(o)+": "+wk.String())
	}
	rc.answer(w, event, id, http.StatusAccepted, outcome, strings.Join(said, "\n"))
}

func (rc *Receiver) answer(w http.ResponseWriter, event, id string, code int, outcome, msg string) {
	rc.seen(event, outcome)
	rc.log().Debug("webhook delivery", "event", event, "delivery", id, "outcome", outcome, "said", msg)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}
