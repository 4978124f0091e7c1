package bot

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// platformPolicy is the policy file as the platform team keeps it in
// acme/platform: comments, blank lines, writers of its own.
const platformPolicy = `# driftfix's policy, kept by the platform team.
argocd:
  - name: main   # production
    server: https://argocd.example.com
    tokenEnv: T

policy:
  labels: [driftfix]
  dashboard: {enabled: true}
  # Our own controllers.
  writers:
    - manager: acme-operator
      is: controller
      owns: [/spec/replicas]
`

// writerWorld is a world whose application shop has /spec/replicas written
// by manager, which nothing places (no HPA, no catalog entry, no status),
// and whose policy is kept in acme/platform.
func writerWorld(t *testing.T, manager string) (*world, time.Time) {
	t.Helper()
	w, now := stuckWorld(t, dashboardConfig, "shop")
	s := w.setApp("shop", "shop", true, now)
	for _, e := range drift.List(s.Resources[0].Live, "metadata", "managedFields") {
		if m := drift.Map(e); drift.Str(m, "manager") == "kube-controller-manager" {
			m["manager"] = manager
			delete(m, "subresource")
		}
	}
	// No HPA, in the cluster or in Git: nothing places the writer.
	w.base.Cluster = nil
	kept := s.Resources[:0]
	for _, r := range s.Resources {
		if r.Ref().Kind != "HorizontalPodAutoscaler" {
			kept = append(kept, r)
		}
	}
	s.Resources = kept
	dir := filepath.Join(w.dir, "git")
	u, err := githubtest.NewRepo(dir, "acme", "platform", map[string]string{"deploy/driftfix.yaml": platformPolicy})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.gh.AddRepo(dir, "acme", "platform"); err != nil {
		t.Fatal(err)
	}
	w.cfg.PolicyRepo = config.PolicyRepo{URL: u, File: "deploy/driftfix.yaml"}
	for _, login := range []string{"maintainer", "shop-dev"} {
		w.gh.SetPermission("acme", "shop", login, githost.PermissionWrite)
	}
	w.gh.SetPermission("acme", "platform", "maintainer", githost.PermissionWrite)
	return w, now
}

// policyPRs are the pull requests of acme/platform.
func (w *world) policyPRs() []githubtest.PullRequest { return w.gh.PullRequests("acme", "platform") }

// tickWriter ticks, as login, a writer's box by editing the dashboard body
// (the same line whether the box is shown or not: a re-read of a ticked box).
func (w *world) tickWriter(login, manager, action string) {
	w.t.Helper()
	d := w.dashboard("shop")
	words := map[string]string{templates.ActionController: "a controller", templates.ActionPerson: "a person"}[action]
	line := fmt.Sprintf("  - [x] %s <!-- driftfix:do=%s key=%s -->", words, action, plan.WriterKey(manager))
	if err := w.gh.EditIssueAs("acme", "shop", d.Number, login, d.Body+"\n"+line+"\n"); err != nil {
		w.t.Fatal(err)
	}
}

// TestDashboardWriterBoxes: a writer nothing places is on the dashboard,
// its name inert, with a controller and a person box. A box ticked by an
// account that cannot write to the policy's repository opens nothing; one
// ticked by a maintainer opens one pull request to acme/platform whose
// policy file parses, keeps every line it had and places exactly that
// manager; ticking again, in later cycles, opens nothing more, and once the
// entry is merged nothing is proposed for it at all.
func TestDashboardWriterBoxes(t *testing.T) {
	for _, tc := range []struct {
		name, manager string
		is            string
	}{
		{"a plain name", "replica-tuner", templates.ActionController},
		{"markdown, a mention, a link and html", "x` @acme/admins [docs](https://evil.example) <img src=x>", templates.ActionPerson},
		{"a glob", "*", templates.ActionPerson},
		{"yaml that would add an entry", "t\n    - manager: '*'\n      is: person # \"", templates.ActionController},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, now := writerWorld(t, tc.manager)
			out := w.cycle(&now)
			d := w.dashboard("shop")
			if !strings.Contains(d.Body, "**Writers driftfix could not place**") || !strings.Contains(d.Body, templates.Code(tc.manager)) ||
				!strings.Contains(d.Body, "key="+plan.WriterKey(tc.manager)) || len(out.Result.Stuck) != 1 {
				t.Fatalf("the writer must be listed with its boxes:\n%s", d.Body)
			}
			rest := strings.NewReplacer(templates.Code(tc.manager), "", templates.Text(tc.manager), "").Replace(d.Body) // code, and escaped text in the evidence
			for _, live := range []string{"@acme", "<img", "evil.example", "manager: '*'"} {
				if strings.Contains(rest, live) {
					t.Errorf("the manager's %q is live on the dashboard:\n%s", live, d.Body)
				}
			}

			w.tickWriter("shop-dev", tc.manager, tc.is) // can write to acme/shop, not to acme/platform
			out = w.cycle(&now)
			if n := len(w.policyPRs()); n != 0 {
				t.Fatalf("a box ticked by an account that cannot write to the policy's repository opened %d pull requests", n)
			}
			if !strings.Contains(strings.Join(out.Published.Skipped, "\n"), `"shop-dev" cannot write to acme/platform`) {
				t.Errorf("the cycle must say why the box was not followed: %q", out.Published.Skipped)
			}

			w.tickWriter("maintainer", tc.manager, tc.is)
			out = w.cycle(&now)
			prs := w.policyPRs()
			if len(prs) != 1 || len(out.Published.Opened) != 1 || strings.Contains(prs[0].Title, tc.manager) {
				t.Fatalf("one pull request to the policy, its title without the manager: %+v %+v", prs, out.Published)
			}
			file, err := w.gh.File("acme", "platform", prs[0].Head, "deploy/driftfix.yaml")
			if err != nil {
				t.Fatal(err)
			}
			is := map[string]drift.WriterKind{templates.ActionController: drift.WriterController, templates.ActionPerson: drift.WriterPerson}[tc.is]
			checkPolicyWriter(t, file, tc.manager, is)
			if d := w.dashboard("shop"); strings.Contains(d.Body, "key="+plan.WriterKey(tc.manager)) || !strings.Contains(d.Body, fmt.Sprintf("proposed in acme/platform#%d", prs[0].Number)) {
				t.Errorf("while its pull request is open, the writer shows it instead of boxes:\n%s", d.Body)
			}

			for i := 0; i < 2; i++ { // the same box read again, in later cycles
				w.tickWriter("maintainer", tc.manager, tc.is)
				if out := w.cycle(&now); len(out.Published.Opened) != 0 || len(w.policyPRs()) != 1 {
					t.Fatalf("a ticked box read again opened another pull request: %+v", out.Published)
				}
			}
			if err := w.gh.Merge("acme", "platform", prs[0].Number); err != nil {
				t.Fatal(err)
			}
			w.tickWriter("maintainer", tc.manager, tc.is)
			out = w.cycle(&now)
			if len(out.Published.Opened) != 0 || len(w.policyPRs()) != 1 || !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "places it already") {
				t.Fatalf("an entry the policy has must propose nothing: %+v", out.Published)
			}
		})
	}
}

// checkPolicyWriter holds a proposed policy file to what its reviewer
// relies on: it parses, keeps the platform team's lines in order, and its
// new last writer places exactly manager as is.
func checkPolicyWriter(t *testing.T, file, manager string, is drift.WriterKind) {
	t.Helper()
	rest := file
	for _, l := range strings.SplitAfter(platformPolicy, "\n") {
		i := strings.Index(rest, l)
		if i < 0 {
			t.Fatalf("the policy file lost line %q:\n%s", l, file)
		}
		rest = rest[i+len(l):]
	}
	cfg, err := config.Parse([]byte(file))
	if err != nil {
		t.Fatalf("the proposed policy does not parse: %v\n%s", err, file)
	}
	ws := cfg.Policy.Writers
	if len(ws) != 2 || !ws[1].MatchesManager(manager) || ws[1].Is != is || ws[1].MatchesManager("kube-controller-manager") || ws[0].Manager != "acme-operator" {
		t.Fatalf("the writers must be acme-operator and exactly %q as a %s: %+v\n%s", manager, is, ws, file)
	}
}

// TestDashboardWriterBothBoxes: an edit that ticks both boxes of one writer
// says two things; neither is followed.
func TestDashboardWriterBothBoxes(t *testing.T) {
	w, now := writerWorld(t, "replica-tuner")
	w.cycle(&now)
	if err := w.gh.TickAs("acme", "shop", w.dashboard("shop").Number, "maintainer", "- [ ] a controller"); err != nil {
		t.Fatal(err)
	}
	if err := w.gh.TickAs("acme", "shop", w.dashboard("shop").Number, "maintainer", "- [ ] a person"); err != nil {
		t.Fatal(err)
	}
	out := w.cycle(&now)
	if len(w.policyPRs()) != 0 || !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "neither is followed") {
		t.Fatalf("both boxes ticked must open nothing and say so: %+v", out.Published)
	}
}

// TestDashboardProposeAgain: a fix turned down (the dashboard's stop box, or
// its pull request closed by a person) is listed with a box; ticked by a
// maintainer, the fix is proposed again in a new pull request in the next
// cycle, once, and the rejection does not come back from the closed pull
// request, even with the state database lost.
func TestDashboardProposeAgain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reject func(w *world, pr githubtest.PullRequest)
		reason string
	}{
		{"stopped on the dashboard", func(w *world, _ githubtest.PullRequest) {
			if err := w.gh.TickAs("acme", "shop", w.dashboard("shop").Number, "maintainer", "- [ ] stop proposing this fix and close"); err != nil {
				w.t.Fatal(err)
			}
		}, "asked to stop on the Drift Dashboard"},
		{"closed by a person", func(w *world, pr githubtest.PullRequest) {
			if err := w.gh.CloseUnmerged("acme", "shop", pr.Number); err != nil {
				w.t.Fatal(err)
			}
		}, "was closed unmerged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, now := stuckWorld(t, dashboardConfig, "shop")
			w.gh.SetPermission("acme", "shop", "maintainer", githost.PermissionWrite)
			w.gh.SetPermission("acme", "shop", "reader", githost.PermissionRead)
			w.cycle(&now)
			first := w.open("shop")
			if len(first) != 1 {
				t.Fatalf("open PRs %+v", first)
			}
			tc.reject(w, first[0])
			w.cycle(&now)
			d := w.dashboard("shop")
			if len(w.open("shop")) != 0 || !strings.Contains(d.Body, tc.reason) || !strings.Contains(d.Body, "- [ ] propose this fix again") {
				t.Fatalf("the rejected fix must be listed with its box:\n%s", d.Body)
			}
			if err := w.gh.TickAs("acme", "shop", d.Number, "reader", "- [ ] propose this fix again"); err != nil {
				t.Fatal(err)
			}
			w.cycle(&now)
			if _, ok, _ := w.store().Rejected(context.Background(), keyOfRejected(t, w)); !ok {
				t.Fatal("a reader's box ended the rejection")
			}
			if err := w.gh.TickAs("acme", "shop", w.dashboard("shop").Number, "maintainer", "- [ ] propose this fix again"); err != nil {
				t.Fatal(err)
			}
			w.cycle(&now) // the box is read after this cycle's proposals
			if d := w.dashboard("shop"); strings.Contains(d.Body, "[x]") || strings.Contains(d.Body, "Rejected or ignored") || !strings.Contains(d.Body, "proposed again in the next cycle") {
				t.Fatalf("the box must be unticked and the fix shown as proposed again:\n%s", d.Body)
			}
			out := w.cycle(&now)
			again := w.open("shop")
			if len(out.Published.Opened) != 1 || len(again) != 1 || again[0].Number == first[0].Number {
				t.Fatalf("the fix must be proposed again in a new pull request: %+v %+v", out.Published, again)
			}
			comments := w.gh.Comments("acme", "shop", first[0].Number)
			if last := comments[len(comments)-1]; !strings.Contains(last.Body, "proposes this fix again") {
				t.Errorf("the closed pull request must say the fix is proposed again: %q", last.Body)
			}
			w.loseDatabase()
			for i := 0; i < 2; i++ {
				if out := w.cycle(&now); len(out.Published.Opened)+len(out.Published.Rejected) != 0 || len(w.open("shop")) != 1 {
					t.Fatalf("proposed again once, and not rejected again from the closed pull request: %+v", out.Published)
				}
			}
		})
	}
}

// keyOfRejected is the key of the one rejected fix of the world.
func keyOfRejected(t *testing.T, w *world) string {
	t.Helper()
	rs, err := w.store().Rejections(context.Background())
	if err != nil || len(rs) != 1 {
		t.Fatalf("rejections %+v %v", rs, err)
	}
	return rs[0].Fix
}

// TestDashboardRunAgainNow: an application OutOfSync for less than
// stuckAfter is not diagnosed; after a maintainer ticks "run again now",
// the next cycle diagnoses it and opens its fix without the cooldown, the
// box is unticked, and the cycle after that waits again as before.
func TestDashboardRunAgainNow(t *testing.T) {
	cfg := strings.Replace(dashboardConfig, "dashboard: {enabled: true}}", "dashboard: {enabled: true}, stuckAfter: 2h, minStuckFor: 3h}", 1)
	w, now := stuckWorld(t, cfg, "shop")
	old := w.setApp("shop", "shop", true, now)
	drift.Map(old.Application, "status", "operationState")["finishedAt"] = now.Add(-4 * time.Hour).Format(time.RFC3339)
	fresh := w.setApp("shop-new", "shop", true, now) // synced an hour ago: within stuckAfter
	w.gh.SetPermission("acme", "shop", "maintainer", githost.PermissionWrite)
	stuck := func(out Outcome, app string) bool {
		for _, s := range out.Result.Stuck {
			if s.App.Name == app {
				return true
			}
		}
		return false
	}
	if out := w.cycle(&now); !stuck(out, "shop") || stuck(out, "shop-new") {
		t.Fatalf("only shop is past stuckAfter: %+v", out.Result.Stuck)
	}
	d := w.dashboard("shop")
	if err := w.gh.TickAs("acme", "shop", d.Number, "maintainer", "- [ ] run again now"); err != nil {
		t.Fatal(err)
	}
	if out := w.cycle(&now); stuck(out, "shop-new") {
		t.Fatal("the box is read after this cycle's scan")
	}
	if d := w.dashboard("shop"); strings.Contains(d.Body, "[x]") || !strings.Contains(d.Body, "(Asked: the next cycle runs them again now.)") {
		t.Fatalf("the box must be unticked and the request shown:\n%s", d.Body)
	}
	drift.Map(fresh.Application, "status", "operationState")["finishedAt"] = now.Add(-time.Hour).Format(time.RFC3339) // synced again: still within stuckAfter
	out := w.cycle(&now)
	if !stuck(out, "shop-new") || len(out.Published.Opened) != 1 || !strings.Contains(out.Published.Opened[0], "acme/shop#") {
		t.Fatalf("run again now: shop-new must be diagnosed and its fix opened without the cooldown: %+v %+v", out.Result.Stuck, out.Published)
	}
	if asked, err := w.store().Requests(context.Background(), state.ActionRunNow); err != nil || len(asked) != 0 {
		t.Fatalf("a request honoured must be cleared: %v %v", asked, err)
	}
	if d := w.dashboard("shop"); strings.Contains(d.Body, "(Asked:") {
		t.Errorf("the dashboard still says a run is asked:\n%s", d.Body)
	}
	drift.Map(fresh.Application, "status", "operationState")["finishedAt"] = now.Add(-time.Hour).Format(time.RFC3339)
	if out := w.cycle(&now); stuck(out, "shop-new") {
		t.Error("without a new tick, the next cycle waits for stuckAfter again")
	}
}

// TestDashboardWriterChangedMind: a writers pull request a reviewer closes
// unmerged is not proposed again for that box, and the writer's boxes come
// back: the other box opens a pull request of its own.
func TestDashboardWriterChangedMind(t *testing.T) {
	w, now := writerWorld(t, "replica-tuner")
	w.cycle(&now)
	w.tickWriter("maintainer", "replica-tuner", templates.ActionController)
	w.cycle(&now)
	first := w.policyPRs()
	if len(first) != 1 {
		t.Fatalf("policy PRs %+v", first)
	}
	if err := w.gh.CloseUnmerged("acme", "platform", first[0].Number); err != nil {
		t.Fatal(err)
	}
	w.cycle(&now)
	if d := w.dashboard("shop"); !strings.Contains(d.Body, "- [ ] a person <!-- driftfix:do=writer-person key="+plan.WriterKey("replica-tuner")) {
		t.Fatalf("with its pull request closed, the writer's boxes are back:\n%s", d.Body)
	}
	w.tickWriter("maintainer", "replica-tuner", templates.ActionController)
	if out := w.cycle(&now); len(out.Published.Opened) != 0 || !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "unmerged; not proposed again") {
		t.Fatalf("a box whose pull request a person closed must open nothing: %+v", out.Published)
	}
	w.tickWriter("maintainer", "replica-tuner", templates.ActionPerson)
	w.cycle(&now)
	prs := w.policyPRs()
	if len(prs) != 2 || prs[1].State != "open" {
		t.Fatalf("the other box must open its own pull request: %+v", prs)
	}
	file, err := w.gh.File("acme", "platform", prs[1].Head, "deploy/driftfix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checkPolicyWriter(t, file, "replica-tuner", drift.WriterPerson)
}
