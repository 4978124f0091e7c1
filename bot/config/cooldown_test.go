package config

import (
	"strings"
	"testing"
	"time"
)

// TestCooldownPolicy: a fix's first PR waits an hour and one cycle unless
// the policy says otherwise, globally or per override; 0s means no wait.
func TestCooldownPolicy(t *testing.T) {
	c, err := Parse([]byte(`
argocd: [{server: https://a.example.com, tokenFile: t}]
policy: {minStuckFor: 2h30m, minCycles: 3}
overrides:
  - match: {app: "canary-*"}
    policy: {minStuckFor: 0s, minCycles: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		app    string
		wait   time.Duration
		cycles int
	}{{"web", 150 * time.Minute, 3}, {"canary-web", 0, 1}} {
		if d, n := c.For("p", tc.app, "argocd").Cooldown(); d != tc.wait || n != tc.cycles {
			t.Errorf("%s: cooldown %s and %d cycles, want %s and %d", tc.app, d, n, tc.wait, tc.cycles)
		}
	}
	def, err := Parse([]byte("argocd: [{server: https://a.example.com, tokenFile: t}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d, n := def.For("p", "a", "n").Cooldown(); d != time.Hour || n != 1 {
		t.Errorf("default cooldown %s and %d cycles, want 1h and 1", d, n)
	}
}

// TestCooldownPolicyErrors: a bad value is an error naming the key and its line.
func TestCooldownPolicyErrors(t *testing.T) {
	const head = "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n"
	for _, tc := range []struct{ in, key, msg string }{
		{"  minStuckFor: -5m\n", "policy.minStuckFor", "must be a duration"},
		{"  minStuckFor: soon\n", "policy.minStuckFor", "must be a duration"},
		{"  minStuckFor: 14d\n", "policy.minStuckFor", "must be a duration"},
		{"  minCycles: 0\n", "policy.minCycles", "above 0"},
		{"  minCycles: two\n", "policy.minCycles", "above 0"},
		{"  minCycles: [1]\n", "policy.minCycles", "above 0"},
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
