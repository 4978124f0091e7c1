package state

import (
	"context"
	"fmt"
)

// MemoRecords calls each with every record memo.Memo kept, one at a
// time, by application.
func (s *Store) MemoRecords(ctx context.Context, each func(app string, rec []byte)) error {
	rows, err := s.db.QueryContext(ctx, `SELECT app, record FROM memo ORDER BY app`)
	if err != nil {
		return fmt.Errorf("read the kept diagnoses: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var app string
		var rec []byte
		if err := rows.Scan(&app, &rec); err != nil {
			return fmt.Errorf("read the kept diagnoses: %w", err)
		}
		each(app, rec)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the kept diagnoses: %w", err)
	}
	return nil
}

// SaveMemo forgets the applications of drop, then keeps each record put
// writes (a nil record forgets its application), in one transaction: a
// failed save changes nothing.
func (s *Store) SaveMemo(ctx context.Context, drop []string, put func(write func(app string, rec []byte) error) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("keep diagnoses: %w", err)
	}
	defer tx.Rollback()
	del, err := tx.PrepareContext(ctx, `DELETE FROM memo WHERE app = ?`)
	if err != nil {
		return fmt.Errorf("keep diagnoses: %w", err)
	}
	defer del.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO memo (app, record) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("keep diagnoses: %w", err)
	}
	defer ins.Close()
	for _, app := range drop {
		if _, err := del.ExecContext(ctx, app); err != nil {
			return fmt.Errorf("forget the kept diagnosis of %s: %w", app, err)
		}
	}
	err = put(func(app string, rec []byte) error {
		if rec == nil {
			if _, err := del.ExecContext(ctx, app); err != nil {
				return fmt.Errorf("forget the kept diagnosis of %s: %w", app, err)
			}
			return nil
		}
		if _, err := ins.ExecContext(ctx, app, rec); err != nil {
			return fmt.Errorf("keep the diagnosis of %s: %w", app, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("keep diagnoses: %w", err)
	}
	return nil
}
