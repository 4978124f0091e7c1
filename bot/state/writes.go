package state

import (
	"context"
	"fmt"
	"time"
)

// PathWrite is what one cycle saw at one path of one resource: a
// fingerprint of the value (never the value itself, which may be secret)
// and the field manager that wrote it.
type PathWrite struct {
	App      string
	Resource string // drift.Ref's String and group, as the caller renders it
	Path     string
	At       time.Time
	Value    string
	Manager  string
}

// RecordWrites stores what a cycle saw; a path seen twice at the same time
// keeps the last.
func (s *Store) RecordWrites(ctx context.Context, ws []PathWrite) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record path writes: %w", err)
	}
	defer tx.Rollback()
	for _, w := range ws {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO path_writes (app, resource, path, at, value, manager) VALUES (?, ?, ?, ?, ?, ?)`,
			w.App, w.Resource, w.Path, w.At.UnixNano(), w.Value, w.Manager); err != nil {
			return fmt.Errorf("record path write of %s %s %s: %w", w.App, w.Resource, w.Path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record path writes: %w", err)
	}
	return nil
}

// Writes returns what the cycles since the given time saw in an
// application, oldest first (by resource and path at equal times).
func (s *Store) Writes(ctx context.Context, app string, since time.Time) ([]PathWrite, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT resource, path, at, value, manager FROM path_writes WHERE app = ? AND at >= ? ORDER BY at, resource, path`, app, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("read path writes of %s: %w", app, err)
	}
	defer rows.Close()
	var out []PathWrite
	for rows.Next() {
		w := PathWrite{App: app}
		var at int64
		if err := rows.Scan(&w.Resource, &w.Path, &at, &w.Value, &w.Manager); err != nil {
			return nil, fmt.Errorf("read path writes of %s: %w", app, err)
		}
		w.At = time.Unix(0, at).UTC()
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read path writes of %s: %w", app, err)
	}
	return out, nil
}

// PruneWrites forgets what cycles before the given time saw.
func (s *Store) PruneWrites(ctx context.Context, before time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM path_writes WHERE at < ?`, before.UnixNano()); err != nil {
		return fmt.Errorf("prune path writes: %w", err)
	}
	return nil
}
