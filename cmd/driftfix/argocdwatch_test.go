package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot"
	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/plan"
)

type unitLog struct {
	mu    sync.Mutex
	units []events.Work
}

func (u *unitLog) Do(_ context.Context, w events.Work) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.units = append(u.units, w)
	return nil
}

func (u *unitLog) got() []events.Work {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]events.Work(nil), u.units...)
}

func streamedApp(name, status string, finished time.Time) *drift.Snapshot {
	return &drift.Snapshot{Application: drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": "argocd"},
		"spec":     map[string]any{"project": "default"},
		"status": map[string]any{"sync": map[string]any{"status": status, "revision": "abc"},
			"operationState": map[string]any{"phase": "Succeeded", "finishedAt": finished.UTC().Format(time.RFC3339)}}}}
}

// TestWatchEventsBecomeUnits: run follows the instance's watch stream on
// loopback, and an application that turns OutOfSync after a sync becomes
// one App unit in the work queue, dated by that sync; one that stays
// Synced does not.
func TestWatchEventsBecomeUnits(t *testing.T) {
	synced := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	srv := argocdtest.NewServer("tok", streamedApp("web", "Synced", synced), streamedApp("api", "Synced", synced))
	t.Cleanup(srv.Close)
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	r := &bot.Runner{Instances: []plan.Instance{{Name: "main", Client: c}}, Metrics: bot.NewMetrics()}
	units := &unitLog{}
	q := &events.Queue{Handler: units}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { q.Run(ctx); done <- struct{}{} }()
	go func() {
		watchArgoCD(ctx, r, q, watchFlags{watch: true, relist: time.Hour}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
		done <- struct{}{}
	}()
	t.Cleanup(func() { cancel(); <-done; <-done })
	wait := func(what string, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if cond() {
				return
			}
		}
		t.Fatalf("not within 5s: %s", what)
	}
	wait("the stream opens and sends both applications", func() bool { return srv.StreamsOpened() == 1 })
	time.Sleep(100 * time.Millisecond) // the first applications are read
	later := synced.Add(time.Hour)
	srv.Add(streamedApp("api", "Synced", later))
	srv.Add(streamedApp("web", "OutOfSync", later))
	wait("a unit for web", func() bool { return len(units.got()) > 0 })
	time.Sleep(100 * time.Millisecond)
	got := units.got()
	if len(got) != 1 || got[0].Kind != events.App || got[0].App != "main/argocd/web" || !got[0].At.Equal(later) {
		t.Fatalf("units %+v, want one App unit for main/argocd/web dated %s", got, later)
	}
}

// TestWatchOnlyWhileLeading: a standby replica opens no watch stream.
func TestWatchOnlyWhileLeading(t *testing.T) {
	srv := argocdtest.NewServer("tok", streamedApp("web", "Synced", time.Now()))
	t.Cleanup(srv.Close)
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	r := &bot.Runner{Instances: []plan.Instance{{Name: "main", Client: c}}, Metrics: bot.NewMetrics()}
	var leading atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		watchArgoCD(ctx, r, &events.Queue{Handler: &unitLog{}}, watchFlags{watch: true}, &leading, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	<-done
	if n := srv.StreamsOpened(); n != 0 {
		t.Errorf("a standby opened %d watch streams", n)
	}
}

// TestWatchRefusedSaysSo: a refused stream is said in the log and in
// driftfix_argocd_watch, and the list is still read.
func TestWatchRefusedSaysSo(t *testing.T) {
	srv := argocdtest.NewServer("tok", streamedApp("web", "Synced", time.Now()))
	t.Cleanup(srv.Close)
	srv.RefuseStream(http.StatusNotFound)
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	r := &bot.Runner{Instances: []plan.Instance{{Name: "main", Client: c}}, Metrics: bot.NewMetrics()}
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) }), nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		watchArgoCD(ctx, r, &events.Queue{Handler: &unitLog{}}, watchFlags{watch: true}, nil, log)
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	metric := func() string {
		rec := httptest.NewRecorder()
		r.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Body.String()
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && !strings.Contains(metric(), `driftfix_argocd_watch{instance="main",state="refused"} 1`); time.Sleep(5 * time.Millisecond) {
	}
	if m := metric(); !strings.Contains(m, `driftfix_argocd_watch{instance="main",state="refused"} 1`) || !strings.Contains(m, `driftfix_argocd_watch{instance="main",state="streaming"} 0`) {
		t.Fatalf("metrics do not say the stream is refused:\n%s", m)
	}
	mu.Lock()
	said := logs.String()
	mu.Unlock()
	if !strings.Contains(said, "refuses the application watch stream: polling the list") || !strings.Contains(said, "404") {
		t.Errorf("log %q does not say the stream is refused and why", said)
	}
	if _, err := c.ListApplications(ctx); err != nil || c.Calls()["GET /api/v1/applications"] != 1 {
		t.Errorf("the list was not read: %v", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
