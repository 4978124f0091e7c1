package config

import (
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

const full = `# driftfix policy
schedule: "*/10 * * * *"
jitter: 1m
stateFile: /data/state.db
platformRepos: [https://git.example.com/platform.git]
argocd:
  - name: main
    server: https://argocd.example.com
    tokenFile: /var/run/secrets/argocd/token
    shard: "shop-*"
github:
  appID: 12345
  privateKeyFile: /var/run/secrets/github/key.pem
slack:
  tokenEnv: SLACK_TOKEN
  channel: "#gitops"
policy:
  stuckAfter: 15m
  prsPerCycle: 3
  labels: [driftfix, gitops]
  reviewers: [platform-team]
  sensitivePaths: [env]
  fixes:
    hpa-replicas: [remove-field]
    webhook-mutation: []
  quietHours: {from: "22:00", to: "06:30", timezone: Europe/Berlin}
overrides:
  - match: {project: payments}
    policy:
      dryRun: true
      draft: true
      slackChannel: "#payments"
  - match: {app: "shop-*", namespace: "prod-*"}
    policy:
      stuckAfter: 30m
      sensitivePaths: [command]
      fixes:
        normalized: [set-value]
`

func TestParseFull(t *testing.T) {
	c, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if c.Schedule != "*/10 * * * *" || c.Jitter != time.Minute || len(c.ArgoCD) != 1 || c.ArgoCD[0].Shard != "shop-*" || c.GitHub.AppID != 12345 {
		t.Fatalf("config = %+v", c)
	}
	global := c.For("shop", "shop-web", "staging")
	if global.StuckAfter != 15*time.Minute || global.PRsPerCycle != 3 || global.OpenPRs != 20 || global.BranchPrefix != "driftfix" {
		t.Errorf("global policy with defaults = %+v", global)
	}
	if kinds, ok := global.Fixes[drift.CauseWebhookMutation]; !ok || len(kinds) != 0 {
		t.Errorf("an empty fix list means report only, got %v, %v", kinds, ok)
	}
	pay := c.For("payments", "pay-api", "prod-pay")
	if pay.DryRun == nil || !*pay.DryRun || pay.Draft == nil || !*pay.Draft || pay.SlackChannel != "#payments" {
		t.Errorf("payments override = %+v", pay)
	}
	shop := c.For("shop", "shop-web", "prod-eu")
	if shop.StuckAfter != 30*time.Minute || len(shop.Fixes[drift.CauseNormalized]) != 1 || len(shop.Fixes[drift.CauseHPAReplicas]) != 1 {
		t.Errorf("shop prod override = %+v", shop)
	}
	if got := shop.SensitivePaths; len(got) != 2 || got[0].Text != "env" || got[1].Text != "command" {
		t.Errorf("an override only adds sensitive paths, got %v", got)
	}
	if _, _, ok := shop.Sensitivity().Check("Deployment", drift.MustPointer("/spec/template/spec/containers/0/command"), nil); !ok {
		t.Error("policy sensitive paths must reach the safety check")
	}
	if c.Policy.Fixes[drift.CauseNormalized] != nil {
		t.Error("For must not change the global policy")
	}
}

func TestQuietHours(t *testing.T) {
	c, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	pol := c.For("x", "y", "z")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, tc := range []struct {
		at    string
		quiet bool
	}{{"23:00", true}, {"03:00", true}, {"06:29", true}, {"06:30", false}, {"12:00", false}, {"21:59", false}, {"22:00", true}} {
		h, m := tc.at[:2], tc.at[3:]
		var hh, mm int
		for _, c := range h {
			hh = hh*10 + int(c-'0')
		}
		for _, c := range m {
			mm = mm*10 + int(c-'0')
		}
		at := time.Date(2026, 12, 2, hh, mm, 0, 0, berlin)
		if got := pol.Quiet(at); got != tc.quiet {
			t.Errorf("Quiet(%s Berlin) = %v, want %v", tc.at, got, tc.quiet)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, key string
		line          int
		msg           string
	}{
		{"unknown key", "argocd: [{server: https://a.example.com, tokenFile: t}]\nschedul: x\n", "schedul", 2, "unknown key"},
		{"token inline", "argocd: [{server: https://a.example.com, token: abc}]\n", "argocd[0].token", 1, "never written in the config"},
		{"github private key inline", "argocd: [{server: https://a.example.com, tokenFile: t}]\ngithub:\n  privateKey: xyz\n", "github.privateKey", 3, "privateKeyFile"},
		{"bad schedule", "schedule: every day\nargocd: [{server: https://a.example.com, tokenFile: t}]\n", "schedule", 1, "not a cron schedule"},
		{"schedule minute out of range", "argocd: [{server: https://a.example.com, tokenFile: t}]\nschedule: '99 * * * *'\n", "schedule", 2, "above maximum"},
		{"schedule step of zero", "schedule: '*/0 * * * *'\nargocd: [{server: https://a.example.com, tokenFile: t}]\n", "schedule", 1, "not a cron schedule"},
		{"no full cycles", "fullCycleEvery: 0\nargocd: [{server: https://a.example.com, tokenFile: t}]\n", "fullCycleEvery", 1, "must be a whole number above 0"},
		{"bad duration", "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n  stuckAfter: ten minutes\n", "policy.stuckAfter", 3, "duration"},
		{"manual change fixes", "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n  fixes:\n    manual-change: [ignore-difference]\n", "policy.fixes.manual-change", 4, "never fixes"},
		{"unknown fix kind", "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n  fixes:\n    normalized: [rewrite]\n", "policy.fixes.normalized", 4, "unknown fix kind"},
		{"unknown cause", "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n  fixes:\n    weather: []\n", "policy.fixes.weather", 4, "unknown key"},
		{"no argocd", "schedule: '@hourly'\n", "argocd", 1, "at least one"},
		{"argocd without token", "argocd:\n  - server: https://a.example.com\n", "argocd[0]", 2, "tokenFile or tokenEnv"},
		{"argocd not a URL", "argocd: [{server: argocd.example.com, tokenFile: t}]\n", "argocd[0].server", 1, "http(s) URL"},
		{"github both modes", "argocd: [{server: https://a.example.com, tokenFile: t}]\ngithub:\n  appID: 1\n  privateKeyFile: k\n  tokenFile: t\n", "github", 3, "not both"},
		{"bad channel", "argocd: [{server: https://a.example.com, tokenFile: t}]\nslack: {channel: general}\n", "slack.channel", 2, "not a Slack channel"},
		{"repeated key", "argocd: [{server: https://a.example.com, tokenFile: t}]\ndryRun: true\ndryRun: false\n", "dryRun", 3, "appears twice"},
		{"override without match", "argocd: [{server: https://a.example.com, tokenFile: t}]\noverrides:\n  - policy: {dryRun: true}\n", "overrides[0]", 3, "needs a match"},
		{"bad quiet hours", "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n  quietHours: {from: '25:00', to: '06:00'}\n", "policy.quietHours.from", 3, "22:00"},
		{"bad timezone", "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n  quietHours: {from: '22:00', to: '06:00', timezone: Mars/Base}\n", "policy.quietHours.timezone", 3, "unknown time zone"},
		{"bad branch prefix", "argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy: {branchPrefix: 'a..b'}\n", "policy.branchPrefix", 2, "Git branch"},
		{"not yaml", "argocd: [\n", "(file)", 1, "not valid YAML"},
		{"slack person not an ID", "argocd: [{server: https://a.example.com, tokenFile: t}]\nslack:\n  people: {alice: alice-gh}\n", "slack.people.alice", 3, "not a Slack user ID"},
		{"slack person bad login", "argocd: [{server: https://a.example.com, tokenFile: t}]\nslack:\n  people: {U012AB3CD: 'no such login!'}\n", "slack.people.U012AB3CD", 3, "not a GitHub login"},
		{"slack people a list", "argocd: [{server: https://a.example.com, tokenFile: t}]\nslack:\n  people: [U012AB3CD]\n", "slack.people", 3, "Slack user IDs to GitHub logins"},
		{"slack user group by name", "argocd: [{server: https://a.example.com, tokenFile: t}]\nslack:\n  actors: {userGroups: ['@platform']}\n", "slack.actors.userGroups[0]", 3, "not a Slack user group ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			es, ok := err.(Errors)
			if !ok {
				t.Fatalf("error %T %v", err, err)
			}
			for _, e := range es {
				if e.Key == tt.key && e.Line == tt.line && strings.Contains(e.Msg, tt.msg) {
					return
				}
			}
			t.Errorf("errors %q lack %s at line %d saying %q", es.Error(), tt.key, tt.line, tt.msg)
		})
	}
}

func TestSlackActors(t *testing.T) {
	c, err := Parse([]byte("argocd: [{server: https://a.example.com, tokenFile: t}]\nslack:\n  people: {U012AB3CD: octo-cat, W0ABC: hubot}\n  actors: {userGroups: [S0PLATFORM]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Slack.People; len(got) != 2 || got["U012AB3CD"] != "octo-cat" || got["W0ABC"] != "hubot" {
		t.Errorf("people = %v", got)
	}
	if got := c.Slack.ActorGroups; len(got) != 1 || got[0] != "S0PLATFORM" {
		t.Errorf("user groups = %v", got)
	}
}

func TestAllErrorsAtOnce(t *testing.T) {
	_, err := Parse([]byte("schedule: nope\njitter: soon\nargocd: [{server: https://a.example.com, token: x}]\n"))
	es, _ := err.(Errors)
	if len(es) != 4 || es[0].Line != 1 || es[len(es)-1].Line != 3 {
		t.Errorf("every problem is reported, in line order: %q", err)
	}
	if strings.Contains(err.Error(), " x") {
		t.Error("an inline secret value must not be echoed in the error")
	}
}

// FuzzParse: a policy file never panics the parser; it is accepted or every
// problem comes back as Errors with a key and a line.
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("argocd: [{server: https://a.example.com, tokenFile: t}]\n"))
	f.Add([]byte("policy: {quietHours: {from: '22:00'}}\n"))
	f.Add([]byte("slack: {people: {U012AB3CD: octocat, U0X: [a]}, actors: {userGroups: [S0P, 7]}}\n"))
	f.Add([]byte("policy: {sensitivePaths: [env, {scope: [pod, core/ConfigMap], name: x, pattern: /containers/*/env, mode: whole, hidden: 'equals:y'}]}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			es, ok := err.(Errors)
			if !ok || len(es) == 0 {
				t.Fatalf("error %T %v", err, err)
			}
			for _, e := range es {
				if e.Key == "" || e.Msg == "" {
					t.Fatalf("error without key or message: %+v", e)
				}
			}
			return
		}
		if len(c.ArgoCD) == 0 {
			t.Fatal("accepted a config without Argo CD")
		}
		c.For("p", "a", "n")
	})
}

// TestDryRunEvidenceKey: dry-run evidence needs patch RBAC, so it is off
// unless an argocd entry turns it on.
func TestDryRunEvidenceKey(t *testing.T) {
	c, err := Parse([]byte("argocd:\n  - {server: https://a.example.com, tokenFile: t}\n  - {server: https://b.example.com, tokenFile: t, dryRunEvidence: true, dryRunBudget: 10}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := c.ArgoCD[0]; a.DryRunEvidence || a.DryRunBudget != 0 {
		t.Errorf("dry-run evidence on by default: %+v", a)
	}
	if b := c.ArgoCD[1]; !b.DryRunEvidence || b.DryRunBudget != 10 {
		t.Errorf("dryRunEvidence/dryRunBudget not read: %+v", b)
	}
	if _, err := Parse([]byte("argocd:\n  - {server: https://a.example.com, tokenFile: t, dryRunEvidence: yes please}\n")); err == nil || !strings.Contains(err.Error(), "argocd[0].dryRunEvidence") {
		t.Errorf("a bad dryRunEvidence value: %v", err)
	}
}

// TestLimits reads the limits section: sizes as Kubernetes writes them
// (binary and decimal suffixes, fractions that make whole bytes), a render
// timeout, and an error naming the key and line for anything else.
func TestLimits(t *testing.T) {
	base := "argocd: [{server: https://a.example.com, tokenFile: /t}]\n"
	c, err := Parse([]byte(base + "limits:\n  repoFetchBytes: 64Mi\n  renderedBytes: 512Ki\n  chartBytes: 1048576\n  valuesBytes: 64M\n  repoBytes: 1.5Gi\n  renderTimeout: 3s\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{RepoFetchBytes: 64 << 20, RenderedBytes: 512 << 10, ChartBytes: 1 << 20, ValuesBytes: 64e6, RepoBytes: 3 << 29, RenderTimeout: 3 * time.Second}
	if c.Limits != want {
		t.Errorf("limits %+v, want %+v", c.Limits, want)
	}
	for _, bad := range []string{"lots", "0", "-1Mi", "2Ti", "0.5", "100m", "1.5", "64 Mi", "[1]"} {
		_, err := Parse([]byte(base + "limits:\n  renderedBytes: " + bad + "\n"))
		if err == nil || !strings.Contains(err.Error(), "limits.renderedBytes") || !strings.Contains(err.Error(), "3") {
			t.Errorf("renderedBytes %q: error %v, want one naming limits.renderedBytes and line 3", bad, err)
		}
	}
}

// TestStuckAfterZero: stuckAfter 0s means at once, globally and in an
// override; a key left out keeps what applied before (10m by default).
func TestStuckAfterZero(t *testing.T) {
	const head = "argocd: [{server: https://a.example.com, tokenFile: t}]\n"
	for _, tc := range []struct {
		name         string
		yaml         string
		global, shop time.Duration
		other        time.Duration // an application no override matches
	}{
		{"unset", "", 10 * time.Minute, 10 * time.Minute, 10 * time.Minute},
		{"global 0s", "policy: {stuckAfter: 0s}\n", 0, 0, 0},
		{"override 0s", "overrides: [{match: {app: shop}, policy: {stuckAfter: 0s}}]\n", 10 * time.Minute, 0, 10 * time.Minute},
		{"global 0s, override 5m", "policy: {stuckAfter: 0s}\noverrides: [{match: {app: shop}, policy: {stuckAfter: 5m}}]\n", 0, 5 * time.Minute, 0},
		{"override without the key keeps the global 0s", "policy: {stuckAfter: 0s}\noverrides: [{match: {app: shop}, policy: {draft: true}}]\n", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(head + tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if c.Policy.StuckAfter != tc.global {
				t.Errorf("global stuckAfter %s, want %s", c.Policy.StuckAfter, tc.global)
			}
			if got := c.For("", "shop", "argocd").StuckAfter; got != tc.shop {
				t.Errorf("shop's stuckAfter %s, want %s", got, tc.shop)
			}
			if got := c.For("", "web", "argocd").StuckAfter; got != tc.other {
				t.Errorf("web's stuckAfter %s, want %s", got, tc.other)
			}
		})
	}
	if _, err := Parse([]byte(head + "policy: {stuckAfter: -1m}\n")); err == nil || !strings.Contains(err.Error(), "stuckAfter") {
		t.Errorf("a negative stuckAfter: %v", err)
	}
}
