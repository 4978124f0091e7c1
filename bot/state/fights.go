package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// PathCause is the cause the diagnosis last found at one path of one
// resource, the fix it names, and the field manager that wrote the value.
type PathCause struct {
	App, Resource, Path string
	Cause, Fix, Writer  string
	At                  time.Time
}

// RecordCauses keeps the latest cause seen at each path.
func (s *Store) RecordCauses(ctx context.Context, cs []PathCause) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record the causes at fought paths: %w", err)
	}
	defer tx.Rollback()
	for _, c := range cs {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO path_causes (app, resource, path, cause, fix, writer, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			c.App, c.Resource, c.Path, c.Cause, c.Fix, c.Writer, c.At.UnixNano()); err != nil {
			return fmt.Errorf("record the cause at %s %s %s: %w", c.App, c.Resource, c.Path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record the causes at fought paths: %w", err)
	}
	return nil
}

// Causes returns the latest cause seen at each path of an application.
func (s *Store) Causes(ctx context.Context, app string) ([]PathCause, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT resource, path, cause, fix, writer, at FROM path_causes WHERE app = ? ORDER BY resource, path`, app)
	if err != nil {
		return nil, fmt.Errorf("read the causes at the paths of %s: %w", app, err)
	}
	defer rows.Close()
	var out []PathCause
	for rows.Next() {
		c := PathCause{App: app}
		var at int64
		if err := rows.Scan(&c.Resource, &c.Path, &c.Cause, &c.Fix, &c.Writer, &at); err != nil {
			return nil, fmt.Errorf("read the causes at the paths of %s: %w", app, err)
		}
		c.At = time.Unix(0, at).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the causes at the paths of %s: %w", app, err)
	}
	return out, nil
}

// FightReported returns when a fight (by the caller's key) was first
// reported; ok is false when it never was.
func (s *Store) FightReported(ctx context.Context, fight string) (time.Time, bool, error) {
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT reported FROM fights WHERE fight = ?`, fight).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read whether fight %s was reported: %w", fight, err)
	}
	return time.Unix(0, at).UTC(), true, nil
}

// FightIsReported remembers that a fight of an application was reported
// at the given time; a fight reported before keeps its first time.
func (s *Store) FightIsReported(ctx context.Context, fight, app string, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO fights (fight, app, reported) VALUES (?, ?, ?)`, fight, app, at.UnixNano()); err != nil {
		return fmt.Errorf("remember fight %s of %s as reported: %w", fight, app, err)
	}
	return nil
}

// PruneCauses forgets causes seen before the given time.
func (s *Store) PruneCauses(ctx context.Context, before time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM path_causes WHERE at < ?`, before.UnixNano()); err != nil {
		return fmt.Errorf("prune the causes at fought paths: %w", err)
	}
	return nil
}

// SelfHealCount is how many self-heal syncs of one revision a cycle counted
// for an application.
type SelfHealCount struct {
	At       time.Time
	Revision string
	Syncs    int
}

// RecordSelfHeal keeps what a cycle counted.
func (s *Store) RecordSelfHeal(ctx context.Context, app string, c SelfHealCount) error {
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO self_heal (app, at, revision, syncs) VALUES (?, ?, ?, ?)`, app, c.At.UnixNano(), c.Revision, c.Syncs); err != nil {
		return fmt.Errorf("record the self-heal syncs of %s: %w", app, err)
	}
	return nil
}

// SelfHealSince returns what the cycles since the given time counted for an
// application, oldest first.
func (s *Store) SelfHealSince(ctx context.Context, app string, since time.Time) ([]SelfHealCount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT at, revision, syncs FROM self_heal WHERE app = ? AND at >= ? ORDER BY at`, app, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("read the self-heal syncs of %s: %w", app, err)
	}
	defer rows.Close()
	var out []SelfHealCount
	for rows.Next() {
		var c SelfHealCount
		var at int64
		if err := rows.Scan(&at, &c.Revision, &c.Syncs); err != nil {
			return nil, fmt.Errorf("read the self-heal syncs of %s: %w", app, err)
		}
		c.At = time.Unix(0, at).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the self-heal syncs of %s: %w", app, err)
	}
	return out, nil
}

// PruneSelfHeal forgets counts made before the given time.
func (s *Store) PruneSelfHeal(ctx context.Context, before time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM self_heal WHERE at < ?`, before.UnixNano()); err != nil {
		return fmt.Errorf("prune the self-heal syncs: %w", err)
	}
	return nil
}
