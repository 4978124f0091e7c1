package config

import (
	"strings"
	"testing"
)

// TestDashboardPolicy: the dashboard is off unless the policy turns it on,
// titled "Drift Dashboard" unless it names a title; an override turns it
// on or off and retitles it for the applications it matches.
func TestDashboardPolicy(t *testing.T) {
	c, err := Parse([]byte(`
argocd: [{server: https://a.example.com, tokenFile: t}]
policy:
  dashboard: {enabled: true}
overrides:
  - match: {project: payments}
    policy: {dashboard: {title: "Payments drift"}}
  - match: {app: "sandbox-*"}
    policy: {dashboard: {enabled: false}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		project, app string
		on           bool
		title        string
	}{
		{"shop", "web", true, "Drift Dashboard"},
		{"payments", "ledger", true, "Payments drift"},
		{"shop", "sandbox-1", false, "Drift Dashboard"},
	} {
		d := c.For(tc.project, tc.app, "argocd").Dashboard
		if d.On() != tc.on || d.IssueTitle() != tc.title {
			t.Errorf("%s/%s: on=%v title=%q, want %v %q", tc.project, tc.app, d.On(), d.IssueTitle(), tc.on, tc.title)
		}
	}
	off, err := Parse([]byte("argocd: [{server: https://a.example.com, tokenFile: t}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if off.For("p", "a", "n").Dashboard.On() {
		t.Error("the dashboard must be off by default")
	}
}

// TestDashboardPolicyErrors: a bad value is an error naming the key and its line.
func TestDashboardPolicyErrors(t *testing.T) {
	const head = "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n"
	for _, tc := range []struct{ in, key, msg string }{
		{"  dashboard: {enabled: yes please}\n", "policy.dashboard.enabled", "true or false"},
		{"  dashboard: {title: ''}\n", "policy.dashboard.title", "must not be empty"},
		{"  dashboard: {title: \"a\\nb\"}\n", "policy.dashboard.title", "one line"},
		{"  dashboard: {title: " + strings.Repeat("x", 257) + "}\n", "policy.dashboard.title", "at most 256"},
		{"  dashboard: {enable: true}\n", "policy.dashboard.enable", "unknown key"},
		{"  dashboard: true\n", "policy.dashboard", "must be a mapping"},
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
