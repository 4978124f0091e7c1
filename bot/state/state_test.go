package state

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStoreSurvivesRestarts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	s, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	if at, err := s.FirstSeen(ctx, "argocd/web", t0); err != nil || !at.Equal(t0) {
		t.Fatalf("first seen = %v, %v", at, err)
	}
	if at, _ := s.FirstSeen(ctx, "argocd/web", t0.Add(time.Hour)); !at.Equal(t0) {
		t.Fatalf("a later cycle must keep the first time, got %v", at)
	}
	pr := PR{Fingerprint: "fp1", App: "argocd/web", Repo: "example-org/shop", Number: 7, Branch: "driftfix/web/hpa-replicas-fp1", State: PROpen, Updated: t0}
	if err := s.SavePR(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject(ctx, "fp0", "argocd/web", "closed unmerged by alice", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.DigestSent(ctx, "#gitops", "d1", t0); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, path, testSeal) // a restart: migrations run again, data stays
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if at, _ := s.FirstSeen(ctx, "argocd/web", t0.Add(2*time.Hour)); !at.Equal(t0) {
		t.Errorf("first seen lost across a restart: %v", at)
	}
	got, ok, err := s.PRFor(ctx, "fp1")
	if err != nil || !ok || got != pr {
		t.Errorf("PRFor = %+v, %v, %v", got, ok, err)
	}
	pr.State, pr.Number = PRMerged, 8
	if err := s.SavePR(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if open, _ := s.PRs(ctx, PROpen); len(open) != 0 {
		t.Errorf("a merged PR is still open: %+v", open)
	}
	if merged, _ := s.PRs(ctx, PROpen, PRMerged); len(merged) != 1 || merged[0].Number != 8 {
		t.Errorf("merged PRs: %+v", merged)
	}
	if why, ok, _ := s.Rejected(ctx, "fp0"); !ok || !strings.Contains(why, "alice") {
		t.Errorf("rejection lost: %q %v", why, ok)
	}
	if _, ok, _ := s.Rejected(ctx, "fp1"); ok {
		t.Error("a fix nobody rejected is reported rejected")
	}
	if d, _ := s.LastDigest(ctx, "#gitops"); d != "d1" {
		t.Errorf("digest cursor = %q", d)
	}
	if err := s.Cleared(ctx, "argocd/web"); err != nil {
		t.Fatal(err)
	}
	if at, _ := s.FirstSeen(ctx, "argocd/web", t0.Add(3*time.Hour)); !at.Equal(t0.Add(3 * time.Hour)) {
		t.Errorf("a cleared app starts again, got %v", at)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, path, testSeal); err == nil || !strings.Contains(err.Error(), "newer than this driftfix knows") {
		t.Fatalf("a newer schema must be refused: %v", err)
	}
}

// TestMigrateFromVersion1: a database written by a driftfix with the first
// schema keeps its data and gains the Slack threads; its rejection, written
// before rows were sealed, is dropped with a line saying so (it is
// re-derived from the fix's closed pull request), never acted on.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`, `INSERT INTO schema_version (version) VALUES (1)`, migrations[0],
		`INSERT INTO rejected (fingerprint, app, reason, at) VALUES ('k1', 'main/argocd/web', 'closed by alice', 1)`,
		`INSERT INTO first_seen (app, at) VALUES ('main/argocd/web', 7)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	var logs bytes.Buffer
	s, err := OpenWith(ctx, path, Options{Seal: testSeal, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if at, err := s.FirstSeen(ctx, "main/argocd/web", time.Unix(0, 99)); err != nil || at.UnixNano() != 7 {
		t.Errorf("data lost in the migration: first seen at %v, %v", at, err)
	}
	if why, ok, _ := s.Rejected(ctx, "k1"); ok {
		t.Errorf("a rejection written before seals is still acted on: %q", why)
	}
	if !strings.Contains(logs.String(), "table=rejected rows=1 first_key=k1") || !strings.Contains(logs.String(), "re-derived") {
		t.Errorf("the dropped rejection is not logged by table and key, with what becomes of it:\n%s", logs.String())
	}
	if err := s.SetThread(ctx, "k1", "#gitops", "1700000000.000001"); err != nil {
		t.Fatal(err)
	}
	if ts, _ := s.Thread(ctx, "k1", "#gitops"); ts != "1700000000.000001" {
		t.Errorf("thread %q", ts)
	}
	if ts, _ := s.Thread(ctx, "k1", "#other"); ts != "" {
		t.Errorf("thread in another channel %q", ts)
	}
}

// TestCorruptDatabaseMovedAside: a database file SQLite cannot read (garbage
// bytes, or a real database cut short) does not stop the bot: it is moved
// aside, logged at warn, and a fresh database is started.
func TestCorruptDatabaseMovedAside(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	truncated := func(t *testing.T, path string) {
		s, err := Open(ctx, path, testSeal)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2000; i++ { // many pages, so half the file loses some
			if err := s.Reject(ctx, fmt.Sprintf("fp%04d-%s", i, strings.Repeat("x", 60)), "main/argocd/web", "closed by alice", at); err != nil {
				t.Fatal(err)
			}
		}
		s.Close() // checkpoints the WAL into the file
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
	}
	garbage := func(t *testing.T, path string) {
		if err := os.WriteFile(path, bytes.Repeat([]byte("not a database \x00\xff"), 512), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, damage := range map[string]func(*testing.T, string){"garbage": garbage, "truncated": truncated} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			damage(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			s, err := OpenWith(ctx, path, Options{Seal: testSeal, Log: slog.New(slog.NewTextHandler(&logs, nil)), Now: func() time.Time { return at }})
			if err != nil {
				t.Fatalf("a corrupt database must not stop the bot: %v", err)
			}
			defer s.Close()
			want := path + ".corrupt-20261203T100000Z"
			if s.MovedAside != want {
				t.Errorf("moved aside to %q, want %q", s.MovedAside, want)
			}
			if kept, err := os.ReadFile(want); err != nil || !bytes.Equal(kept, before) {
				t.Errorf("the corrupt file must be kept as it was for a person to look at: %v", err)
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "corrupt") {
				t.Errorf("log: %s", logs.String())
			}
			if _, ok, _ := s.Rejected(ctx, "fp0000-"+strings.Repeat("x", 60)); ok {
				t.Error("the fresh database holds old rows")
			}
			if err := s.SavePR(ctx, PR{Fingerprint: "k", App: "main/argocd/web", Repo: "acme/web", Number: 1, State: PROpen, Updated: at}); err != nil {
				t.Fatalf("the fresh database must work: %v", err)
			}
		})
	}
}

// TestUnlistedCounts: consecutive cycles missing are counted per application
// and start over when it is listed again; list sizes are kept per instance.
func TestUnlistedCounts(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"), testSeal)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for want := 1; want <= 3; want++ {
		if n, err := s.Unlisted(ctx, "main/argocd/web", t0); err != nil || n != want {
			t.Fatalf("count %d, %v; want %d", n, err, want)
		}
	}
	if m, _ := s.UnlistedApps(ctx); m["main/argocd/web"] != 3 || len(m) != 1 {
		t.Errorf("unlisted %v", m)
	}
	if err := s.Relisted(ctx, "main/argocd/web"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Unlisted(ctx, "main/argocd/web", t0); n != 1 {
		t.Errorf("a relisted application must start over, got %d", n)
	}
	if _, ok, _ := s.ListSize(ctx, "main"); ok {
		t.Error("a list size nobody recorded")
	}
	s.SetListSize(ctx, "main", 40, t0)
	s.SetListSize(ctx, "other", 7, t0)
	if n, ok, err := s.ListSize(ctx, "main"); n != 40 || !ok || err != nil {
		t.Errorf("list size %d %v %v", n, ok, err)
	}
}
