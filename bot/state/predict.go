package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Predicted is the driftfix/predict check published on one pull request
// head commit.
type Predicted struct {
	Number int
	// Predictions counts the fields the check predicted (0: neutral).
	Predictions int
	// Reviewed says a review with suggestions was posted on the commit.
	Reviewed bool
	At       time.Time
}

// SavePredicted remembers the check published on a pull request's head
// commit in a repository (by its key), so that each head is checked once.
func (s *Store) SavePredicted(ctx context.Context, repo, sha string, p Predicted) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO predicted (repo, sha, number, predictions, reviewed, at) VALUES (?, ?, ?, ?, ?, ?)`,
		repo, sha, p.Number, p.Predictions, p.Reviewed, p.At.UnixNano())
	if err != nil {
		return fmt.Errorf("remember the prediction of %s@%s: %w", repo, sha, err)
	}
	return nil
}

// PredictedFor is the check published on a head commit of a repository;
// false when none was.
func (s *Store) PredictedFor(ctx context.Context, repo, sha string) (Predicted, bool, error) {
	var p Predicted
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT number, predictions, reviewed, at FROM predicted WHERE repo = ? AND sha = ?`, repo, sha).Scan(&p.Number, &p.Predictions, &p.Reviewed, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("read the prediction of %s@%s: %w", repo, sha, err)
	}
	p.At = time.Unix(0, at).UTC()
	return p, true, nil
}

// ForgetPredictedBefore forgets the heads checked before a time: a pull
// request's old heads are not checked again once it has moved on.
func (s *Store) ForgetPredictedBefore(ctx context.Context, before time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM predicted WHERE at < ?`, before.UnixNano()); err != nil {
		return fmt.Errorf("forget old predictions: %w", err)
	}
	return nil
}
