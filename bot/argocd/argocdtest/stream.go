package argocdtest

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/driftfix/driftfix/bot/drift"
)

// The application watch stream, served as argocd-server serves
// GET /api/v1/stream/applications: one {"result":{"type":...,
// "application":{...}}} object a line, flushed as each is written. Without
// a resourceVersion every application is sent first as ADDED (sorted by
// namespace/name); with one, only changes from then on, and none of an
// application whose resourceVersion is below it. Nothing missed while no
// stream was open is sent again.

// streams are the open streams and the resourceVersions the server gave.
type streams struct {
	subs    map[chan watchEvent]struct{}
	drop    chan struct{} // closed to end every open stream (DropStreams)
	refuse  int           // the status the stream answers (0: serve it)
	version int           // the last resourceVersion given
	rv      map[string]int
	opened  int
	queries []string
	closed  bool
}

type watchEvent struct {
	typ string
	app drift.Object
	rv  int
}

// changed gives an application a new resourceVersion and sends it to the
// open streams; the caller holds mu.
func (s *Server) changed(key, typ string, app drift.Object) {
	st := &s.streams
	st.version++
	if st.opened == 0 {
		// Before any stream, an application's version is not kept: the
		// first stream sends it as 0 (a fleet's benchmark holds no map of
		// 50,000 versions it never serves).
		return
	}
	if st.rv == nil {
		st.rv = map[string]int{}
	}
	st.rv[key] = st.version
	for ch := range st.subs {
		select {
		case ch <- watchEvent{typ, app, st.version}:
		default: // a stream that does not read is dropped
			delete(st.subs, ch)
			close(ch)
		}
	}
}

// Close ends the open watch streams, refuses new ones, and shuts the
// server down (an open stream would hold httptest's Close).
func (s *Server) Close() {
	s.mu.Lock()
	s.streams.closed = true
	s.mu.Unlock()
	s.DropStreams()
	s.Server.Close()
}

// RefuseStream makes the watch stream answer code (404, 403, 501, ...);
// 0 serves it again.
func (s *Server) RefuseStream(code int) { s.mu.Lock(); s.streams.refuse = code; s.mu.Unlock() }

// DropStreams ends every open watch stream, as a restarted argocd-server
// or a proxy's idle timeout does.
func (s *Server) DropStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams.drop != nil {
		close(s.streams.drop)
		s.streams.drop = nil
	}
}

// StreamsOpened counts the watch streams the server has opened.
func (s *Server) StreamsOpened() int { s.mu.Lock(); defer s.mu.Unlock(); return s.streams.opened }

// StreamQueries are the query strings the watch streams were opened with.
func (s *Server) StreamQueries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.streams.queries)
}

// ResourceVersion is the last resourceVersion the server gave.
func (s *Server) ResourceVersion() int { s.mu.Lock(); defer s.mu.Unlock(); return s.streams.version }

// withVersion is app with its resourceVersion set, the app itself unchanged.
func withVersion(app drift.Object, rv int) drift.Object {
	out := maps.Clone(app)
	meta := maps.Clone(drift.Map(app, "metadata"))
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = strconv.Itoa(rv)
	out["metadata"] = meta
	return out
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sel, err := labels.Parse(q.Get("selector"))
	if err != nil {
		writeErr(w, http.StatusBadRequest, "error parsing the selector: "+err.Error())
		return
	}
	min := 0
	from := q.Get("resourceVersion")
	if from != "" {
		if min, err = strconv.Atoi(from); err != nil {
			min = 0
		}
	}
	projects := append(q["projects"], q["project"]...)
	appNS, name := q.Get("appNamespace"), q.Get("name")
	match := func(app drift.Object) bool {
		ls := map[string]string{}
		for lk, lv := range drift.Map(app, "metadata", "labels") {
			ls[lk], _ = lv.(string)
		}
		return sel.Matches(labels.Set(ls)) && (len(projects) == 0 || slices.Contains(projects, drift.Str(app, "spec", "project"))) &&
			(appNS == "" || drift.Str(app, "metadata", "namespace") == appNS) && (name == "" || drift.Str(app, "metadata", "name") == name)
	}
	s.mu.Lock()
	if s.streams.closed {
		s.mu.Unlock()
		writeErr(w, http.StatusServiceUnavailable, "the server is shutting down")
		return
	}
	if code := s.streams.refuse; code != 0 {
		s.mu.Unlock()
		writeErr(w, code, http.StatusText(code))
		return
	}
	st := &s.streams
	if st.subs == nil {
		st.subs = map[chan watchEvent]struct{}{}
	}
	if st.drop == nil {
		st.drop = make(chan struct{})
	}
	drop := st.drop
	ch := make(chan watchEvent, 4096)
	st.subs[ch] = struct{}{}
	st.opened++
	st.queries = append(st.queries, r.URL.RawQuery)
	var first []watchEvent
	if from == "" || name != "" {
		keys := slices.Sorted(maps.Keys(s.apps))
		for _, k := range keys {
			first = append(first, watchEvent{"ADDED", s.apps[k].Application, st.rv[k]})
		}
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if _, ok := st.subs[ch]; ok {
			delete(st.subs, ch)
		}
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(ev watchEvent) bool {
		if !match(ev.app) || ev.rv < min {
			return true
		}
		b, err := json.Marshal(map[string]any{"result": map[string]any{"type": ev.typ, "application": withVersion(ev.app, ev.rv)}})
		if err != nil {
			return false
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	for _, ev := range first {
		if !send(ev) {
			return
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-drop:
			return
		case ev, ok := <-ch:
			if !ok || !send(ev) {
				return
			}
		case <-time.After(time.Hour):
		}
	}
}
