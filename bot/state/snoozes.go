package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AppSnooze is an application whose digest lines are held back until a
// time, and who asked.
type AppSnooze struct {
	Until time.Time
	By    string
}

// SnoozeApp holds an application's digest lines back until a time (a
// person pressed Snooze in the digest). A later snooze replaces an earlier one.
func (s *Store) SnoozeApp(ctx context.Context, app string, until time.Time, by string) error {
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO app_snoozes (app, until, by) VALUES (?, ?, ?)`, app, until.UnixNano(), by); err != nil {
		return fmt.Errorf("snooze application %s: %w", app, err)
	}
	return nil
}

// AppSnoozes returns the applications snoozed at now, by application key;
// the snoozes that ended are forgotten on the way.
func (s *Store) AppSnoozes(ctx context.Context, now time.Time) (map[string]AppSnooze, error) {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM app_snoozes WHERE until <= ?`, now.UnixNano()); err != nil {
		return nil, fmt.Errorf("forget ended snoozes: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT app, until, by FROM app_snoozes`)
	if err != nil {
		return nil, fmt.Errorf("read snoozed applications: %w", err)
	}
	defer rows.Close()
	out := map[string]AppSnooze{}
	for rows.Next() {
		var app, by string
		var until int64
		if err := rows.Scan(&app, &until, &by); err != nil {
			return nil, fmt.Errorf("read snoozed applications: %w", err)
		}
		out[app] = AppSnooze{Until: time.Unix(0, until), By: by}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read snoozed applications: %w", err)
	}
	return out, nil
}

// AppSnoozed reports whether an application is snoozed at now, and the snooze.
func (s *Store) AppSnoozed(ctx context.Context, app string, now time.Time) (AppSnooze, bool, error) {
	var until int64
	var by string
	err := s.db.QueryRowContext(ctx, `SELECT until, by FROM app_snoozes WHERE app = ?`, app).Scan(&until, &by)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return AppSnooze{}, false, nil
	case err != nil:
		return AppSnooze{}, false, fmt.Errorf("read the snooze of application %s: %w", app, err)
	}
	if until <= now.UnixNano() {
		return AppSnooze{}, false, nil
	}
	return AppSnooze{Until: time.Unix(0, until), By: by}, true, nil
}
