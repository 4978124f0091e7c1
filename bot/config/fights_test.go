package config

import (
	"strings"
	"testing"
)

// TestFightsPolicy: the fight thresholds default to 3 flips and 6 self-heal
// syncs an hour; an override changes them for the applications it matches.
func TestFightsPolicy(t *testing.T) {
	c, err := Parse([]byte(`
argocd: [{server: https://a.example.com, tokenFile: t}]
policy:
  fights: {minFlips: 4}
overrides:
  - match: {app: "batch-*"}
    policy: {fights: {maxSelfHealSyncsPerHour: 20}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		app          string
		flips, syncs int
	}{{"web", 4, 6}, {"batch-1", 4, 20}} {
		f := c.For("p", tc.app, "argocd").Fights
		if f.Flips() != tc.flips || f.SyncsPerHour() != tc.syncs {
			t.Errorf("%s: flips %d syncs %d, want %d %d", tc.app, f.Flips(), f.SyncsPerHour(), tc.flips, tc.syncs)
		}
	}
	off, err := Parse([]byte("argocd: [{server: https://a.example.com, tokenFile: t}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f := off.For("p", "a", "n").Fights; f.Flips() != 3 || f.SyncsPerHour() != 6 {
		t.Errorf("defaults: %d flips, %d syncs an hour", f.Flips(), f.SyncsPerHour())
	}
}

// TestFightsPolicyErrors: a bad threshold is an error naming the key, its
// line and what it must be.
func TestFightsPolicyErrors(t *testing.T) {
	const head = "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n"
	for _, tc := range []struct{ in, key, msg string }{
		{"  fights: {minFlips: 1}\n", "policy.fights.minFlips", "at least 2"},
		{"  fights: {minFlips: -2}\n", "policy.fights.minFlips", "above 0"},
		{"  fights: {maxSelfHealSyncsPerHour: many}\n", "policy.fights.maxSelfHealSyncsPerHour", "whole number"},
		{"  fights: {maxSelfHealSyncsPerHour: 0}\n", "policy.fights.maxSelfHealSyncsPerHour", "above 0"},
		{"  fights: {flips: 3}\n", "policy.fights.flips", "unknown key"},
		{"  fights: 3\n", "policy.fights", "must be a mapping"},
	} {
		_, err := Parse([]byte(head + tc.in))
		es, _ := err.(Errors)
		found := false
		for _, e := range es {
			found = found || (e.Key == tc.key && e.Line == 3 && strings.Contains(e.Msg, tc.msg))
		}
		if !found {
			t.Errorf("%q: errors %v lack %s at line 3 saying %q", tc.in, err, tc.key, tc.msg)
		}
	}
}
