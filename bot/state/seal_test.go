package state

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/memo"
)

// testSeal is the bot's own seal (memo.Seal) of a test credential.
var testSeal = func() memo.Seal {
	s, err := memo.NewSeal([]byte("the GitHub App's key"), [32]byte{1})
	if err != nil {
		panic(err)
	}
	return s
}()

// legit writes one row of each sealed table through the store, as the
// bot does.
func legit(t *testing.T, s *Store, at time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, err := range []error{
		s.QueueDigest(ctx, Outbox{Cursor: "#gitops main", Digest: "d1", Channel: "#gitops", Opened: []string{"k1"}, Messages: []string{"one", "two"}}),
		s.Hold(ctx, Held{Cursor: "#gitops main", Channel: "#gitops", View: `{"Instance":"main"}`, Since: at}),
		s.Request(ctx, "k1", ActionOpenNow, at),
		s.Reject(ctx, "k2", "main/argocd/web", "closed by alice", at),
		s.Snooze(ctx, "k3", at.Add(time.Hour), "asked by bob"),
		s.SnoozeApp(ctx, "main/argocd/web", at.Add(time.Hour), "carol"),
		s.DigestSent(ctx, "#gitops main", "d0", at),
		s.SetThread(ctx, "k1", "#gitops", "1700000000.000001"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Seen(ctx, "k4", at); err != nil {
		t.Fatal(err)
	}
}

// acted is what the bot would act on: every sealed row it reads back.
func acted(t *testing.T, s *Store, at time.Time) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	obs, err := s.Outboxes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		fmt.Fprintf(&b, "outbox %s %s thread=%q %v posted=%d\n", o.Cursor, o.Channel, o.Thread, o.Messages, o.Posted)
	}
	held, err := s.HeldDigests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range slices.Sorted(maps.Keys(held)) {
		fmt.Fprintf(&b, "held %s %s %s\n", c, held[c].Channel, held[c].View)
	}
	for _, a := range []string{ActionOpenNow, ActionUnreject, ActionRecheck, ActionRunNow} {
		rs, err := s.Requests(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range slices.Sorted(maps.Keys(rs)) {
			fmt.Fprintf(&b, "request %s %s\n", a, k)
		}
	}
	rej, err := s.Rejections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rej {
		fmt.Fprintf(&b, "rejected %s %s %s\n", r.Fix, r.App, r.Reason)
	}
	for _, k := range []string{"k1", "k2", "k3", "k4", "evil"} {
		if _, why, ok, err := s.Snoozed(ctx, k, at); err != nil {
			t.Fatal(err)
		} else if ok {
			fmt.Fprintf(&b, "snoozed %s %s\n", k, why)
		}
	}
	last, err := s.LastDigest(ctx, "#gitops main")
	if err != nil {
		t.Fatal(err)
	}
	thread, err := s.Thread(ctx, "k1", "#gitops")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "cursor #gitops main %s\nthread k1 #gitops %s\n", last, thread)
	sg, err := s.Seen(ctx, "k4", at.Add(time.Minute)) // counted once however often asked
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "sighting k4 first=%d cycles=%d\n", sg.First.UnixNano(), sg.Cycles)
	apps, err := s.AppSnoozes(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range slices.Sorted(maps.Keys(apps)) {
		fmt.Fprintf(&b, "app-snoozed %s by %s\n", app, apps[app].By)
	}
	return b.String()
}

// TestForgedRowsNeverActedOn: rows written by SQL into each sealed table
// without the bot's credential (no seal, a wrong one, a legit row's seal
// on another row, a legit row with a field changed), at rest or under a
// running bot, are dropped with a warning naming table and key, counted,
// and never read back; the other rows are.
func TestForgedRowsNeverActedOn(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, sql, table, key string
		gone                  string // the legit row tampered with, by its line's start
	}{
		{"outbox to another channel", `INSERT INTO digest_outbox (cursor, digest, channel, thread, opened, messages, posted, seal) VALUES ('#evil main', 'x', '#evil', '', '[]', '["hi"]', 0, NULL)`, "digest_outbox", "2", ""},
		{"outbox row replayed under a new id", `INSERT INTO digest_outbox (cursor, digest, channel, thread, opened, messages, posted, seal) SELECT cursor, digest, channel, thread, opened, messages, posted, seal FROM digest_outbox`, "digest_outbox", "2", ""},
		{"outbox moved to another channel", `UPDATE digest_outbox SET channel = '#evil'`, "digest_outbox", "1", "outbox"},
		{"outbox moved to another thread", `UPDATE digest_outbox SET thread = '1700000000.1'`, "digest_outbox", "1", "outbox"},
		{"outbox message changed", `UPDATE digest_outbox SET messages = '["click here"]'`, "digest_outbox", "1", "outbox"},
		{"outbox resent from the start", `UPDATE digest_outbox SET posted = 1`, "digest_outbox", "1", "outbox"},
		{"held digest changed", `UPDATE held_digests SET view = '{"Instance":"evil"}'`, "held_digests", "#gitops main", "held"},
		{"forged request", `INSERT INTO requests (fix, action, at, seal) VALUES ('evil', 'unreject', 1, X'00')`, "requests", "evil unreject", ""},
		{"request under another's seal", `INSERT INTO requests (fix, action, at, seal) SELECT 'evil', action, at, seal FROM requests`, "requests", "evil open-now", ""},
		{"forged rejection", `INSERT INTO rejected (fingerprint, app, reason, at, seal) VALUES ('evil', 'main/argocd/web', 'x', 1, NULL)`, "rejected", "evil", ""},
		{"rejection's reason changed", `UPDATE rejected SET reason = 'evil'`, "rejected", "k2", "rejected"},
		{"cooldown skipped", `UPDATE sightings SET first = 1, cycles = 99`, "sightings", "k4", "sighting"},
		{"forged snooze", `INSERT INTO snoozed (fingerprint, until, reason, seal) VALUES ('evil', 9000000000000000000, 'x', NULL)`, "snoozed", "evil", ""},
		{"snooze made longer", `UPDATE snoozed SET until = 9000000000000000000, reason = 'evil'`, "snoozed", "k3", "snoozed"},
		{"last digest claimed", `UPDATE digest_cursor SET digest = 'evil'`, "digest_cursor", "#gitops main", "cursor"},
		{"thread moved", `UPDATE slack_threads SET ts = 'evil'`, "slack_threads", "k1 #gitops", "thread"},
		{"forged app snooze", `INSERT INTO app_snoozes (app, until, by, seal) VALUES ('evil', 9000000000000000000, 'x', NULL)`, "app_snoozes", "evil", ""},
	} {
		for _, running := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/running=%v", tc.name, running), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "state.db")
				var logs bytes.Buffer
				s, err := OpenWith(ctx, path, Options{Seal: testSeal, Log: slog.New(slog.NewTextHandler(&logs, nil))})
				if err != nil {
					t.Fatal(err)
				}
				defer func() { s.Close() }()
				legit(t, s, at)
				want := acted(t, s, at)
				if !running {
					s.Close() // tampered with at rest: dropped as it opens
				}
				db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(tc.sql); err != nil {
					t.Fatal(err)
				}
				db.Close()
				if !running {
					if s, err = OpenWith(ctx, path, Options{Seal: testSeal, Log: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
						t.Fatal(err)
					}
				}
				got := acted(t, s, at)
				if strings.Contains(got, "evil") || strings.Contains(got, "click") || strings.Contains(got, "cycles=99") || strings.Contains(got, "cycles=100") {
					t.Errorf("a forged row is acted on:\n%s", got)
				}
				if g, w := without(got, tc.gone), without(want, tc.gone); g != w {
					t.Errorf("acted on\n%s\nwant the rows driftfix wrote, less the %s row tampered with:\n%s", g, tc.table, w)
				}
				if line := lineOf(want, tc.gone); tc.gone != "" && strings.Contains(got, line) {
					t.Errorf("the tampered %s row is still acted on:\n%s", tc.table, got)
				}
				if l := logs.String(); !strings.Contains(l, "table="+tc.table) || !strings.Contains(l, "key="+strconv.Quote(tc.key)) && !strings.Contains(l, "key="+tc.key+" ") {
					t.Errorf("the drop is not logged with table %s and key %s:\n%s", tc.table, tc.key, l)
				}
				if d := s.DroppedRows(); d[tc.table] != 1 || len(d) != 1 {
					t.Errorf("dropped %v, want one %s row", d, tc.table)
				}
			})
		}
	}
}

// lineOf is the line of s that starts with prefix and a space, newline included.
func lineOf(s, prefix string) string {
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, prefix+" ") {
			return l
		}
	}
	return "\x00 no such line"
}

// without is s less its lines that start with prefix ("": s).
func without(s, prefix string) string {
	if prefix == "" {
		return s
	}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, prefix+" ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestSealedRowsAcrossRestartsAndRotation: the rows driftfix wrote read
// back after a restart, also of another build (a rejection outlives an
// upgrade); after the credential is rotated, as the memo's records, every
// one is dropped at open with a line per table, and none is acted on.
func TestSealedRowsAcrossRestartsAndRotation(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	legit(t, s, at)
	want := acted(t, s, at)
	s.Close()
	upgraded, _ := memo.NewSeal([]byte("the GitHub App's key"), [32]byte{2})
	if s, err = Open(ctx, path, upgraded); err != nil {
		t.Fatal(err)
	}
	if got := acted(t, s, at); got != want || len(s.DroppedRows()) != 0 {
		t.Errorf("after an upgrade, read back\n%s\nwant\n%s(dropped %v)", got, want, s.DroppedRows())
	}
	s.Close()
	rotated, _ := memo.NewSeal([]byte("the GitHub App's new key"), [32]byte{2})
	var logs bytes.Buffer
	if s, err = OpenWith(ctx, path, Options{Seal: rotated, Log: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := s.DroppedRows()
	if got := acted(t, s, at); got != "cursor #gitops main \nthread k1 #gitops \nsighting k4 first="+fmt.Sprint(at.Add(time.Minute).UnixNano())+" cycles=1\n" {
		t.Errorf("after the credential was rotated, acted on\n%s", got)
	}
	for _, table := range []string{"digest_outbox", "held_digests", "requests", "rejected", "sightings", "snoozed", "app_snoozes", "digest_cursor", "slack_threads"} {
		if d[table] != 1 || !strings.Contains(logs.String(), "table="+table+" rows=1") {
			t.Errorf("%s: %d rows dropped, want 1, said in a line:\n%s", table, d[table], logs.String())
		}
	}
}
