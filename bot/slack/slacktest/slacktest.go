// Package slacktest serves Slack's chat.postMessage on 127.0.0.1: it checks
// the bot token, answers 429 with Retry-After, 5xx or drops the connection
// when told to, and records every post with its form fields (channel, text,
// attachments, thread_ts). It also serves usergroups.users.list and the
// response URLs of interactions, and sends signed interactivity requests
// as Slack does (interact.go).
package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Server is the emulated Slack Web API.
type Server struct {
	*httptest.Server
	Token string

	mu      sync.Mutex
	posts   []map[string]string
	limited int
	n       int
	// fail5xx answers the requests that come after failAfter accepted posts
	// with failCode, failCount times; drop closes the next connections.
	failAfter, failCount, failCode int
	drop                           int
	attempts                       int

	groups    map[string][]string // user group ID to members
	responses []Response
	nresp     int
}

// Attempts counts every request, answered or not.
func (s *Server) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

// FailAfter makes the requests that come once after more posts were
// accepted answer code (500, 502, 503), count times in a row.
func (s *Server) FailAfter(after, count, code int) {
	s.mu.Lock()
	s.failAfter, s.failCount, s.failCode = len(s.posts)+after, count, code
	s.mu.Unlock()
}

// Drop makes the next n requests end without an answer (the connection closes).
func (s *Server) Drop(n int) {
	s.mu.Lock()
	s.drop += n
	s.mu.Unlock()
}

// NewServer starts a server accepting token.
func NewServer(token string) *Server {
	s := &Server{Token: token}
	s.Server = httptest.NewServer(s)
	return s
}

// SetToken makes the server accept only token from now on (a rotation).
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	s.Token = token
	s.mu.Unlock()
}

// RateLimit makes the next n posts answer 429 with Retry-After: 1.
func (s *Server) RateLimit(n int) {
	s.mu.Lock()
	s.limited += n
	s.mu.Unlock()
}

// Posts returns the posts accepted so far.
func (s *Server) Posts() []map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]string(nil), s.posts...)
}

// ServeHTTP answers chat.postMessage, usergroups.users.list and posts to
// response URLs.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/usergroups.users.list":
		s.groupMembers(w, r)
		return
	case strings.HasPrefix(r.URL.Path, responsePath):
		s.respond(w, r)
		return
	case r.URL.Path != "/chat.postMessage":
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	if s.drop > 0 {
		s.drop--
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
	}
	if s.failCount > 0 && len(s.posts) >= s.failAfter {
		s.failCount--
		http.Error(w, "upstream unavailable", s.failCode)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+s.Token && r.Form.Get("token") != s.Token {
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	if s.limited > 0 {
		s.limited--
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "ratelimited"})
		return
	}
	post := map[string]string{}
	for k := range r.Form {
		post[k] = r.Form.Get(k)
	}
	s.posts = append(s.posts, post)
	s.n++
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": post["channel"], "ts": fmt.Sprintf("1700000000.%06d", s.n)})
}
