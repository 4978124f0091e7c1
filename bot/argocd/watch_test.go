package argocd

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
)

// watchApp is an application synced at finished, with its sync status.
func watchApp(name, status string, finished time.Time) *drift.Snapshot {
	return &drift.Snapshot{Application: drift.Object{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": "argocd"},
		"spec":     map[string]any{"project": "shop", "source": map[string]any{"repoURL": "https://git.example.com/shop.git", "targetRevision": "main"}},
		"status": map[string]any{"sync": map[string]any{"status": status, "revision": "abc"},
			"operationState": map[string]any{"phase": "Succeeded", "finishedAt": finished.UTC().Format(time.RFC3339)}},
	}}
}

// watching runs a Watcher on c until the test ends and returns what it
// handed on and the states it went through.
type watching struct {
	mu     sync.Mutex
	out    []string
	states []string
}

func (w *watching) got() ([]string, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.out...), append([]string(nil), w.states...)
}

func startWatcher(t *testing.T, c *Client) *watching {
	t.Helper()
	seen := &watching{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w := &Watcher{Client: c, Instance: "main", MinBackoff: 20 * time.Millisecond, MaxBackoff: 80 * time.Millisecond, RefusedRetry: time.Hour,
		OutOfSync: func(a AppSummary) {
			seen.mu.Lock()
			seen.out = append(seen.out, a.Namespace+"/"+a.Name)
			seen.mu.Unlock()
		},
		State: func(s string) { seen.mu.Lock(); seen.states = append(seen.states, s); seen.mu.Unlock() }}
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return seen
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("not within 5s: %s", what)
}

// TestWatchTurnsOutOfSync: an application that turns OutOfSync after a
// sync is handed on as the stream reports it; one that stays Synced, or
// changes nothing the list shows, is not; and the list is then answered
// from the stream, the change in it, without reading the list again.
func TestWatchTurnsOutOfSync(t *testing.T) {
	synced := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	srv := argocdtest.NewServer(token, watchApp("web", "Synced", synced), watchApp("api", "Synced", synced))
	t.Cleanup(srv.Close) // after the watcher stops
	// A call's timeout does not cut the stream.
	c := client(t, srv.URL, func(cfg *Config) { cfg.Timeout = 300 * time.Millisecond })
	seen := startWatcher(t, c)
	eventually(t, "the stream opens", func() bool { return srv.StreamsOpened() == 1 })
	if _, err := c.ListApplications(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the list is answered from the stream", func() bool { return c.WatchStats().Live })
	time.Sleep(400 * time.Millisecond) // past the call timeout

	later := synced.Add(time.Hour)
	srv.Add(watchApp("web", "OutOfSync", later))
	srv.Add(watchApp("api", "Synced", later))
	eventually(t, "web is handed on", func() bool { out, _ := seen.got(); return len(out) == 1 })
	if out, _ := seen.got(); out[0] != "argocd/web" {
		t.Fatalf("handed on %v, want argocd/web", out)
	}
	apps, err := c.ListApplications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Calls()["GET /api/v1/applications"]; n != 1 {
		t.Errorf("the list was read %d times, want once (then answered from the stream)", n)
	}
	var web AppSummary
	for _, a := range apps {
		if a.Name == "web" {
			web = a
		}
	}
	if web.SyncStatus != "OutOfSync" || !web.OperationFinished.Equal(later) {
		t.Errorf("web from the stream: %+v, want OutOfSync synced at %s", web, later)
	}
	// The same application written again with nothing the list shows
	// changed (Argo CD writes reconciledAt on each reconciliation) is no news.
	again := watchApp("web", "OutOfSync", later)
	drift.Map(again.Application, "status")["reconciledAt"] = later.Add(3 * time.Minute).Format(time.RFC3339)
	srv.Add(again)
	srv.Remove("argocd", "api")
	eventually(t, "api's deletion reaches the list", func() bool {
		apps, _ := c.ListApplications(context.Background())
		return len(apps) == 1 && apps[0].Name == "web"
	})
	if out, _ := seen.got(); len(out) != 1 {
		t.Errorf("handed on %v, want web once", out)
	}
}

// TestWatchResumes: a dropped stream is opened again from the last
// resourceVersion it saw, the applications are not sent again, a change
// after it is handed on, and the list is read whole once after the break
// (what changed meanwhile is not sent again).
func TestWatchResumes(t *testing.T) {
	synced := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	srv := argocdtest.NewServer(token, watchApp("web", "Synced", synced))
	t.Cleanup(srv.Close) // after the watcher stops
	c := client(t, srv.URL, nil)
	seen := startWatcher(t, c)
	eventually(t, "the stream opens", func() bool { return srv.StreamsOpened() == 1 })
	c.ListApplications(context.Background())
	srv.Add(watchApp("web", "Synced", synced.Add(time.Minute)))
	rv := srv.ResourceVersion()
	eventually(t, "the stream serves the list", func() bool { return c.WatchStats().Live })
	time.Sleep(50 * time.Millisecond)
	srv.DropStreams()
	eventually(t, "the stream opens again", func() bool { return srv.StreamsOpened() == 2 })
	if q := srv.StreamQueries(); q[0] != "" || q[1] != "resourceVersion="+itoa(rv) {
		t.Fatalf("stream queries %q, want none then resourceVersion=%d", q, rv)
	}
	if c.WatchStats().Live {
		t.Fatal("after a break the list is answered from the stream: changes made meanwhile would be lost")
	}
	c.ListApplications(context.Background())
	if n := c.Calls()["GET /api/v1/applications"]; n != 2 {
		t.Errorf("the list was read %d times, want twice (once after the break)", n)
	}
	srv.Add(watchApp("web", "OutOfSync", synced.Add(2*time.Minute)))
	eventually(t, "web is handed on after the break", func() bool { out, _ := seen.got(); return len(out) == 1 })
	if _, states := seen.got(); strings.Join(states, ",") != "streaming,reconnecting,streaming" {
		t.Errorf("states %v", states)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestWatchRefused: a stream argocd-server (or a proxy) refuses leaves the
// list read whole each time, and says so; each refusal is
// ErrStreamRefused, a rejected token is not.
func TestWatchRefused(t *testing.T) {
	for _, code := range []int{http.StatusNotFound, http.StatusForbidden, http.StatusNotImplemented} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			srv := argocdtest.NewServer(token, watchApp("web", "Synced", time.Now()))
			t.Cleanup(srv.Close) // after the watcher stops
			srv.RefuseStream(code)
			c := client(t, srv.URL, nil)
			err := c.Stream(context.Background(), "", nil, func(WatchEvent) {})
			if !errors.Is(err, ErrStreamRefused) || !strings.Contains(err.Error(), itoa(code)) {
				t.Fatalf("Stream: %v, want ErrStreamRefused naming %d", err, code)
			}
			seen := startWatcher(t, c)
			eventually(t, "the watcher says it is refused", func() bool { _, s := seen.got(); return len(s) > 0 && s[0] == "refused" })
			for range 2 {
				if _, err := c.ListApplications(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if n := c.Calls()["GET /api/v1/applications"]; n != 2 {
				t.Errorf("the list was read %d times, want each time", n)
			}
		})
	}
	srv := argocdtest.NewServer(token)
	t.Cleanup(srv.Close) // after the watcher stops
	c := client(t, srv.URL, func(cfg *Config) { cfg.Token = "other" })
	if err := c.Stream(context.Background(), "", nil, func(WatchEvent) {}); !errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrStreamRefused) {
		t.Errorf("a rejected token: %v, want ErrUnauthorized", err)
	}
}

// TestStreamLines: the stream's lines as argocd-server writes them (a
// result, server-sent events, an error that ends it) and what is refused.
func TestStreamLines(t *testing.T) {
	app := `{"metadata":{"name":"web","namespace":"argocd","resourceVersion":"42"},"spec":{"project":"shop"},"status":{"sync":{"status":"OutOfSync"}}}`
	for _, tc := range []struct{ name, line, want, err string }{
		{"result", `{"result":{"type":"MODIFIED","application":` + app + `}}`, "MODIFIED argocd/web 42", ""},
		{"server-sent event", `data: {"result":{"type":"ADDED","application":` + app + `}}`, "ADDED argocd/web 42", ""},
		{"bare event", `{"type":"DELETED","application":` + app + `}`, "DELETED argocd/web 42", ""},
		{"error", `{"error":{"grpc_code":7,"http_code":403,"message":"permission denied"}}`, "", "permission denied"},
		{"unknown type", `{"result":{"type":"BOOKMARK","application":` + app + `}}`, "", `"BOOKMARK"`},
		{"no name", `{"result":{"type":"ADDED","application":{"metadata":{}}}}`, "", "no metadata.name"},
		{"not JSON", `{"result":`, "", "decode an event"},
		{"comment", `: keep-alive`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			err := (&Client{}).streamEvent("GET "+streamPath, []byte(tc.line), func(ev WatchEvent) {
				got = ev.Type + " " + ev.App.Namespace + "/" + ev.App.Name + " " + ev.ResourceVersion
			})
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzStreamLine: no line of a stream makes the reader panic, and an event
// it hands on names an application.
func FuzzStreamLine(f *testing.F) {
	f.Add([]byte(`{"result":{"type":"ADDED","application":{"metadata":{"name":"a"}}}}`))
	f.Add([]byte(`data: {"error":{"message":"x"}}`))
	f.Add([]byte(`{"type":"MODIFIED","application":{"metadata":{"name":"a"},"status":{"operationState":{"finishedAt":"x"}}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(strings.TrimSpace(string(line))) == 0 {
			return
		}
		(&Client{}).streamEvent("GET "+streamPath, line, func(ev WatchEvent) {
			if ev.App.Name == "" {
				t.Fatal("an event without an application name was handed on")
			}
		})
	})
}

// TestOnlyWithoutStream: a unit of work from Argo CD Notifications comes
// with no stream open, so the one application it names is read again from
// argocd-server: the last list, which showed it Synced, is stale. With the
// stream open, the stream's view is used and nothing more is read.
func TestOnlyWithoutStream(t *testing.T) {
	synced := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	srv := argocdtest.NewServer(token, watchApp("web", "Synced", synced), watchApp("api", "Synced", synced))
	t.Cleanup(srv.Close)
	c := client(t, srv.URL, nil)
	if _, err := c.ListApplications(context.Background()); err != nil {
		t.Fatal(err)
	}
	later := synced.Add(time.Hour)
	srv.Add(watchApp("web", "OutOfSync", later))
	view, ok := c.Only("argocd", "web")
	if !ok {
		t.Fatal("Only does not show web")
	}
	apps, err := view.ListApplications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(apps) != 1 || apps[0].Name != "web" || apps[0].SyncStatus != "OutOfSync" || !apps[0].OperationFinished.Equal(later) {
		t.Fatalf("without a stream Only lists %+v, want web as argocd-server shows it now (OutOfSync, synced at %s)", apps, later)
	}
	if n := view.Calls()["GET /api/v1/applications/{name}"]; n != 1 {
		t.Errorf("the application was read %d times, want once", n)
	}
	if _, err := func() ([]AppSummary, error) {
		v, _ := c.Only("argocd", "gone")
		return v.ListApplications(context.Background())
	}(); !errors.Is(err, ErrNotFound) {
		t.Errorf("an application argocd-server does not have: %v, want ErrNotFound", err)
	}

	// With the stream open, its view: no call.
	startWatcher(t, c)
	eventually(t, "the stream opens", func() bool { return srv.StreamsOpened() == 1 })
	if _, err := c.ListApplications(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the list is answered from the stream", func() bool { return c.WatchStats().Live })
	view, ok = c.Only("argocd", "web")
	if !ok {
		t.Fatal("Only does not show web with the stream open")
	}
	if apps, err := view.ListApplications(context.Background()); err != nil || len(apps) != 1 || apps[0].SyncStatus != "OutOfSync" {
		t.Fatalf("with the stream, Only lists %+v, %v", apps, err)
	}
	if len(view.Calls()) != 0 {
		t.Errorf("with the stream open, Only's list made calls: %v", view.Calls())
	}
	if _, ok := c.Only("argocd", "unknown"); ok {
		t.Error("with the stream open, Only shows an application neither the stream nor the list knows")
	}
}
