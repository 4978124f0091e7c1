package events

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// notifyRecorder is a Handler that keeps the work it is given.
type notifyRecorder struct {
	mu   sync.Mutex
	done []Work
}

func (r *notifyRecorder) Do(_ context.Context, w Work) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, w)
	return nil
}

// TestNotifications: Argo CD Notifications' webhook with the shared
// secret becomes an App unit for the application it names; a missing or
// wrong secret is refused with 401 before anything is queued, a body that
// is not the template's with 400, and an application that is not
// OutOfSync is acknowledged and left alone.
func TestNotifications(t *testing.T) {
	rec := &notifyRecorder{}
	q := &Queue{Handler: rec}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	n := &Notifications{Secret: func() string { return "s3cret" }, Instances: func() []string { return []string{"main"} }, Queue: q}
	srv := httptest.NewServer(n)
	defer srv.Close()
	body := `{"app":"web","namespace":"argocd","syncStatus":"OutOfSync","finishedAt":"2026-12-07T09:00:00Z","trigger":"driftfix-out-of-sync"}`
	for _, tc := range []struct {
		name, secret, body string
		code               int
		says               string
	}{
		{"no secret", "", body, http.StatusUnauthorized, "no X-Driftfix-Secret header"},
		{"wrong secret", "s3cret-not", body, http.StatusUnauthorized, "does not match"},
		{"a prefix of it", "s3cre", body, http.StatusUnauthorized, "does not match"},
		{"not the template's", "s3cret", `{"application":"web"}`, http.StatusBadRequest, "not the JSON"},
		{"unknown instance", "s3cret", `{"instance":"other","app":"web","namespace":"argocd","syncStatus":"OutOfSync"}`, http.StatusBadRequest, `instance "other"`},
		{"bad time", "s3cret", `{"app":"web","namespace":"argocd","syncStatus":"OutOfSync","finishedAt":"yesterday"}`, http.StatusBadRequest, "RFC 3339"},
		{"synced", "s3cret", `{"app":"web","namespace":"argocd","syncStatus":"Synced"}`, http.StatusAccepted, "ignored"},
		{"out of sync", "s3cret", body, http.StatusAccepted, "re-check application main/argocd/web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/argocd", strings.NewReader(tc.body))
			if tc.secret != "" {
				req.Header.Set(NotifyHeader, tc.secret)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.says) {
				t.Fatalf("%d %q, want %d saying %q", resp.StatusCode, b, tc.code, tc.says)
			}
		})
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && !q.Idle(); time.Sleep(5 * time.Millisecond) {
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	if len(rec.done) != 1 || rec.done[0].Kind != App || rec.done[0].App != "main/argocd/web" || !rec.done[0].At.Equal(want) {
		t.Fatalf("work done %+v, want one App unit for main/argocd/web synced at %s", rec.done, want)
	}
}

// FuzzNotification: no body makes the reader panic, and work it makes
// names an instance, namespace and application.
func FuzzNotification(f *testing.F) {
	f.Add([]byte(`{"app":"web","namespace":"argocd","syncStatus":"OutOfSync","finishedAt":"2026-12-07T09:00:00Z"}`))
	f.Add([]byte(`{"instance":"main","app":"a","namespace":"b","syncStatus":"OutOfSync"}`))
	n := &Notifications{Instances: func() []string { return []string{"main"} }}
	f.Fuzz(func(t *testing.T, body []byte) {
		w, err := n.work(body)
		if err == nil && w.Kind == App && strings.Count(w.App, "/") < 2 {
			t.Fatalf("work %+v names no application", w)
		}
	})
}
