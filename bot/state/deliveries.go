package state

import (
	"context"
	"fmt"
	"time"
)

// DeliveriesKept is how long a webhook delivery's id is remembered: a
// delivery sent again within it (GitHub's redelivery, a replay) is not
// acted on twice.
const DeliveriesKept = 24 * time.Hour

// FirstDelivery records a webhook delivery's id received at now and reports
// whether it is the first time the id is seen within DeliveriesKept. Ids
// older than that are forgotten on the way.
func (s *Store) FirstDelivery(ctx context.Context, id string, now time.Time) (bool, error) {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM deliveries WHERE at < ?`, now.Add(-DeliveriesKept).UnixNano()); err != nil {
		return false, fmt.Errorf("forget old webhook deliveries: %w", err)
	}
	res, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO deliveries (id, at) VALUES (?, ?)`, id, now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("remember webhook delivery %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("remember webhook delivery %s: %w", id, err)
	}
	return n == 1, nil
}

// ForgetDelivery forgets a delivery's id, so the same delivery sent again
// is acted on (one that could not be queued).
func (s *Store) ForgetDelivery(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM deliveries WHERE id = ?`, id); err != nil {
		return fmt.Errorf("forget webhook delivery %s: %w", id, err)
	}
	return nil
}
