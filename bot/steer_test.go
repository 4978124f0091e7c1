package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// TestCommandsOnlyFromWriters: on a public repository anyone can comment, so
// a `/driftfix ignore` counts only from an account that can write to the
// repository. A passer-by's and a read-only collaborator's commands are not
// followed (and the cycle says so); a maintainer's is.
func TestCommandsOnlyFromWriters(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	cycle := func() Outcome { return w.cycle(&now) }
	cycle()
	prs := w.open("shop")
	if len(prs) != 1 {
		t.Fatalf("one PR expected, got %+v", prs)
	}
	n := prs[0].Number
	w.gh.SetPermission("acme", "shop", "reader", githost.PermissionRead)
	for _, tc := range []struct{ login, association string }{
		{"mallory", "NONE"},
		{"drive-by", "CONTRIBUTOR"},
		{"reader", "COLLABORATOR"}, // a collaborator, but read-only
		{"ghost", "MEMBER"},        // an organization member without access to this repository
	} {
		w.gh.CommentAs("acme", "shop", n, tc.login, tc.association, "/driftfix ignore")
		out := cycle()
		if len(w.open("shop")) != 1 || len(out.Published.Rejected) != 0 {
			t.Fatalf("a /driftfix ignore from %s (%s) stopped the fix: %+v", tc.login, tc.association, out.Published)
		}
		if !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "/driftfix ignore from "+tc.login) {
			t.Errorf("the cycle must say the command of %s was not followed: %q", tc.login, out.Published.Skipped)
		}
	}
	if c := w.gh.CallCount("GET /repos/{owner}/{repo}/collaborators/{username}/permission"); c == 0 || c > 8 {
		t.Errorf("the permission API is asked only for members and collaborators, once per cycle: %d calls", c)
	}
	w.gh.SetPermission("acme", "shop", "maintainer", githost.PermissionWrite)
	w.gh.CommentAs("acme", "shop", n, "maintainer", "MEMBER", "/driftfix ignore")
	out := cycle()
	if len(w.open("shop")) != 0 || len(out.Published.Rejected) != 1 {
		t.Fatalf("a maintainer's /driftfix ignore must stop the fix: %+v", out.Published)
	}
	for _, c := range w.gh.Comments("acme", "shop", n) {
		switch {
		case c.Author == "maintainer" && (len(c.Reactions) != 1 || c.Reactions[0] != "+1 by driftfix[bot]"):
			t.Errorf("the followed command must be acknowledged with one +1 by driftfix: %q", c.Reactions)
		case c.Author != "maintainer" && len(c.Reactions) != 0:
			t.Errorf("a command not followed must not be acknowledged: %s got %q", c.Author, c.Reactions)
		}
	}
}

// TestForgedClosedMarker: a person who closes driftfix's PR and pastes the
// "closed by driftfix" marker into a comment cannot make driftfix treat the
// rejection as its own and reopen the fix after a lost database.
func TestForgedClosedMarker(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	run := func() Outcome { return w.cycle(&now) }
	run()
	prs := w.open("shop")
	if len(prs) != 1 {
		t.Fatalf("one PR expected, got %+v", prs)
	}
	if err := w.gh.CloseUnmerged("acme", "shop", prs[0].Number); err != nil {
		t.Fatal(err)
	}
	w.gh.CommentAs("acme", "shop", prs[0].Number, "person", "COLLABORATOR", "closing.\n\n<!-- driftfix:closed-by-driftfix -->")
	w.loseDatabase()
	out := run()
	if len(w.gh.PullRequests("acme", "shop")) != 1 || !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "a person closed") {
		t.Fatalf("a forged marker reopened a rejected fix: %+v, PRs %+v", out.Published, w.gh.PullRequests("acme", "shop"))
	}
}

// TestCommandsSurviveLostDatabase: what a writer asked, /driftfix ignore,
// /driftfix snooze or the dashboard's stop box, is read again from
// driftfix's own closing comment when the state database is lost: the fix
// is not proposed again (a snooze until it ends), and the closed PR is not
// taken for a drift that went and came back.
func TestCommandsSurviveLostDatabase(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		snooze        bool
	}{
		{"ignore", "/driftfix ignore", false},
		{"snooze", "/driftfix snooze 2d", true},
		{"dashboard stop", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, now := stuckWorld(t, dashboardConfig, "shop")
			w.cycle(&now)
			n := w.open("shop")[0].Number
			w.gh.SetPermission("acme", "shop", "ops", githost.PermissionWrite)
			if tc.command != "" {
				w.gh.CommentAs("acme", "shop", n, "ops", "MEMBER", tc.command)
			} else if err := w.gh.TickAs("acme", "shop", w.dashboard("shop").Number, "ops", "- [ ] stop proposing this fix and close"); err != nil {
				t.Fatal(err)
			}
			w.cycle(&now)
			if len(w.open("shop")) != 0 {
				t.Fatal("the PR must be closed as asked")
			}
			for i := 0; i < 3; i++ {
				w.loseDatabase()
				out := w.cycle(&now)
				if len(w.gh.PullRequests("acme", "shop")) != 1 || len(out.Published.Opened) != 0 {
					t.Fatalf("after a lost database the fix was proposed again: %+v", out.Published)
				}
			}
			if !tc.snooze {
				return
			}
			now = now.Add(2 * 24 * time.Hour)
			w.setApp("shop", "shop", true, now.Add(-2*time.Hour))
			w.loseDatabase()
			w.cycle(&now)
			if len(w.open("shop")) != 1 || len(w.gh.PullRequests("acme", "shop")) != 2 {
				t.Fatalf("once the snooze is over the fix is proposed again: %+v", w.gh.PullRequests("acme", "shop"))
			}
		})
	}
}

// TestCommandsRecheckOnceAfterLostDatabase: a /driftfix recheck is acted on
// once and then acknowledged; a bot that lost its state database reads
// driftfix's reaction and does not act on it again (here in quiet hours,
// where a recheck asked would wait in the state database).
func TestCommandsRecheckOnceAfterLostDatabase(t *testing.T) {
	cfg := strings.Replace(worldConfig, "draft: true}", `draft: true, quietHours: {from: "12:40", to: "23:00", timezone: UTC}}`, 1)
	w, now := stuckWorld(t, cfg, "shop")
	w.cycle(&now) // 12:00
	w.cycle(&now) // 12:15
	pr := w.open("shop")[0]
	m := templates.KeyMarkerRE.FindStringSubmatch(pr.Body)
	if m == nil {
		t.Fatalf("no key marker in the body:\n%s", pr.Body)
	}
	key := m[1]
	w.gh.SetPermission("acme", "shop", "ops", githost.PermissionWrite)
	w.gh.CommentAs("acme", "shop", pr.Number, "ops", "MEMBER", "/driftfix recheck")
	if out := w.cycle(&now); len(out.Published.Checked) != 1 { // 12:30
		t.Fatalf("the recheck must publish the check again: %+v", out.Published)
	}
	for i := 0; i < 2; i++ { // quiet hours
		w.loseDatabase()
		w.cycle(&now)
		if asked, err := w.store().Requested(context.Background(), key, state.ActionRecheck); err != nil || asked {
			t.Fatalf("the recheck was followed again after a lost database: %v %v", asked, err)
		}
	}
	if cs := w.gh.Comments("acme", "shop", pr.Number); len(cs) != 1 || strings.Join(cs[0].Reactions, ",") != "+1 by driftfix[bot]" {
		t.Fatalf("the command must carry one acknowledgement: %+v", cs)
	}
	if c := w.gh.CallCount("GET /repos/{owner}/{repo}/issues/comments/{id}/reactions"); c != 3 {
		t.Errorf("driftfix's reaction is read once per command and database: %d reads, want 3", c)
	}
}

// TestIgnoreLabelOnlyFromWriters: the driftfix/ignore label stops a fix
// only when the account that applied it (the issue events' actor) can
// write to the repository. A triage collaborator's label and a workflow's
// (github-actions[bot], which GitHub does not answer for as a
// collaborator) are not followed: the cycle says so, and one comment per
// labelling says so on the pull request, however many cycles see it. A
// maintainer applying the label again stops the fix.
func TestIgnoreLabelOnlyFromWriters(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	w.cycle(&now)
	prs := w.open("shop")
	if len(prs) != 1 {
		t.Fatalf("one PR expected, got %+v", prs)
	}
	n := prs[0].Number
	w.gh.SetPermission("acme", "shop", "triager", githost.PermissionTriage)
	w.gh.SetPermission("acme", "shop", "lead", githost.PermissionMaintain)
	refusals := func() []string {
		var out []string
		for _, c := range w.gh.Comments("acme", "shop", n) {
			if c.Author == "driftfix[bot]" && strings.Contains(c.Body, "driftfix/ignore") && strings.Contains(c.Body, "cannot write") {
				out = append(out, c.Body)
			}
		}
		return out
	}
	for i, who := range []string{"triager", "github-actions[bot]"} {
		w.gh.LabelAs("acme", "shop", n, who, "driftfix/ignore")
		for range 2 {
			out := w.cycle(&now)
			if len(w.open("shop")) != 1 || len(out.Published.Rejected) != 0 {
				t.Fatalf("the label from %s stopped the fix: %+v", who, out.Published)
			}
			if !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "driftfix/ignore label from "+who+" not followed") {
				t.Errorf("the cycle must say the label from %s was not followed: %q", who, out.Published.Skipped)
			}
		}
		if got := refusals(); len(got) != i+1 || !strings.Contains(got[i], "`"+who+"`") {
			t.Fatalf("one comment per labelling must say the label from %s is not followed, got %q", who, got)
		}
		w.gh.UnlabelAs("acme", "shop", n, who, "driftfix/ignore")
	}
	if c := w.gh.CallCount("GET /repos/{owner}/{repo}/issues/{number}/events"); c != 4 {
		t.Errorf("the events are read once per cycle that sees the label: %d reads, want 4", c)
	}
	w.gh.LabelAs("acme", "shop", n, "lead", "driftfix/ignore")
	out := w.cycle(&now)
	if len(w.open("shop")) != 0 || len(out.Published.Rejected) != 1 {
		t.Fatalf("a maintainer's label must stop the fix: %+v", out.Published)
	}
	m := templates.KeyMarkerRE.FindStringSubmatch(prs[0].Body)
	if m == nil {
		t.Fatalf("no key marker in the body:\n%s", prs[0].Body)
	}
	if why, ok, err := w.store().Rejected(context.Background(), m[1]); err != nil || !ok || !strings.Contains(why, "@lead") {
		t.Errorf("the rejection must name who asked: %q %v %v", why, ok, err)
	}
	w.cycle(&now)
	if len(w.gh.PullRequests("acme", "shop")) != 1 {
		t.Fatal("a fix stopped by a maintainer's label came back")
	}
}
