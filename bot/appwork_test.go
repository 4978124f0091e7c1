package bot

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/plan"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestAppUnit: an App unit diagnoses its one application at once, reading
// no list (the dry-run bot too: it plans and logs); one its instance does
// not show is dropped; one Argo CD shows Synced (a stale notification) is
// left alone; one OutOfSync for less than stuckAfter is not stuck
// yet and asks for the cycle after it.
func TestAppUnit(t *testing.T) {
	now := time.Now()
	snaps := fleet(t, 10, 2, 3, now) // app-0000 and app-0005 stuck, synced an hour ago
	srv := argocdtest.NewServer("tok", snaps...)
	t.Cleanup(srv.Close)
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListApplications(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stuckAfter, app string
		says                  string
		soon                  bool
	}{
		{"stuck", "10m", "main/argocd/app-0000", `msg="application diagnosed" app=main/argocd/app-0000`, false},
		{"not stuck yet", "2h", "main/argocd/app-0000", "not stuck yet", true},
		{"synced after all", "10m", "main/argocd/app-0001", "not stuck (Argo CD shows it Synced", false},
		{"unknown", "10m", "main/argocd/nowhere", `msg="event dropped"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte("argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]\ndryRun: true\npolicy: {stuckAfter: " + tc.stuckAfter + "}\n"))
			if err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			r := &Runner{Config: cfg, Instances: []plan.Instance{{Name: "main", Client: c}}, Log: slog.New(slog.NewTextHandler(&logs, nil))}
			lists := c.Calls()["GET /api/v1/applications"]
			if err := r.Do(context.Background(), events.Work{Kind: events.App, App: tc.app, At: now.Add(-time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), tc.says) {
				t.Errorf("log %q, want %q", logs.String(), tc.says)
			}
			if n := c.Calls()["GET /api/v1/applications"]; n != lists {
				t.Errorf("the unit read the list (%d calls)", n-lists)
			}
			select {
			case <-r.soonC():
				if !tc.soon {
					t.Error("the unit asked for a cycle")
				}
			default:
				if tc.soon {
					t.Error("the unit asked for no cycle after stuckAfter")
				}
			}
		})
	}
}
