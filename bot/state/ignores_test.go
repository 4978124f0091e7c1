package state

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestIgnoreRuleIdleKeptAcrossRestarts: the first cycle a rule hid nothing
// survives a restart and later idle cycles; hiding something again starts
// it over; a rule no inventory saw since a time is forgotten, per instance;
// a digest section's last post and the repositories with an ignore-rule
// pull request open are remembered.
func TestIgnoreRuleIdleKeptAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	st, err := Open(ctx, path, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"r1", "r2"} {
		if _, err := st.RuleIdle(ctx, r, "main", t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.RuleIdle(ctx, "r3", "edge", t0); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, err = Open(ctx, path, testSeal); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t1 := t0.Add(24 * time.Hour)
	if since, err := st.RuleIdle(ctx, "r1", "main", t1); err != nil || !since.Equal(t0) {
		t.Errorf("r1 idle since %s (%v), want %s", since, err, t0)
	}
	if err := st.RuleBusy(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if since, err := st.RuleIdle(ctx, "r1", "main", t1.Add(time.Hour)); err != nil || !since.Equal(t1.Add(time.Hour)) {
		t.Errorf("r1 after hiding something: idle since %s (%v), want %s", since, err, t1.Add(time.Hour))
	}
	// r2 was not seen by the inventory at t1: no longer declared.
	if err := st.ForgetRulesBefore(ctx, "main", t1); err != nil {
		t.Fatal(err)
	}
	if since, _ := st.RuleIdle(ctx, "r2", "main", t1.Add(2*time.Hour)); !since.Equal(t1.Add(2 * time.Hour)) {
		t.Errorf("r2 was not forgotten: idle since %s", since)
	}
	if since, _ := st.RuleIdle(ctx, "r3", "edge", t1.Add(2*time.Hour)); !since.Equal(t0) {
		t.Errorf("r3 of another instance was forgotten: idle since %s", since)
	}
	if _, ok, err := st.SectionPosted(ctx, "ignores/main"); ok || err != nil {
		t.Errorf("a section never posted reads as posted (%v)", err)
	}
	for _, at := range []time.Time{t0, t1} {
		if err := st.SetSectionPosted(ctx, "ignores/main", at); err != nil {
			t.Fatal(err)
		}
	}
	if at, ok, err := st.SectionPosted(ctx, "ignores/main"); !ok || err != nil || !at.Equal(t1) {
		t.Errorf("section posted %v at %s (%v), want at %s", ok, at, err, t1)
	}
	for _, r := range []string{"https://git.example.com/b.git", "https://git.example.com/a.git"} {
		if err := st.SetIgnorePRRepo(ctx, r, true, t1); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetIgnorePRRepo(ctx, "https://git.example.com/b.git", false, t1); err != nil {
		t.Fatal(err)
	}
	if repos, err := st.IgnorePRRepos(ctx); err != nil || len(repos) != 1 || repos[0] != "https://git.example.com/a.git" {
		t.Errorf("repositories with ignore-rule PRs: %v (%v), want a.git", repos, err)
	}
}
