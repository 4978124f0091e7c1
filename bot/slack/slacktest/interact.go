package slacktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// responsePath is where the emulator's response URLs live.
const responsePath = "/response/"

// Response is one message posted to a response URL.
type Response struct {
	// URL is the response URL it was posted to.
	URL string
	// Body is the JSON posted (response_type, replace_original, text).
	Body map[string]any
}

// SetUserGroup makes usergroups.users.list answer members for group.
func (s *Server) SetUserGroup(group string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = map[string][]string{}
	}
	s.groups[group] = members
}

// ResponseURL returns a new response URL, as Slack puts one in each
// interaction payload.
func (s *Server) ResponseURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nresp++
	return fmt.Sprintf("%s%sT0/%d/%s", s.URL, responsePath, s.nresp, strconv.Itoa(1000+s.nresp))
}

// Responses returns the messages posted to response URLs so far.
func (s *Server) Responses() []Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Response(nil), s.responses...)
}

// groupMembers answers usergroups.users.list: the token must be the bot's.
func (s *Server) groupMembers(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+s.Token && r.Form.Get("token") != s.Token {
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	members, ok := s.groups[r.Form.Get("usergroup")]
	if !ok {
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "no_such_subteam"})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "users": append([]string{}, members...)})
}

// respond records a post to a response URL; Slack takes JSON there.
func (s *Server) respond(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.responses = append(s.responses, Response{URL: s.URL + r.URL.Path, Body: body})
	s.mu.Unlock()
	w.Write([]byte("ok"))
}

// Sign returns Slack's signature of body sent at ts with secret:
// v0= and the hex HMAC-SHA256 of "v0:<unix ts>:<body>".
func Sign(secret string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts.Unix())
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// BlockAction is a button press as an interaction sends it.
type BlockAction struct {
	User        string // the Slack user ID who pressed
	ActionID    string
	Value       string
	ResponseURL string // "" for a new one of this server's
}

// Payload is the block_actions payload Slack sends for a press.
func (s *Server) Payload(a BlockAction) []byte {
	if a.ResponseURL == "" {
		a.ResponseURL = s.ResponseURL()
	}
	p := map[string]any{
		"type":         "block_actions",
		"user":         map[string]any{"id": a.User, "username": strings.ToLower(a.User), "team_id": "T0"},
		"api_app_id":   "A0",
		"team":         map[string]any{"id": "T0", "domain": "example"},
		"container":    map[string]any{"type": "message_attachment", "message_ts": "1700000000.000001", "attachment_id": 1, "channel_id": "C0", "is_ephemeral": false},
		"trigger_id":   "1.2.3",
		"channel":      map[string]any{"id": "C0", "name": "drift"},
		"response_url": a.ResponseURL,
		"actions": []map[string]any{{
			"type": "button", "action_id": a.ActionID, "block_id": "b1", "value": a.Value,
			"text": map[string]any{"type": "plain_text", "text": a.ActionID}, "action_ts": "1700000000.000002",
		}},
	}
	b, _ := json.Marshal(p)
	return b
}

// Interact sends an interactivity request to target as Slack does: the
// payload form field, signed with secret at ts (X-Slack-Signature,
// X-Slack-Request-Timestamp).
func Interact(client *http.Client, target, secret string, ts time.Time, payload []byte) (*http.Response, error) {
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	return InteractRaw(client, target, strconv.FormatInt(ts.Unix(), 10), Sign(secret, ts, body), body)
}

// InteractRaw sends body with the given timestamp and signature headers,
// for requests Slack would not send (forged, replayed, oversized).
func InteractRaw(client *http.Client, target, ts, signature string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", signature)
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	return client.Do(req)
}
