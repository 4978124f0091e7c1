package config

import (
	"strings"
	"testing"
	"time"
)

// TestIgnoreRulesPolicy: ignoreRules turns the inventory on; staleAfter
// reads whole days or a duration and defaults to 14 days; without the key
// the inventory is off.
func TestIgnoreRulesPolicy(t *testing.T) {
	const head = "argocd: [{server: https://a.example.com, tokenFile: t}]\n"
	for _, tc := range []struct {
		name, in string
		on       bool
		stale    time.Duration
	}{
		{"off without the key", "", false, DefaultStaleAfter},
		{"days", "policy:\n  ignoreRules: {staleAfter: 30d}\n", true, 30 * 24 * time.Hour},
		{"a duration", "policy:\n  ignoreRules: {staleAfter: 48h}\n", true, 48 * time.Hour},
		{"the default", "policy:\n  ignoreRules: {}\n", true, DefaultStaleAfter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(head + tc.in))
			if err != nil {
				t.Fatal(err)
			}
			r := c.Policy.IgnoreRules
			if r.Enabled != tc.on || r.Stale() != tc.stale {
				t.Errorf("enabled %v, stale after %s; want %v, %s", r.Enabled, r.Stale(), tc.on, tc.stale)
			}
		})
	}
}

// TestIgnoreRulesPolicyErrors: a bad staleAfter, an unknown key, or the key
// in an override is an error naming the key, its line and what it must be.
func TestIgnoreRulesPolicyErrors(t *testing.T) {
	const head = "argocd: [{server: https://a.example.com, tokenFile: t}]\n"
	for _, tc := range []struct {
		in, key string
		line    int
		msg     string
	}{
		{"policy:\n  ignoreRules: {staleAfter: soon}\n", "policy.ignoreRules.staleAfter", 3, "number of days such as 14d"},
		{"policy:\n  ignoreRules: {staleAfter: 12h}\n", "policy.ignoreRules.staleAfter", 3, "at least 1d"},
		{"policy:\n  ignoreRules: {staleAfter: -3d}\n", "policy.ignoreRules.staleAfter", 3, "number of days"},
		{"policy:\n  ignoreRules: {stale: 14d}\n", "policy.ignoreRules.stale", 3, "unknown key"},
		{"policy:\n  ignoreRules: 14d\n", "policy.ignoreRules", 3, "must be a mapping"},
		{"overrides:\n  - match: {app: web}\n    policy: {ignoreRules: {staleAfter: 7d}}\n", "overrides[0].policy.ignoreRules", 4, "global policy only"},
	} {
		_, err := Parse([]byte(head + tc.in))
		es, _ := err.(Errors)
		found := false
		for _, e := range es {
			found = found || (e.Key == tc.key && e.Line == tc.line && strings.Contains(e.Msg, tc.msg))
		}
		if !found {
			t.Errorf("%q: errors %v lack %s at line %d saying %q", tc.in, err, tc.key, tc.line, tc.msg)
		}
	}
}
