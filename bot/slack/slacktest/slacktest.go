// Package slacktest serves Slack's chat.postMessage on 127.0.0.1: it checks
// the bot token, answers 429 with Retry-After when told to, and records
// every post with its form fields (channel, text, attachments, thread_ts).
package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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
}

// NewServer starts a server accepting token.
func NewServer(token string) *Server {
	s := &Server{Token: token}
	s.Server = httptest.NewServer(s)
	return s
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

// ServeHTTP answers chat.postMessage.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/chat.postMessage" {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	defer s.mu.Unlock()
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
