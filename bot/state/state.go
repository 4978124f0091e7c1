// Package state remembers what driftfix needs across cycles and restarts, in
// an embedded SQLite database: when an application was first seen stuck,
// which pull request carries which fix, which fixes a person rejected, and
// what each Slack channel was last told. GitHub stays the source of truth for
// pull requests, so losing this database never makes a duplicate.
package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"modernc.org/sqlite" // the pure-Go SQLite driver
)

// migrations are applied in order, each once; never edit a released one.
var migrations = []string{
	`CREATE TABLE first_seen (app TEXT PRIMARY KEY, at INTEGER NOT NULL);
	 CREATE TABLE prs (fingerprint TEXT PRIMARY KEY, app TEXT NOT NULL, repo TEXT NOT NULL, number INTEGER NOT NULL,
	                   branch TEXT NOT NULL, state TEXT NOT NULL, updated INTEGER NOT NULL);
	 CREATE INDEX prs_app ON prs (app);
	 CREATE TABLE rejected (fingerprint TEXT PRIMARY KEY, app TEXT NOT NULL, reason TEXT NOT NULL, at INTEGER NOT NULL);
	 CREATE TABLE digest_cursor (channel TEXT PRIMARY KEY, digest TEXT NOT NULL, at INTEGER NOT NULL);`,
	// 2: the Slack thread where a fix's pull request was announced.
	`CREATE TABLE slack_threads (fingerprint TEXT NOT NULL, channel TEXT NOT NULL, ts TEXT NOT NULL, PRIMARY KEY (fingerprint, channel));`,
	// 3: applications missing from their instance's list, and the last full list's length.
	`CREATE TABLE unlisted (app TEXT PRIMARY KEY, cycles INTEGER NOT NULL, since INTEGER NOT NULL);
	 CREATE TABLE list_size (instance TEXT PRIMARY KEY, apps INTEGER NOT NULL, at INTEGER NOT NULL);`,
	// 4: digests being posted, message by message, so a failed one resumes where it stopped.
	`CREATE TABLE digest_outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, cursor TEXT NOT NULL, digest TEXT NOT NULL, channel TEXT NOT NULL,
	                             thread TEXT NOT NULL, opened TEXT NOT NULL, messages TEXT NOT NULL, posted INTEGER NOT NULL);`,
	// 5: checks published on pull request heads, commands followed, fixes seen (cooldown) and snoozed.
	`CREATE TABLE checks (fingerprint TEXT PRIMARY KEY, sha TEXT NOT NULL, digest TEXT NOT NULL, planned INTEGER NOT NULL, success INTEGER NOT NULL, at INTEGER NOT NULL);
	 CREATE TABLE commands (repo TEXT NOT NULL, comment INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (repo, comment));
	 CREATE TABLE sightings (fingerprint TEXT PRIMARY KEY, first INTEGER NOT NULL, cycles INTEGER NOT NULL, last INTEGER NOT NULL);
	 CREATE TABLE snoozed (fingerprint TEXT PRIMARY KEY, until INTEGER NOT NULL, reason TEXT NOT NULL);
	 ALTER TABLE prs ADD COLUMN merge_sha TEXT NOT NULL DEFAULT '';`,
	// 6: per application, resource and path, the value (a fingerprint, never the value) and its writer seen each cycle, to tell a fight.
	`CREATE TABLE path_writes (app TEXT NOT NULL, resource TEXT NOT NULL, path TEXT NOT NULL, at INTEGER NOT NULL,
	                           value TEXT NOT NULL, manager TEXT NOT NULL, PRIMARY KEY (app, resource, path, at));`,
	// 7: what people asked for a fix (a ticked dashboard box), and each repository's dashboard issue.
	`CREATE TABLE requests (fix TEXT NOT NULL, action TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (fix, action));
	 CREATE TABLE dashboards (repo TEXT NOT NULL, scope TEXT NOT NULL, number INTEGER NOT NULL, PRIMARY KEY (repo, scope));`,
	// 8: digests held back by quiet hours, merged, per channel and instance, until they end.
	`CREATE TABLE held_digests (cursor TEXT PRIMARY KEY, channel TEXT NOT NULL, view TEXT NOT NULL, since INTEGER NOT NULL);`,
	// 9: the cause diagnosed at each path seen differing (a fight's fix is the one for it), the fights already reported, and the self-heal syncs counted each cycle.
	`CREATE TABLE path_causes (app TEXT NOT NULL, resource TEXT NOT NULL, path TEXT NOT NULL, cause TEXT NOT NULL, fix TEXT NOT NULL,
	                           writer TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (app, resource, path));
	 CREATE TABLE fights (fight TEXT PRIMARY KEY, app TEXT NOT NULL, reported INTEGER NOT NULL);
	 CREATE TABLE self_heal (app TEXT NOT NULL, at INTEGER NOT NULL, revision TEXT NOT NULL, syncs INTEGER NOT NULL, PRIMARY KEY (app, at));`,
	// 10: per ignore rule (its holder and content), the first cycle it hid nothing since it last hid something; when each digest section was last posted;
	// the repositories where driftfix has an ignore-rule pull request open.
	`CREATE TABLE idle_rules (rule TEXT PRIMARY KEY, instance TEXT NOT NULL, since INTEGER NOT NULL, seen INTEGER NOT NULL);
	 CREATE TABLE sections_posted (section TEXT PRIMARY KEY, at INTEGER NOT NULL);
	 CREATE TABLE ignore_pr_repos (repo TEXT PRIMARY KEY, at INTEGER NOT NULL);`,
	// 11: the pull request heads driftfix/predict checked (predict.go).
	`CREATE TABLE predicted (repo TEXT NOT NULL, sha TEXT NOT NULL, number INTEGER NOT NULL, predictions INTEGER NOT NULL, reviewed INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (repo, sha));`,
	// 12: each stuck application's last diagnosis, sealed, as memo.Memo keeps it (memo.go).
	`CREATE TABLE memo (app TEXT PRIMARY KEY, record BLOB NOT NULL);`,
	// 13: webhook deliveries received, by X-GitHub-Delivery, kept a day (deliveries.go).
	`CREATE TABLE deliveries (id TEXT PRIMARY KEY, at INTEGER NOT NULL);`,
	// 14: applications snoozed from the Slack digest, with who did it (snoozes.go).
	`CREATE TABLE app_snoozes (app TEXT PRIMARY KEY, until INTEGER NOT NULL, by TEXT NOT NULL);`,
	// 15: the seal of each row that leads driftfix to act (seal.go); rows
	// written before have none and are dropped at open (Store.sweep).
	`ALTER TABLE digest_outbox ADD COLUMN seal BLOB;
	 ALTER TABLE held_digests ADD COLUMN seal BLOB;
	 ALTER TABLE requests ADD COLUMN seal BLOB;
	 ALTER TABLE rejected ADD COLUMN seal BLOB;
	 ALTER TABLE sightings ADD COLUMN seal BLOB;
	 ALTER TABLE snoozed ADD COLUMN seal BLOB;
	 ALTER TABLE app_snoozes ADD COLUMN seal BLOB;
	 ALTER TABLE digest_cursor ADD COLUMN seal BLOB;
	 ALTER TABLE slack_threads ADD COLUMN seal BLOB;`,
}

// Store is an open state database.
type Store struct {
	db     *sql.DB
	sealer Sealer
	log    *slog.Logger
	mu     sync.Mutex
	// dropped counts, by table, the rows dropped for a missing or wrong
	// seal; sweeping collects their keys while Open sweeps.
	dropped  map[string]int
	sweeping map[string][]string
	// MovedAside is where a corrupt database found at open was moved, or "".
	MovedAside string
}

// Options tune Open.
type Options struct {
	Log *slog.Logger // nil: discard
	// Seal authenticates the rows that lead driftfix to act (required).
	Seal Sealer
	// Now names the file a corrupt database is moved to (default time.Now).
	Now func() time.Time
}

// Open opens (creating if needed) the database at path, migrates it and
// drops the rows seal does not authenticate.
func Open(ctx context.Context, path string, seal Sealer) (*Store, error) {
	return OpenWith(ctx, path, Options{Seal: seal})
}

// discard is the logger of no Options.Log.
var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// OpenWith is Open with options. A database SQLite reports as corrupt or not
// a database at all is moved aside to <path>.corrupt-<timestamp> (with its
// -wal and -shm files), logged at warn, and a fresh one is started: the bot
// keeps running, and adopting its open pull requests from GitHub rebuilds
// what it knew, as after a lost database.
func OpenWith(ctx context.Context, path string, o Options) (*Store, error) {
	log := o.Log
	if log == nil {
		log = discard
	}
	if o.Seal == nil {
		return nil, fmt.Errorf("open state %s: no seal to authenticate its rows with", path)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s, err := open(ctx, path, o.Seal, log)
	if err == nil || !corrupt(err) {
		return s, err
	}
	aside := path + ".corrupt-" + o.Now().UTC().Format("20060102T150405Z")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if rerr := os.Rename(path+suffix, aside+suffix); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return nil, fmt.Errorf("open state %s: it is corrupt (%w), and moving it aside failed: %w", path, err, rerr)
		}
	}
	log.Warn("the state database is corrupt; moved it aside and started a fresh one, rebuilt from GitHub", "file", path, "moved_to", aside, "error", err.Error())
	s, err2 := open(ctx, path, o.Seal, log)
	if err2 != nil {
		return nil, err2
	}
	s.MovedAside = aside
	return s, nil
}

// corrupt reports whether SQLite said the file is damaged or not a database.
func corrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return errors.Is(err, errCorrupt)
	}
	switch se.Code() & 0xff {
	case 11, 26: // SQLITE_CORRUPT, SQLITE_NOTADB
		return true
	}
	return false
}

// errCorrupt is an integrity check that did not answer "ok".
var errCorrupt = errors.New("the integrity check failed")

func open(ctx context.Context, path string, seal Sealer, log *slog.Logger) (*Store, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	db.SetMaxOpenConns(1) // one writer; SQLite serializes anyway
	s := &Store{db: db, sealer: seal, log: log, dropped: map[string]int{}}
	if err := s.check(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err := s.sweep(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	return s, nil
}

// check reads every page once (PRAGMA quick_check), so damage is found at
// start rather than in the middle of a cycle.
func (s *Store) check(ctx context.Context) error {
	var res string
	if err := s.db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("check: %w: %s", errCorrupt, res)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := s.db.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	case err != nil:
		return fmt.Errorf("migrate: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("the database has schema version %d, newer than this driftfix knows (%d); upgrade driftfix", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate to %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate to %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, i+1); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate to %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate to %d: %w", i+1, err)
		}
	}
	return nil
}

// FirstSeen records now as the time app was first seen stuck, unless it was
// already, and returns the recorded time.
func (s *Store) FirstSeen(ctx context.Context, app string, now time.Time) (time.Time, error) {
	if _, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO first_seen (app, at) VALUES (?, ?)`, app, now.UnixNano()); err != nil {
		return time.Time{}, fmt.Errorf("record first seen of %s: %w", app, err)
	}
	var at int64
	if err := s.db.QueryRowContext(ctx, `SELECT at FROM first_seen WHERE app = ?`, app).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("read first seen of %s: %w", app, err)
	}
	return time.Unix(0, at).UTC(), nil
}

// Cleared forgets an application that is no longer stuck.
func (s *Store) Cleared(ctx context.Context, app string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM first_seen WHERE app = ?`, app); err != nil {
		return fmt.Errorf("clear %s: %w", app, err)
	}
	return nil
}

// PR is a pull request that carries one fix. Fingerprint is the fix's key
// (what it fixes), App the application across instances.
type PR struct {
	Fingerprint, App, Repo, Branch, State string
	Number                                int
	Updated                               time.Time
	// MergeSHA is the merge commit of a merged pull request.
	MergeSHA string
}

// PRState values.
const (
	PROpen   = "open"
	PRMerged = "merged"
	PRClosed = "closed"
	// PRFixed is a merged fix whose application was seen Synced again.
	PRFixed = "fixed"
	// PRStillDrifts is a merged fix whose revision Argo CD synced while the
	// application stayed OutOfSync.
	PRStillDrifts = "still-drifts"
)

// SavePR records (or updates) the pull request of a fix.
func (s *Store) SavePR(ctx context.Context, pr PR) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO prs (fingerprint, app, repo, number, branch, state, updated, merge_sha) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (fingerprint) DO UPDATE SET repo = excluded.repo, number = excluded.number, branch = excluded.branch, state = excluded.state, updated = excluded.updated,
		merge_sha = CASE WHEN excluded.merge_sha = '' THEN merge_sha ELSE excluded.merge_sha END`,
		pr.Fingerprint, pr.App, pr.Repo, pr.Number, pr.Branch, pr.State, pr.Updated.UnixNano(), pr.MergeSHA)
	if err != nil {
		return fmt.Errorf("save pull request %s#%d: %w", pr.Repo, pr.Number, err)
	}
	return nil
}

// PRFor returns the pull request of a fix, if one was recorded.
func (s *Store) PRFor(ctx context.Context, fingerprint string) (PR, bool, error) {
	var pr PR
	var updated int64
	err := s.db.QueryRowContext(ctx, `SELECT fingerprint, app, repo, number, branch, state, updated, merge_sha FROM prs WHERE fingerprint = ?`, fingerprint).
		Scan(&pr.Fingerprint, &pr.App, &pr.Repo, &pr.Number, &pr.Branch, &pr.State, &updated, &pr.MergeSHA)
	if errors.Is(err, sql.ErrNoRows) {
		return PR{}, false, nil
	}
	if err != nil {
		return PR{}, false, fmt.Errorf("read pull request of %s: %w", fingerprint, err)
	}
	pr.Updated = time.Unix(0, updated).UTC()
	return pr, true, nil
}

// PRs returns the pull requests in the given states, oldest first.
func (s *Store) PRs(ctx context.Context, states ...string) ([]PR, error) {
	var out []PR
	for _, st := range states {
		rows, err := s.db.QueryContext(ctx, `SELECT fingerprint, app, repo, number, branch, state, updated, merge_sha FROM prs WHERE state = ? ORDER BY updated, number`, st)
		if err != nil {
			return nil, fmt.Errorf("list %s pull requests: %w", st, err)
		}
		for rows.Next() {
			var pr PR
			var updated int64
			if err := rows.Scan(&pr.Fingerprint, &pr.App, &pr.Repo, &pr.Number, &pr.Branch, &pr.State, &updated, &pr.MergeSHA); err != nil {
				rows.Close()
				return nil, fmt.Errorf("list %s pull requests: %w", st, err)
			}
			pr.Updated = time.Unix(0, updated).UTC()
			out = append(out, pr)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("list %s pull requests: %w", st, err)
		}
	}
	return out, nil
}

// Reject remembers that a person turned a fix down (closed unmerged, a label,
// or a `/driftfix ignore` comment), so it is never proposed again.
func (s *Store) Reject(ctx context.Context, fingerprint, app, reason string, now time.Time) error {
	r := rejectionRow{Rejection{Fix: fingerprint, App: app, Reason: reason}, now.UnixNano()}
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO rejected (fingerprint, app, reason, at, seal) VALUES (?, ?, ?, ?, ?)`,
		fingerprint, app, reason, r.at, s.seal(rejectedTable, &r)); err != nil {
		return fmt.Errorf("remember rejected fix %s: %w", fingerprint, err)
	}
	return nil
}

// Rejected reports whether a person turned the fix down, and why.
func (s *Store) Rejected(ctx context.Context, fingerprint string) (string, bool, error) {
	rs, err := readSealed[rejectionRow](ctx, s, s.db, rejectedTable, `WHERE fingerprint = ?`, fingerprint)
	if err != nil {
		return "", false, fmt.Errorf("read rejected fix %s: %w", fingerprint, err)
	}
	if len(rs) == 0 {
		return "", false, nil
	}
	return rs[0].r.Reason, true, nil
}

// DigestSent records the digest last posted to a channel (its fingerprint).
func (s *Store) DigestSent(ctx context.Context, channel, digest string, now time.Time) error {
	r := cursorRow{channel, digest, now.UnixNano()}
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO digest_cursor (channel, digest, at, seal) VALUES (?, ?, ?, ?)`, channel, digest, r.at, s.seal(cursorTable, &r)); err != nil {
		return fmt.Errorf("remember digest of %s: %w", channel, err)
	}
	return nil
}

// SetThread remembers the Slack message (its timestamp) in a channel that
// announced a fix's pull request; later news of it goes in that thread.
func (s *Store) SetThread(ctx context.Context, fingerprint, channel, ts string) error {
	r := threadRow{fingerprint, channel, ts}
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO slack_threads (fingerprint, channel, ts, seal) VALUES (?, ?, ?, ?)`, fingerprint, channel, ts, s.seal(threadsTable, &r)); err != nil {
		return fmt.Errorf("remember the Slack thread of %s: %w", fingerprint, err)
	}
	return nil
}

// Thread returns the Slack thread where a fix was announced in a channel, or "".
func (s *Store) Thread(ctx context.Context, fingerprint, channel string) (string, error) {
	rs, err := readSealed[threadRow](ctx, s, s.db, threadsTable, `WHERE fingerprint = ? AND channel = ?`, fingerprint, channel)
	if err != nil {
		return "", fmt.Errorf("read the Slack thread of %s: %w", fingerprint, err)
	}
	if len(rs) == 0 {
		return "", nil
	}
	return rs[0].ts, nil
}

// LastDigest returns the fingerprint of the digest last posted to a channel.
func (s *Store) LastDigest(ctx context.Context, channel string) (string, error) {
	rs, err := readSealed[cursorRow](ctx, s, s.db, cursorTable, `WHERE channel = ?`, channel)
	if err != nil {
		return "", fmt.Errorf("read digest of %s: %w", channel, err)
	}
	if len(rs) == 0 {
		return "", nil
	}
	return rs[0].digest, nil
}

// Unlisted counts one more cycle in a row in which app was missing from its
// instance's list, and returns the count.
func (s *Store) Unlisted(ctx context.Context, app string, now time.Time) (int, error) {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO unlisted (app, cycles, since) VALUES (?, 1, ?) ON CONFLICT (app) DO UPDATE SET cycles = cycles + 1`, app, now.UnixNano()); err != nil {
		return 0, fmt.Errorf("count %s as not listed: %w", app, err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT cycles FROM unlisted WHERE app = ?`, app).Scan(&n); err != nil {
		return 0, fmt.Errorf("read how long %s has not been listed: %w", app, err)
	}
	return n, nil
}

// UnlistedApps returns the applications counted missing, with their counts.
func (s *Store) UnlistedApps(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT app, cycles FROM unlisted`)
	if err != nil {
		return nil, fmt.Errorf("list applications not listed: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var app string
		var n int
		if err := rows.Scan(&app, &n); err != nil {
			return nil, fmt.Errorf("list applications not listed: %w", err)
		}
		out[app] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list applications not listed: %w", err)
	}
	return out, nil
}

// Relisted forgets that app was missing: it is listed again, or its PRs are closed.
func (s *Store) Relisted(ctx context.Context, app string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM unlisted WHERE app = ?`, app); err != nil {
		return fmt.Errorf("forget that %s was not listed: %w", app, err)
	}
	return nil
}

// ListSize returns how many applications an instance's last full list had.
func (s *Store) ListSize(ctx context.Context, instance string) (int, bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT apps FROM list_size WHERE instance = ?`, instance).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read the list size of %s: %w", instance, err)
	}
	return n, true, nil
}

// SetListSize records the length of an instance's full list.
func (s *Store) SetListSize(ctx context.Context, instance string, n int, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO list_size (instance, apps, at) VALUES (?, ?, ?)`, instance, n, now.UnixNano()); err != nil {
		return fmt.Errorf("record the list size of %s: %w", instance, err)
	}
	return nil
}

// Outbox is a digest being posted: its messages (as JSON), how many of them
// Slack accepted, and the thread the first one started.
type Outbox struct {
	ID                              int64
	Cursor, Digest, Channel, Thread string
	// Opened are the fixes whose PRs the digest announces; their news goes in its thread.
	Opened   []string
	Messages []string
	Posted   int
}

// QueueDigest stores a digest to post; Outboxes returns it until DigestDone.
// Its row is sealed with its id, channel, thread and messages: only what
// driftfix rendered and queued is posted.
func (s *Store) QueueDigest(ctx context.Context, o Outbox) error {
	opened, _ := json.Marshal(o.Opened)
	msgs, _ := json.Marshal(o.Messages)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("queue the digest of %s: %w", o.Cursor, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO digest_outbox (cursor, digest, channel, thread, opened, messages, posted) VALUES (?, ?, ?, ?, ?, ?, 0)`,
		o.Cursor, o.Digest, o.Channel, o.Thread, string(opened), string(msgs))
	if err != nil {
		return fmt.Errorf("queue the digest of %s: %w", o.Cursor, err)
	}
	r := outboxRow{o: o, opened: string(opened), msgs: string(msgs)}
	if r.o.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("queue the digest of %s: %w", o.Cursor, err)
	}
	r.o.Posted = 0
	if _, err := tx.ExecContext(ctx, `UPDATE digest_outbox SET seal = ? WHERE id = ?`, s.seal(outboxTable, &r), r.o.ID); err != nil {
		return fmt.Errorf("queue the digest of %s: %w", o.Cursor, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("queue the digest of %s: %w", o.Cursor, err)
	}
	return nil
}

// Outboxes returns the digests not fully posted yet, oldest first; a row
// whose seal does not hold is dropped, never returned.
func (s *Store) Outboxes(ctx context.Context) ([]Outbox, error) {
	rows, err := readSealed[outboxRow](ctx, s, s.db, outboxTable, `ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read queued digests: %w", err)
	}
	out := make([]Outbox, 0, len(rows))
	for _, r := range rows {
		o := r.o
		if err := errors.Join(json.Unmarshal([]byte(r.opened), &o.Opened), json.Unmarshal([]byte(r.msgs), &o.Messages)); err != nil {
			return nil, fmt.Errorf("read queued digest of %s: %w", o.Cursor, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// DigestPosted records that the first posted messages of a queued digest
// were accepted, in thread, sealing its row again.
func (s *Store) DigestPosted(ctx context.Context, id int64, thread string, posted int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record a posted digest message: %w", err)
	}
	defer tx.Rollback()
	rows, err := readSealed[outboxRow](ctx, s, tx, outboxTable, `WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("record a posted digest message: %w", err)
	}
	if len(rows) == 0 {
		return fmt.Errorf("record a posted digest message: queued digest %d is gone", id)
	}
	r := rows[0]
	r.o.Thread, r.o.Posted = thread, posted
	if _, err := tx.ExecContext(ctx, `UPDATE digest_outbox SET thread = ?, posted = ?, seal = ? WHERE id = ?`, thread, posted, s.seal(outboxTable, &r), id); err != nil {
		return fmt.Errorf("record a posted digest message: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record a posted digest message: %w", err)
	}
	return nil
}

// DropDigest removes a queued digest that is not to be posted.
func (s *Store) DropDigest(ctx context.Context, id int64) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM digest_outbox WHERE id = ?`, id); err != nil {
		return fmt.Errorf("drop queued digest %d: %w", id, err)
	}
	return nil
}

// DigestDone removes a fully posted digest from the queue and remembers it
// as the last digest of its cursor, in one transaction.
func (s *Store) DigestDone(ctx context.Context, o Outbox, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("finish the digest of %s: %w", o.Cursor, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM digest_outbox WHERE id = ?`, o.ID); err != nil {
		return fmt.Errorf("finish the digest of %s: %w", o.Cursor, err)
	}
	r := cursorRow{o.Cursor, o.Digest, now.UnixNano()}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO digest_cursor (channel, digest, at, seal) VALUES (?, ?, ?, ?)`, o.Cursor, o.Digest, r.at, s.seal(cursorTable, &r)); err != nil {
		return fmt.Errorf("finish the digest of %s: %w", o.Cursor, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("finish the digest of %s: %w", o.Cursor, err)
	}
	return nil
}
