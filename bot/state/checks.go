package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Checked is the check last published on a fix's pull request head.
type Checked struct {
	SHA, Digest string
	// Planned says it was the plan's verification, published when driftfix
	// pushed the head, not yet a check of the head's own files.
	Planned bool
	// Success is its conclusion.
	Success bool
}

// SaveCheck remembers the check published on a fix's pull request head.
func (s *Store) SaveCheck(ctx context.Context, fingerprint string, c Checked, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO checks (fingerprint, sha, digest, planned, success, at) VALUES (?, ?, ?, ?, ?, ?)`,
		fingerprint, c.SHA, c.Digest, c.Planned, c.Success, now.UnixNano())
	if err != nil {
		return fmt.Errorf("remember the check of fix %s: %w", fingerprint, err)
	}
	return nil
}

// CheckFor is the check last published on a fix's pull request head.
func (s *Store) CheckFor(ctx context.Context, fingerprint string) (Checked, bool, error) {
	var c Checked
	err := s.db.QueryRowContext(ctx, `SELECT sha, digest, planned, success FROM checks WHERE fingerprint = ?`, fingerprint).Scan(&c.SHA, &c.Digest, &c.Planned, &c.Success)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("read the check of fix %s: %w", fingerprint, err)
	}
	return c, true, nil
}

// Followed records that a command comment was acted on, and reports whether
// it had been already: each command is followed once.
func (s *Store) Followed(ctx context.Context, repo string, comment int64, now time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO commands (repo, comment, at) VALUES (?, ?, ?)`, repo, comment, now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("remember command %d in %s: %w", comment, repo, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("remember command %d in %s: %w", comment, repo, err)
	}
	return n == 0, nil
}

// WasFollowed reports whether a command comment was acted on before.
func (s *Store) WasFollowed(ctx context.Context, repo string, comment int64) (bool, error) {
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT at FROM commands WHERE repo = ? AND comment = ?`, repo, comment).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read command %d in %s: %w", comment, repo, err)
	}
	return true, nil
}

// Sighting is how long and how often a fix has been proposed by cycles.
type Sighting struct {
	First  time.Time
	Cycles int
}

// Seen counts a cycle that proposed a fix and returns its sightings so far.
// A cycle is counted once however often it asks (at the same now).
func (s *Store) Seen(ctx context.Context, fingerprint string, now time.Time) (Sighting, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Sighting{}, fmt.Errorf("count fix %s: %w", fingerprint, err)
	}
	defer tx.Rollback()
	old, err := readSealed[sightingRow](ctx, s, tx, sightingsTable, `WHERE fingerprint = ?`, fingerprint)
	if err != nil {
		return Sighting{}, fmt.Errorf("count fix %s: %w", fingerprint, err)
	}
	r := sightingRow{fingerprint, now.UnixNano(), 1, now.UnixNano()}
	if len(old) > 0 {
		r = old[0]
		if r.last < now.UnixNano() {
			r.cycles, r.last = r.cycles+1, now.UnixNano()
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO sightings (fingerprint, first, cycles, last, seal) VALUES (?, ?, ?, ?, ?)`,
		fingerprint, r.first, r.cycles, r.last, s.seal(sightingsTable, &r)); err != nil {
		return Sighting{}, fmt.Errorf("count fix %s: %w", fingerprint, err)
	}
	if err := tx.Commit(); err != nil {
		return Sighting{}, fmt.Errorf("count fix %s: %w", fingerprint, err)
	}
	return Sighting{First: time.Unix(0, r.first), Cycles: int(r.cycles)}, nil
}

// Unseen forgets a fix's sightings: a fix that comes back cools down again.
func (s *Store) Unseen(ctx context.Context, fingerprint string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sightings WHERE fingerprint = ?`, fingerprint); err != nil {
		return fmt.Errorf("forget fix %s: %w", fingerprint, err)
	}
	return nil
}

// Snooze holds a fix back until a time, with who asked and why.
func (s *Store) Snooze(ctx context.Context, fingerprint string, until time.Time, reason string) error {
	r := snoozeRow{fingerprint, reason, until.UnixNano()}
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO snoozed (fingerprint, until, reason, seal) VALUES (?, ?, ?, ?)`,
		fingerprint, r.until, reason, s.seal(snoozedTable, &r)); err != nil {
		return fmt.Errorf("snooze fix %s: %w", fingerprint, err)
	}
	return nil
}

// Snoozed reports whether a fix is held back at now, until when and why.
func (s *Store) Snoozed(ctx context.Context, fingerprint string, now time.Time) (time.Time, string, bool, error) {
	rs, err := readSealed[snoozeRow](ctx, s, s.db, snoozedTable, `WHERE fingerprint = ?`, fingerprint)
	if err != nil {
		return time.Time{}, "", false, fmt.Errorf("read snooze of fix %s: %w", fingerprint, err)
	}
	if len(rs) == 0 {
		return time.Time{}, "", false, nil
	}
	t := time.Unix(0, rs[0].until)
	return t, rs[0].reason, now.Before(t), nil
}
