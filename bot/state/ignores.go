package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// RuleIdle records that an ignore rule (by the caller's key: its holder and
// content) of an instance hid nothing in this cycle, and returns the first
// cycle it hid nothing since it last hid something.
func (s *Store) RuleIdle(ctx context.Context, rule, instance string, now time.Time) (time.Time, error) {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO idle_rules (rule, instance, since, seen) VALUES (?, ?, ?, ?)
		ON CONFLICT (rule) DO UPDATE SET seen = excluded.seen`, rule, instance, now.UnixNano(), now.UnixNano()); err != nil {
		return time.Time{}, fmt.Errorf("remember that an ignore rule of %s hid nothing: %w", instance, err)
	}
	var at int64
	if err := s.db.QueryRowContext(ctx, `SELECT since FROM idle_rules WHERE rule = ?`, rule).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("read since when an ignore rule of %s hid nothing: %w", instance, err)
	}
	return time.Unix(0, at).UTC(), nil
}

// RuleBusy forgets that an ignore rule hid nothing: it hides something now.
func (s *Store) RuleBusy(ctx context.Context, rule string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM idle_rules WHERE rule = ?`, rule); err != nil {
		return fmt.Errorf("forget an ignore rule that hides something again: %w", err)
	}
	return nil
}

// ForgetRulesBefore forgets the rules of an instance no inventory saw since
// the given time: they are no longer declared.
func (s *Store) ForgetRulesBefore(ctx context.Context, instance string, before time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM idle_rules WHERE instance = ? AND seen < ?`, instance, before.UnixNano()); err != nil {
		return fmt.Errorf("forget the ignore rules of %s no longer declared: %w", instance, err)
	}
	return nil
}

// SectionPosted returns when a digest section (by the caller's name) was
// last posted; ok is false when it never was.
func (s *Store) SectionPosted(ctx context.Context, section string) (time.Time, bool, error) {
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT at FROM sections_posted WHERE section = ?`, section).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read when the digest section %s was posted: %w", section, err)
	}
	return time.Unix(0, at).UTC(), true, nil
}

// SetSectionPosted remembers when a digest section was posted.
func (s *Store) SetSectionPosted(ctx context.Context, section string, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO sections_posted (section, at) VALUES (?, ?)
		ON CONFLICT (section) DO UPDATE SET at = excluded.at`, section, at.UnixNano()); err != nil {
		return fmt.Errorf("remember that the digest section %s was posted: %w", section, err)
	}
	return nil
}
