package argocd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The application watch stream: GET /api/v1/stream/applications, what
// Argo CD's UI follows. argocd-server answers with one JSON object a line,
// {"result":{"type":"ADDED|MODIFIED|DELETED","application":{...}}}, or
// {"error":{...}} when it stops. Without a resourceVersion it first sends
// every application it holds as ADDED; with one it sends only what changes
// from then on (nothing missed meanwhile is sent again).

// ErrStreamRefused says argocd-server does not serve the watch stream to
// this token (404, 405, 501: a proxy or an old server; 403: RBAC): the bot
// polls the list instead.
var ErrStreamRefused = errors.New("argocd: the application watch stream is refused")

// streamPath is the watch stream's path.
const streamPath = "/api/v1/stream/applications"

// maxStreamLine bounds one event of the stream (one application).
const maxStreamLine = 64 << 20

// WatchEvent is one change the watch stream reports.
type WatchEvent struct {
	// Type is ADDED, MODIFIED or DELETED.
	Type string
	// App is the application as the list would summarise it; its Listed
	// digest is of the fields the list asks for, as the stream sent them.
	App AppSummary
	// ResourceVersion is the Application's, which the stream resumes from.
	ResourceVersion string
}

// streamLine is one line of the stream, in the forms argocd-server writes
// it (a result or an error) and the bare event.
type streamLine struct {
	Result *streamEvent `json:"result"`
	Error  *struct {
		Message  string `json:"message"`
		HTTPCode int    `json:"http_code"`
		Code     int    `json:"code"`
	} `json:"error"`
	streamEvent
}

type streamEvent struct {
	Type        string          `json:"type"`
	Application json.RawMessage `json:"application"`
}

// projection is what of an application the list asks for (listFields),
// kept raw: its digest says whether anything the list would show changed.
type projection struct {
	Spec   json.RawMessage `json:"spec"`
	Status struct {
		Sync struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
		} `json:"sync"`
		OperationState *struct {
			Phase      string          `json:"phase"`
			StartedAt  json.RawMessage `json:"startedAt"`
			FinishedAt json.RawMessage `json:"finishedAt"`
		} `json:"operationState"`
		Resources json.RawMessage `json:"resources"`
	} `json:"status"`
}

// decodeWatchApp reads one application of the stream into its summary.
func decodeWatchApp(raw []byte) (AppSummary, string, error) {
	var it listItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return AppSummary{}, "", fmt.Errorf("decode the application: %w", err)
	}
	if it.Metadata.Name == "" {
		return AppSummary{}, "", errors.New("the application has no metadata.name")
	}
	var p projection
	if err := json.Unmarshal(raw, &p); err != nil {
		return AppSummary{}, "", fmt.Errorf("decode the application: %w", err)
	}
	h := sha256.New()
	sep := []byte{0}
	h.Write([]byte("watch\x00" + it.Metadata.Namespace + "\x00" + it.Metadata.Name + "\x00"))
	h.Write(p.Spec)
	h.Write(sep)
	h.Write([]byte(p.Status.Sync.Status + "\x00" + p.Status.Sync.Revision + "\x00"))
	if op := p.Status.OperationState; op != nil {
		h.Write([]byte(op.Phase + "\x00"))
		h.Write(op.StartedAt)
		h.Write(sep)
		h.Write(op.FinishedAt)
	}
	h.Write(sep)
	h.Write(p.Status.Resources)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	var l listResponse
	l.add(&it, sum)
	return l.apps[0], it.Metadata.ResourceVersion, nil
}

// Stream follows the application watch stream once, from resourceVersion
// ("" for every application first), narrowed by the client's ListFilter,
// and calls each for every event in order until the stream ends or ctx is
// done. connected is called once the server has answered 200. A refusal
// is ErrStreamRefused; a rejected token ErrUnauthorized.
func (c *Client) Stream(ctx context.Context, resourceVersion string, connected func(), each func(WatchEvent)) error {
	const endpoint = "GET " + streamPath
	q := url.Values{}
	if resourceVersion != "" {
		q.Set("resourceVersion", resourceVersion)
	}
	c.filter.addTo(q)
	u := *c.base
	u.Path = c.base.Path + streamPath
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("argocd %s: %w", endpoint, err)
	}
	token := c.token()
	req.Header = c.headerFor(token)
	// The stream stays open for as long as it can: the client's timeout,
	// which bounds a call, does not apply; the transport is shared.
	hc := *c.http
	hc.Timeout = 0
	c.mu.Lock()
	c.calls[endpoint]++
	c.mu.Unlock()
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return c.streamErr(endpoint, redact(err, token))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
			return c.streamErr(endpoint, fmt.Errorf("%w: %s answered %d (%s): argocd-server, or a proxy before it, does not serve it", ErrStreamRefused, endpoint, resp.StatusCode, serverMessage(body)))
		case http.StatusForbidden:
			return c.streamErr(endpoint, fmt.Errorf("%w: %s answered 403 (%s): the account may not watch applications", ErrStreamRefused, endpoint, serverMessage(body)))
		case http.StatusUnauthorized:
			return c.streamErr(endpoint, fmt.Errorf("%w (%s answered 401): the token is missing, expired or revoked", ErrUnauthorized, endpoint))
		}
		return c.streamErr(endpoint, fmt.Errorf("argocd %s: status %d (%s)", endpoint, resp.StatusCode, serverMessage(body)))
	}
	if connected != nil {
		connected()
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > maxStreamLine {
				return c.streamErr(endpoint, fmt.Errorf("argocd %s: an event is larger than %d bytes", endpoint, maxStreamLine))
			}
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := c.streamEvent(endpoint, line, each); perr != nil {
				return c.streamErr(endpoint, perr)
			}
		}
		line = line[:0]
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err == io.EOF {
				return c.streamErr(endpoint, fmt.Errorf("argocd %s: the server ended the stream", endpoint))
			}
			return c.streamErr(endpoint, fmt.Errorf("argocd %s: read: %w", endpoint, err))
		}
	}
}

// streamEvent reads one line of the stream and hands its event on.
func (c *Client) streamEvent(endpoint string, line []byte, each func(WatchEvent)) error {
	line = bytes.TrimSpace(line)
	// Server-sent events (an Accept of text/event-stream) carry the same
	// object after "data:"; other fields of that form say nothing here.
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		line = bytes.TrimSpace(rest)
	} else if line[0] != '{' {
		return nil
	}
	var l streamLine
	if err := json.Unmarshal(line, &l); err != nil {
		return fmt.Errorf("argocd %s: decode an event: %w", endpoint, err)
	}
	if l.Error != nil {
		return fmt.Errorf("argocd %s: the server stopped the stream: %s", endpoint, l.Error.Message)
	}
	ev := l.streamEvent
	if l.Result != nil {
		ev = *l.Result
	}
	switch ev.Type {
	case "ADDED", "MODIFIED", "DELETED":
	default:
		return fmt.Errorf("argocd %s: an event of type %q: want ADDED, MODIFIED or DELETED", endpoint, ev.Type)
	}
	app, rv, err := decodeWatchApp(ev.Application)
	if err != nil {
		return fmt.Errorf("argocd %s: %s event: %w", endpoint, ev.Type, err)
	}
	each(WatchEvent{Type: ev.Type, App: app, ResourceVersion: rv})
	return nil
}

func (c *Client) streamErr(endpoint string, err error) error {
	c.mu.Lock()
	c.errs[endpoint]++
	c.mu.Unlock()
	return err
}

// watchState is what a Watcher keeps in its client, so that
// ListApplications answers from the list it last read and the changes the
// stream reported since, without reading the list again.
type watchState struct {
	live   bool // a stream is open
	epoch  int  // counts the streams opened and closed: a gap between two loses changes
	listed int  // the epoch of the last list read whole while a stream was open (-1: none)
	at     time.Time
	every  time.Duration // the list is read whole at least this often
	// changes are the applications changed since the last list, by
	// namespace/name; a zero Name is a deletion.
	changes map[string]AppSummary
	index   map[string]int // where each application is in listed, built on need
	served  int            // lists answered from the stream
	events  int            // events read
}

// watchListStart notes a list read whole begins; the caller holds mu.
func (c *Client) watchListStart() (epoch int, live bool) {
	w := c.watch
	if w == nil {
		return 0, false
	}
	// What changed before the list is in it.
	w.changes, w.index = map[string]AppSummary{}, nil
	return w.epoch, w.live
}

// watchListed notes a list read whole ended; the caller holds mu.
func (c *Client) watchListed(epoch int, live bool) {
	if w := c.watch; w != nil && live && w.live && w.epoch == epoch {
		w.listed, w.at = epoch, time.Now()
	}
}

// fromWatch answers a list from the last one and the stream's changes
// since, when a stream has been open without a break since that list was
// read and it is recent enough; false when the list must be read.
func (c *Client) fromWatch() ([]AppSummary, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.only != nil {
		return c.only, true
	}
	w := c.watch
	if w == nil || !w.live || w.listed != w.epoch || c.listed == nil || time.Since(w.at) >= w.every {
		return nil, false
	}
	if len(w.changes) > 0 {
		c.listed = applyChanges(c.listed, w.changes)
		w.changes, w.index = map[string]AppSummary{}, nil
	}
	w.served++
	c.calls["WATCH /api/v1/applications"]++
	return c.listed, true
}

// applyChanges is listed with changes applied, in a new slice (the old
// one is the callers').
func applyChanges(listed []AppSummary, changes map[string]AppSummary) []AppSummary {
	out := make([]AppSummary, 0, len(listed)+len(changes))
	done := map[string]bool{}
	for _, a := range listed {
		k := a.Namespace + "/" + a.Name
		if ch, ok := changes[k]; ok {
			done[k] = true
			if ch.Name == "" {
				continue
			}
			a = ch
		}
		out = append(out, a)
	}
	var added []AppSummary
	for k, ch := range changes {
		if !done[k] && ch.Name != "" {
			added = append(added, ch)
		}
	}
	slices.SortFunc(added, func(a, b AppSummary) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return slices.Clip(append(out, added...))
}

// WatchStats says what a client's watch has done.
type WatchStats struct {
	// Live says a stream is open and the list is answered from it.
	Live bool
	// Served counts the lists answered from the stream.
	Served int
	// Events counts the events read from the streams.
	Events int
}

// WatchStats returns what the client's watch has done.
func (c *Client) WatchStats() WatchStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watch == nil {
		return WatchStats{}
	}
	return WatchStats{Live: c.watch.live && c.watch.listed == c.watch.epoch, Served: c.watch.served, Events: c.watch.events}
}

// stableStream is how long a stream must have stayed open for its break
// to start the backoff over.
const stableStream = 30 * time.Second

// seenApp is what a Watcher remembers of an application from the stream.
type seenApp struct {
	digest   [16]byte
	status   string
	finished time.Time
}

// Watcher follows an instance's application watch stream: each change
// feeds the client's list (ListApplications reads the list whole only
// after a break in the stream, and at least every Relist), and an
// application that turns OutOfSync after a sync is handed to OutOfSync at
// once. A dropped stream is opened again after an exponential backoff with
// jitter, from the last resourceVersion; a refused one leaves the bot
// polling the list, and is asked again after RefusedRetry.
type Watcher struct {
	Client *Client
	// Instance names the Argo CD instance in the log.
	Instance string
	// OutOfSync is told each application that turned OutOfSync after a
	// successful sync (or whose OutOfSync follows a newer sync).
	OutOfSync func(AppSummary)
	// State is told each change of the stream's state: "streaming",
	// "reconnecting" or "refused".
	State func(state string)
	// Log gets a line per break and refusal (nil: discard).
	Log *slog.Logger
	// MinBackoff and MaxBackoff bound the wait before a stream is opened
	// again (defaults 1s and 2m); each break doubles it, a stream that
	// delivered events or stayed open 30s resets it.
	MinBackoff, MaxBackoff time.Duration
	// RefusedRetry is how long after a refusal the stream is asked again
	// (default 10m).
	RefusedRetry time.Duration
	// Relist is how long the list is answered from the stream at most
	// before it is read whole again (default 1h).
	Relist time.Duration

	seen map[string]seenApp
}

func (w *Watcher) state(s string) {
	if w.State != nil {
		w.State(s)
	}
}

// Run follows the stream until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	log := w.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	minB, maxB, refused, relist := w.MinBackoff, w.MaxBackoff, w.RefusedRetry, w.Relist
	if minB <= 0 {
		minB = time.Second
	}
	if maxB < minB {
		maxB = max(2*time.Minute, minB)
	}
	if refused <= 0 {
		refused = 10 * time.Minute
	}
	if relist <= 0 {
		relist = time.Hour
	}
	c := w.Client
	c.mu.Lock()
	c.watch = &watchState{listed: -1, every: relist, changes: map[string]AppSummary{}}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.watch = nil
		c.mu.Unlock()
	}()
	w.seen = map[string]seenApp{}
	rv, backoff := "", minB
	for {
		got := false
		var since time.Time
		err := c.Stream(ctx, rv, func() {
			since = time.Now()
			c.mu.Lock()
			c.watch.live = true
			c.watch.epoch++
			c.mu.Unlock()
			w.state("streaming")
			log.Info("following Argo CD's application watch stream", "instance", w.Instance, "resource_version", rv)
		}, func(ev WatchEvent) {
			got = true
			if ev.ResourceVersion != "" {
				rv = ev.ResourceVersion
			}
			w.event(ev)
		})
		c.mu.Lock()
		if c.watch.live {
			c.watch.live = false
			c.watch.epoch++
		}
		c.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		wait := backoff
		if errors.Is(err, ErrStreamRefused) {
			w.state("refused")
			log.Warn("Argo CD refuses the application watch stream: polling the list on the schedule", "instance", w.Instance, "retry_in", refused.String(), "error", err.Error())
			wait, rv, backoff = refused, "", minB
			w.seen = map[string]seenApp{}
		} else {
			w.state("reconnecting")
			// A stream that carried events, or stayed open a while (a
			// proxy's idle timeout on a quiet fleet), starts the backoff over.
			if got || (!since.IsZero() && time.Since(since) > stableStream) {
				backoff = minB
				wait = minB
			}
			// Jitter: up to half the wait again, so that many bots do not
			// come back at once.
			wait += rand.N(wait/2 + 1)
			log.Warn("the application watch stream broke: opening it again", "instance", w.Instance, "in", wait.Round(time.Millisecond).String(), "resume_from", rv, "error", fmt.Sprint(err))
			backoff = min(2*backoff, maxB)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// event records one change, and hands on an application that turned
// OutOfSync after a sync.
func (w *Watcher) event(ev WatchEvent) {
	a := ev.App
	key := a.Namespace + "/" + a.Name
	prev, known := w.seen[key]
	c := w.Client
	c.mu.Lock()
	c.watch.events++
	c.mu.Unlock()
	if ev.Type == "DELETED" {
		delete(w.seen, key)
		c.mu.Lock()
		c.watch.changes[key] = AppSummary{}
		c.mu.Unlock()
		return
	}
	if known && prev.digest == a.Listed {
		return // nothing the list shows changed (a reconciliation's time)
	}
	w.seen[key] = seenApp{digest: a.Listed, status: a.SyncStatus, finished: a.OperationFinished}
	c.mu.Lock()
	if known || !c.sameAsListed(key, a) {
		c.watch.changes[key] = a
	}
	c.mu.Unlock()
	if !known || w.OutOfSync == nil {
		return // first sight: the list read whole covers it
	}
	if a.SyncStatus == "OutOfSync" && a.OperationPhase == "Succeeded" && (prev.status != "OutOfSync" || !prev.finished.Equal(a.OperationFinished)) {
		w.OutOfSync(a)
	}
}

// sameAsListed says whether the last list shows a as it is (its digest
// aside, which the list takes of other bytes); the caller holds mu.
func (c *Client) sameAsListed(key string, a AppSummary) bool {
	w := c.watch
	if w.index == nil {
		w.index = make(map[string]int, len(c.listed))
		for i, l := range c.listed {
			w.index[l.Namespace+"/"+l.Name] = i
		}
	}
	i, ok := w.index[key]
	if !ok {
		return false
	}
	l := c.listed[i]
	l.Listed = a.Listed
	return l == a
}

// Only returns a client that lists the one application namespace/name,
// as the open stream or the list read under it shows it, and reads
// everything else as c does (a unit of work diagnoses one application with
// it); false when the open stream does not know it. Without an open stream
// (no Watcher, or a refused or broken one: an Argo CD Notifications
// delivery) the last list is stale, so the client reads that application
// again from argocd-server when it lists.
func (c *Client) Only(namespace, name string) (*Client, bool) {
	key := namespace + "/" + name
	c.mu.Lock()
	defer c.mu.Unlock()
	view := func(only []AppSummary, fresh [2]string) *Client {
		return &Client{filter: c.filter, base: c.base, token: c.token, http: c.http, retries: c.retries, backoff: c.backoff, log: c.log,
			calls: map[string]int{}, errs: map[string]int{}, only: only, fresh: fresh}
	}
	w := c.watch
	if w == nil || !w.live || w.listed != w.epoch || c.listed == nil {
		return view(nil, [2]string{namespace, name}), true
	}
	if ch, ok := w.changes[key]; ok {
		if ch.Name == "" {
			return nil, false // deleted
		}
		return view([]AppSummary{ch}, [2]string{}), true
	}
	for _, a := range c.listed {
		if a.Namespace == namespace && a.Name == name {
			return view([]AppSummary{a}, [2]string{}), true
		}
	}
	return nil, false
}

// readOne lists the one application a client from Only reads afresh: its
// summary from argocd-server's GET of it, decoded as a stream event is.
func (c *Client) readOne(ctx context.Context) ([]AppSummary, error) {
	ns, name := c.fresh[0], c.fresh[1]
	var raw json.RawMessage
	if err := c.get(ctx, "GET /api/v1/applications/{name}", appPath(name, ""), appQuery(ns), &raw); err != nil {
		return nil, err
	}
	a, _, err := decodeWatchApp(raw)
	if err != nil {
		return nil, fmt.Errorf("argocd: application %s/%s: %w", ns, name, err)
	}
	return []AppSummary{a}, nil
}
