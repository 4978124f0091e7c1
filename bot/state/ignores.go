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

// IgnorePRRepos returns the repositories (by URL) where driftfix has, as far
// as it last saw, an ignore-rule pull request open.
func (s *Store) IgnorePRRepos(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT repo FROM ignore_pr_repos ORDER BY repo`)
	if err != nil {
		return nil, fmt.Errorf("read the repositories with ignore-rule pull requests: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, fmt.Errorf("read the repositories with ignore-rule pull requests: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the repositories with ignore-rule pull requests: %w", err)
	}
	return out, nil
}

// SetIgnorePRRepo remembers whether a repository has an ignore-rule pull
// request of driftfix's open.
func (s *Store) SetIgnorePRRepo(ctx context.Context, repo string, open bool, now time.Time) error {
	var err error
	if open {
		_, err = s.db.ExecContext(ctx, `INSERT INTO ignore_pr_repos (repo, at) VALUES (?, ?) ON CONFLICT (repo) DO UPDATE SET at = excluded.at`, repo, now.UnixNano())
	} else {
		_, err = s.db.ExecContext(ctx, `DELETE FROM ignore_pr_repos WHERE repo = ?`, repo)
	}
	if err != nil {
		return fmt.Errorf("remember whether %s has an ignore-rule pull request open: %w", repo, err)
	}
	return nil
}
