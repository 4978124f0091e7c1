package githubtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Webhooks: as GitHub does for an App whose webhook is active, the
// emulator POSTs an event to the webhook URL when a person acts (a pull
// request opened, a branch pushed, a comment written, an issue edited), with
// GitHub's headers (X-GitHub-Event, X-GitHub-Delivery, X-GitHub-Hook-ID, the
// installation target headers) and signatures (X-Hub-Signature-256 and the
// older X-Hub-Signature), one delivery at a time in order. A delivery that
// gets no answer or a 5xx is sent again, with the same delivery id, after a
// backoff (WebhookRetries times); a 4xx is the receiver's refusal and is
// not. The webhook is set by SetWebhook, or by the manifest flow when the
// manifest's hook is active (with the secret the conversion hands out).

// Delivery is one webhook delivery and what the receiver answered.
type Delivery struct {
	ID, Event, Action string
	Payload           []byte
	// Statuses are the receiver's status codes, one per attempt (0: no answer).
	Statuses []int
	// Answer is the body of the last answer.
	Answer string
	// Took is how long the last attempt took to be answered.
	Took time.Duration
}

// Status is the last attempt's status code.
func (d Delivery) Status() int {
	if len(d.Statuses) == 0 {
		return 0
	}
	return d.Statuses[len(d.Statuses)-1]
}

type webhook struct {
	url, secret string
	id          int64
	events      map[string]bool // nil: every event
	client      *http.Client
}

// webhooks is the emulator's webhook state, kept apart from Server's.
type webhooks struct {
	mu         sync.Mutex
	hook       *webhook
	deliveries []*Delivery
	queue      chan *Delivery
	inflight   sync.WaitGroup
	seq        int64
}

var hooksOf sync.Map // *Server → *webhooks

func (s *Server) hooks() *webhooks {
	h, _ := hooksOf.LoadOrStore(s, &webhooks{})
	return h.(*webhooks)
}

// WebhookRetries is how many times a failed delivery is sent again;
// WebhookBackoff the wait before the first, doubled each time.
var (
	WebhookRetries = 2
	WebhookBackoff = 100 * time.Millisecond
)

// SetWebhook makes the emulator deliver events to url signed with secret;
// events limits them to those named (installation events always come), as
// an App's subscriptions do. An empty url stops deliveries.
func (s *Server) SetWebhook(url, secret string, events ...string) {
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	if url == "" {
		h.hook = nil
		return
	}
	var ev map[string]bool
	if len(events) > 0 {
		ev = map[string]bool{"installation": true, "installation_repositories": true, "ping": true}
		for _, e := range events {
			ev[e] = true
		}
	}
	h.hook = &webhook{url: url, secret: secret, id: 7000 + h.seq, events: ev, client: &http.Client{Timeout: 10 * time.Second}}
	if h.queue == nil {
		h.queue = make(chan *Delivery, 100000)
		go s.sendQueued(h)
	}
}

// Deliveries returns copies of the deliveries made so far, in order.
func (s *Server) Deliveries() []Delivery {
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Delivery, len(h.deliveries))
	for i, d := range h.deliveries {
		out[i] = *d
		out[i].Statuses = append([]int(nil), d.Statuses...)
	}
	return out
}

// WaitDeliveries waits until every event emitted so far is delivered (or
// given up on).
func (s *Server) WaitDeliveries() { s.hooks().inflight.Wait() }

// Deliver sends one event now, with a new delivery id, and returns how it
// was answered (after the redeliveries a failure gets). A test's own
// payload is sent as it is: an event the emulator would not emit, an
// older one captured before (see Event).
func (s *Server) Deliver(event string, payload any) (Delivery, error) {
	d, err := s.newDelivery(event, payload)
	if err != nil {
		return Delivery{}, err
	}
	if d == nil {
		return Delivery{}, fmt.Errorf("no webhook is set, or it is not subscribed to %s", event)
	}
	s.send(d)
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	return *d, nil
}

// Redeliver sends a delivery again with its id, as GitHub's "Redeliver" does.
func (s *Server) Redeliver(id string) (Delivery, error) {
	h := s.hooks()
	h.mu.Lock()
	var d *Delivery
	for _, x := range h.deliveries {
		if x.ID == id {
			d = x
		}
	}
	h.mu.Unlock()
	if d == nil {
		return Delivery{}, fmt.Errorf("no delivery %s", id)
	}
	s.send(d)
	h.mu.Lock()
	defer h.mu.Unlock()
	return *d, nil
}

// newDelivery records a delivery of event, or nil without a webhook for it.
func (s *Server) newDelivery(event string, payload any) (*Delivery, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	var a struct {
		Action string `json:"action"`
	}
	json.Unmarshal(body, &a)
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hook == nil || (h.hook.events != nil && !h.hook.events[event]) {
		return nil, nil
	}
	h.seq++
	d := &Delivery{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", time.Now().UnixNano()&0xffffffff, h.seq), Event: event, Action: a.Action, Payload: body}
	h.deliveries = append(h.deliveries, d)
	return d, nil
}

// emit queues an event for delivery in order; safe under s.mu.
func (s *Server) emit(event string, payload map[string]any) {
	d, err := s.newDelivery(event, payload)
	if err != nil || d == nil {
		return
	}
	h := s.hooks()
	h.inflight.Add(1)
	h.queue <- d
}

func (s *Server) sendQueued(h *webhooks) {
	for d := range h.queue {
		s.send(d)
		h.inflight.Done()
	}
}

// send delivers d, again after a backoff while it fails (no answer, 5xx).
func (s *Server) send(d *Delivery) {
	h := s.hooks()
	h.mu.Lock()
	hook := h.hook
	h.mu.Unlock()
	if hook == nil {
		return
	}
	wait := WebhookBackoff
	for attempt := 0; ; attempt++ {
		code, answer, took := hook.post(s.AppID, d)
		h.mu.Lock()
		d.Statuses, d.Answer, d.Took = append(d.Statuses, code), answer, took
		h.mu.Unlock()
		if (code != 0 && code < 500) || attempt >= WebhookRetries {
			return
		}
		time.Sleep(wait)
		wait *= 2
	}
}

func (w *webhook) post(appID int64, d *Delivery) (int, string, time.Duration) {
	req, err := http.NewRequest(http.MethodPost, w.url, bytes.NewReader(d.Payload))
	if err != nil {
		return 0, err.Error(), 0
	}
	m256 := hmac.New(sha256.New, []byte(w.secret))
	m256.Write(d.Payload)
	m1 := hmac.New(sha1.New, []byte(w.secret))
	m1.Write(d.Payload)
	for k, v := range map[string]string{
		"Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/emulated",
		"X-GitHub-Event": d.Event, "X-GitHub-Delivery": d.ID, "X-GitHub-Hook-ID": strconv.FormatInt(w.id, 10),
		"X-GitHub-Hook-Installation-Target-Type": "integration", "X-GitHub-Hook-Installation-Target-ID": strconv.FormatInt(appID, 10),
		"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(m256.Sum(nil)), "X-Hub-Signature": "sha1=" + hex.EncodeToString(m1.Sum(nil)),
	} {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, err.Error(), time.Since(start)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, strings.TrimSpace(string(b)), time.Since(start)
}

// The payloads, in the shape GitHub sends (the fields driftfix and most
// receivers read). Each builder runs under s.mu.

func (s *Server) repoPayload(r *repo) map[string]any {
	return map[string]any{"id": 1 + len(r.owner)*1000 + len(r.name), "name": r.name, "full_name": r.owner + "/" + r.name, "private": false,
		"html_url": s.Server.URL + "/" + r.owner + "/" + r.name, "clone_url": s.Server.URL + "/" + r.owner + "/" + r.name + ".git",
		"default_branch": "main", "owner": map[string]any{"login": r.owner, "type": "Organization"}}
}

func (s *Server) envelope(r *repo, action, sender string) map[string]any {
	typ := "User"
	if strings.HasSuffix(sender, "[bot]") {
		typ = "Bot"
	}
	out := map[string]any{"repository": s.repoPayload(r), "sender": map[string]any{"login": sender, "type": typ},
		"installation": map[string]any{"id": s.installs[r.owner]}}
	if action != "" {
		out["action"] = action
	}
	return out
}

func (s *Server) prPayload(r *repo, p *PullRequest, action string) map[string]any {
	pr := s.prJSON(r, p)
	pr["updated_at"] = time.Now().UTC().Format(time.RFC3339)
	e := s.envelope(r, action, p.Author)
	e["number"], e["pull_request"] = p.Number, pr
	return e
}

// Event is the payload the emulator sends for a pull request's event
// (opened, synchronize, reopened, ready_for_review, ...) as the pull
// request is now, to be delivered later with Deliver: an event that
// arrives late.
func (s *Server) Event(owner, name string, number int, action string) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, p := s.pr(owner, name, number)
	if p == nil {
		return nil, fmt.Errorf("no pull request %s/%s#%d", owner, name, number)
	}
	return s.prPayload(r, p, action), nil
}

// RerequestCheck is a person pressing "Re-run" on a check run: the
// check_run rerequested event, with the open pull requests of its head.
func (s *Server) RerequestCheck(owner, name string, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return fmt.Errorf("no repository %s/%s", owner, name)
	}
	for _, c := range r.checks {
		if c.ID != id {
			continue
		}
		var prs []any
		for _, p := range r.prs {
			if p.State == "open" && p.HeadRepo == "" && s.branchHead(r, p.Head) == c.HeadSHA {
				prs = append(prs, map[string]any{"number": p.Number, "head": map[string]any{"ref": p.Head, "sha": c.HeadSHA}, "base": map[string]any{"ref": p.Base}})
			}
		}
		e := s.envelope(r, "rerequested", "person")
		e["check_run"] = map[string]any{"id": c.ID, "name": c.Name, "head_sha": c.HeadSHA, "status": c.Status, "conclusion": c.Conclusion,
			"app": map[string]any{"id": c.AppID}, "pull_requests": prs}
		s.emit("check_run", e)
		return nil
	}
	return fmt.Errorf("no check run %d in %s/%s", id, owner, name)
}

func (s *Server) branchHead(r *repo, branch string) string {
	ref, err := r.git.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}

// hookOpened emits pull_request opened; under s.mu.
func (s *Server) hookOpened(r *repo, p *PullRequest) {
	s.emit("pull_request", s.prPayload(r, p, "opened"))
}

// hookPushed emits push, and pull_request synchronize for each open pull
// request whose head is the branch; under s.mu.
func (s *Server) hookPushed(r *repo, branch, before, after, login string) {
	e := s.envelope(r, "", login)
	e["ref"], e["before"], e["after"], e["created"], e["deleted"] = "refs/heads/"+branch, before, after, before == "", false
	e["pusher"] = map[string]any{"name": login}
	s.emit("push", e)
	for _, p := range r.prs {
		if p.State == "open" && p.HeadRepo == "" && p.Head == branch {
			s.emit("pull_request", s.prPayload(r, p, "synchronize"))
		}
	}
}

// hookCommented emits issue_comment created; under s.mu.
func (s *Server) hookCommented(r *repo, number int, c Comment) {
	e := s.envelope(r, "created", c.Author)
	now := time.Now().UTC().Format(time.RFC3339)
	issue := map[string]any{"number": number, "user": map[string]any{"login": ""}}
	for _, p := range r.prs {
		if p.Number == number {
			issue["pull_request"] = map[string]any{"url": s.API + "repos/" + r.owner + "/" + r.name + "/pulls/" + strconv.Itoa(number)}
			issue["user"] = map[string]any{"login": p.Author}
		}
	}
	e["issue"] = issue
	e["comment"] = map[string]any{"id": c.ID, "body": c.Body, "author_association": c.Association, "created_at": now, "updated_at": now,
		"user": e["sender"]}
	s.emit("issue_comment", e)
}

// hookIssueEdited emits issues edited; under s.mu.
func (s *Server) hookIssueEdited(r *repo, i *Issue, login string) {
	e := s.envelope(r, "edited", login)
	is := s.issueJSON(r, i)
	is["updated_at"] = time.Now().UTC().Format(time.RFC3339)
	e["issue"] = is
	s.emit("issues", e)
}
