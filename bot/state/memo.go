package state

import (
	"context"
	"fmt"
)

// MemoRecords returns every record cycle.Memo kept, by application.
func (s *Store) MemoRecords(ctx context.Context) (map[string][]byte, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT app, record FROM memo`)
	if err != nil {
		return nil, fmt.Errorf("read the kept diagnoses: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var app string
		var rec []byte
		if err := rows.Scan(&app, &rec); err != nil {
			return nil, fmt.Errorf("read the kept diagnoses: %w", err)
		}
		out[app] = rec
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the kept diagnoses: %w", err)
	}
	return out, nil
}

// SaveMemo keeps put's records and forgets the applications of drop, in
// one transaction.
func (s *Store) SaveMemo(ctx context.Context, put map[string][]byte, drop []string) error {
	if len(put) == 0 && len(drop) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("keep diagnoses: %w", err)
	}
	defer tx.Rollback()
	for _, app := range drop {
		if _, err := tx.ExecContext(ctx, `DELETE FROM memo WHERE app = ?`, app); err != nil {
			return fmt.Errorf("forget the kept diagnosis of %s: %w", app, err)
		}
	}
	for app, rec := range put {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO memo (app, record) VALUES (?, ?)`, app, rec); err != nil {
			return fmt.Errorf("keep the diagnosis of %s: %w", app, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("keep diagnoses: %w", err)
	}
	return nil
}
