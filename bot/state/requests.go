package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Actions people ask for a fix (on the Drift Dashboard); the code that
// honours one clears it.
const (
	// ActionOpenNow asks to open the fix's pull request without waiting for the cooldown.
	ActionOpenNow = "open-now"
	// ActionRecheck asks to diagnose the fix's application again and update or close its PR.
	ActionRecheck = "recheck"
	// ActionUnreject asks to propose a rejected fix again: the pull request
	// that was closed when it was rejected no longer turns it down.
	ActionUnreject = "unreject"
	// ActionRunNow, recorded under an application's key (not a fix's), asks
	// the next cycle to diagnose the application at once and open its fixes
	// without the cooldown.
	ActionRunNow = "run-now"
)

// Request records that a person asked for action on a fix (by its key).
// Asking again keeps the first time.
func (s *Store) Request(ctx context.Context, fix, action string, at time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("remember the request to %s fix %s: %w", action, fix, err)
	}
	defer tx.Rollback()
	old, err := readSealed[requestRow](ctx, s, tx, requestsTable, `WHERE fix = ? AND action = ?`, fix, action)
	if err != nil {
		return fmt.Errorf("remember the request to %s fix %s: %w", action, fix, err)
	}
	if len(old) > 0 {
		return nil
	}
	r := requestRow{fix, action, at.UnixNano()}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO requests (fix, action, at, seal) VALUES (?, ?, ?, ?)`, fix, action, r.at, s.seal(requestsTable, &r)); err != nil {
		return fmt.Errorf("remember the request to %s fix %s: %w", action, fix, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("remember the request to %s fix %s: %w", action, fix, err)
	}
	return nil
}

// Requested reports whether action was asked for a fix and not cleared since.
func (s *Store) Requested(ctx context.Context, fix, action string) (bool, error) {
	rs, err := readSealed[requestRow](ctx, s, s.db, requestsTable, `WHERE fix = ? AND action = ?`, fix, action)
	if err != nil {
		return false, fmt.Errorf("read the request to %s fix %s: %w", action, fix, err)
	}
	return len(rs) > 0, nil
}

// ClearRequest forgets a request once it was acted on.
func (s *Store) ClearRequest(ctx context.Context, fix, action string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM requests WHERE fix = ? AND action = ?`, fix, action); err != nil {
		return fmt.Errorf("clear the request to %s fix %s: %w", action, fix, err)
	}
	return nil
}

// Requests returns, for one action, every key it was asked for and not
// cleared since, with when it was asked.
func (s *Store) Requests(ctx context.Context, action string) (map[string]time.Time, error) {
	rs, err := readSealed[requestRow](ctx, s, s.db, requestsTable, `WHERE action = ?`, action)
	if err != nil {
		return nil, fmt.Errorf("list the requests to %s: %w", action, err)
	}
	out := make(map[string]time.Time, len(rs))
	for _, r := range rs {
		out[r.fix] = time.Unix(0, r.at).UTC()
	}
	return out, nil
}

// Unreject forgets that a person turned a fix down, so it is proposed
// again; it reports whether the fix was rejected (by a row driftfix wrote).
func (s *Store) Unreject(ctx context.Context, fingerprint string) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("forget rejected fix %s: %w", fingerprint, err)
	}
	defer tx.Rollback()
	rs, err := readSealed[rejectionRow](ctx, s, tx, rejectedTable, `WHERE fingerprint = ?`, fingerprint)
	if err != nil {
		return false, fmt.Errorf("forget rejected fix %s: %w", fingerprint, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM rejected WHERE fingerprint = ?`, fingerprint); err != nil {
		return false, fmt.Errorf("forget rejected fix %s: %w", fingerprint, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("forget rejected fix %s: %w", fingerprint, err)
	}
	return len(rs) > 0, nil
}

// Rejection is a fix a person turned down: its key, application, why and when.
type Rejection struct {
	Fix, App, Reason string
	At               time.Time
}

// Rejections lists every fix turned down, oldest first.
func (s *Store) Rejections(ctx context.Context) ([]Rejection, error) {
	rs, err := readSealed[rejectionRow](ctx, s, s.db, rejectedTable, `ORDER BY at, fingerprint`)
	if err != nil {
		return nil, fmt.Errorf("list rejected fixes: %w", err)
	}
	out := make([]Rejection, 0, len(rs))
	for _, r := range rs {
		r.r.At = time.Unix(0, r.at).UTC()
		out = append(out, r.r)
	}
	return out, nil
}

// Dashboard returns the number of the dashboard issue last used in a
// repository (by its key) for a scope, or 0. It is a cache: the issue is
// found again on the host when the database is lost.
func (s *Store) Dashboard(ctx context.Context, repo, scope string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT number FROM dashboards WHERE repo = ? AND scope = ?`, repo, scope).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the dashboard issue of %s: %w", repo, err)
	}
	return n, nil
}

// SetDashboard remembers a repository's dashboard issue (0 forgets it).
func (s *Store) SetDashboard(ctx context.Context, repo, scope string, number int) error {
	var err error
	if number == 0 {
		_, err = s.db.ExecContext(ctx, `DELETE FROM dashboards WHERE repo = ? AND scope = ?`, repo, scope)
	} else {
		_, err = s.db.ExecContext(ctx, `INSERT OR REPLACE INTO dashboards (repo, scope, number) VALUES (?, ?, ?)`, repo, scope, number)
	}
	if err != nil {
		return fmt.Errorf("remember the dashboard issue of %s: %w", repo, err)
	}
	return nil
}
