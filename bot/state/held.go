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
	_, err := s.db.ExecContext(ctx, `INSERT INTO held_digests (cursor, channel, view, since) VALUES (?, ?, ?, ?)
		ON CONFLICT (cursor) DO UPDATE SET channel = excluded.channel, view = excluded.view`, h.Cursor, h.Channel, h.View, h.Since.UnixNano())
	if err != nil {
		return fmt.Errorf("hold the digest of %s for after quiet hours: %w", h.Cursor, err)
	}
	return nil
}

// HeldDigests are the digests held back by quiet hours, by cursor.
func (s *Store) HeldDigests(ctx context.Context) (map[string]Held, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT cursor, channel, view, since FROM held_digests`)
	if err != nil {
		return nil, fmt.Errorf("read the digests held by quiet hours: %w", err)
	}
	defer rows.Close()
	out := map[string]Held{}
	for rows.Next() {
		var h Held
		var since int64
		if err := rows.Scan(&h.Cursor, &h.Channel, &h.View, &since); err != nil {
			return nil, fmt.Errorf("read the digests held by quiet hours: %w", err)
		}
		h.Since = time.Unix(0, since).UTC()
		out[h.Cursor] = h
	}
	return out, rows.Err()
}

// Release forgets a held digest once it is queued to be sent.
func (s *Store) Release(ctx context.Context, cursor string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM held_digests WHERE cursor = ?`, cursor); err != nil {
		return fmt.Errorf("release the held digest of %s: %w", cursor, err)
	}
	return nil
}
