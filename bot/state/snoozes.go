package state

import (
	"context"
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
	r := appSnoozeRow{app, by, until.UnixNano()}
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO app_snoozes (app, until, by, seal) VALUES (?, ?, ?, ?)`,
		app, r.until, by, s.seal(appSnoozeTable, &r)); err != nil {
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
	rs, err := readSealed[appSnoozeRow](ctx, s, s.db, appSnoozeTable, ``)
	if err != nil {
		return nil, fmt.Errorf("read snoozed applications: %w", err)
	}
	out := make(map[string]AppSnooze, len(rs))
	for _, r := range rs {
		out[r.app] = AppSnooze{Until: time.Unix(0, r.until), By: r.by}
	}
	return out, nil
}

// AppSnoozed reports whether an application is snoozed at now, and the snooze.
func (s *Store) AppSnoozed(ctx context.Context, app string, now time.Time) (AppSnooze, bool, error) {
	rs, err := readSealed[appSnoozeRow](ctx, s, s.db, appSnoozeTable, `WHERE app = ?`, app)
	if err != nil {
		return AppSnooze{}, false, fmt.Errorf("read the snooze of application %s: %w", app, err)
	}
	if len(rs) == 0 || rs[0].until <= now.UnixNano() {
		return AppSnooze{}, false, nil
	}
	return AppSnooze{Until: time.Unix(0, rs[0].until), By: rs[0].by}, true, nil
}
