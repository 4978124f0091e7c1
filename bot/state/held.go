package state

import (
	"context"
	"fmt"
	"time"
)

// Held is a digest held back by quiet hours: the channel, and the digest view
// (JSON) merged over the quiet cycles.
type Held struct {
	Cursor, Channel, View string
	Since                 time.Time
}

// Hold keeps a channel's held digest (replacing what was held for its
// cursor); since is kept from the first hold.
func (s *Store) Hold(ctx context.Context, h Held) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("hold the digest of %s for after quiet hours: %w", h.Cursor, err)
	}
	defer tx.Rollback()
	old, err := readSealed[heldRow](ctx, s, tx, heldTable, `WHERE cursor = ?`, h.Cursor)
	if err != nil {
		return fmt.Errorf("hold the digest of %s for after quiet hours: %w", h.Cursor, err)
	}
	r := heldRow{h, h.Since.UnixNano()}
	if len(old) > 0 {
		r.since = old[0].since
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO held_digests (cursor, channel, view, since, seal) VALUES (?, ?, ?, ?, ?)`,
		h.Cursor, h.Channel, h.View, r.since, s.seal(heldTable, &r)); err != nil {
		return fmt.Errorf("hold the digest of %s for after quiet hours: %w", h.Cursor, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("hold the digest of %s for after quiet hours: %w", h.Cursor, err)
	}
	return nil
}

// HeldDigests are the digests held back by quiet hours, by cursor.
func (s *Store) HeldDigests(ctx context.Context) (map[string]Held, error) {
	rs, err := readSealed[heldRow](ctx, s, s.db, heldTable, ``)
	if err != nil {
		return nil, fmt.Errorf("read the digests held by quiet hours: %w", err)
	}
	out := make(map[string]Held, len(rs))
	for _, r := range rs {
		r.h.Since = time.Unix(0, r.since).UTC()
		out[r.h.Cursor] = r.h
	}
	return out, nil
}

// Release forgets a held digest once it is queued to be sent.
func (s *Store) Release(ctx context.Context, cursor string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM held_digests WHERE cursor = ?`, cursor); err != nil {
		return fmt.Errorf("release the held digest of %s: %w", cursor, err)
	}
	return nil
}
