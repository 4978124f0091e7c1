package bot

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/state"
)

const checkRuns = "POST /repos/{owner}/{repo}/check-runs"
const checkUpdates = "PATCH /repos/{owner}/{repo}/check-runs/{id}"

// verify is the one driftfix/verify check run on a commit.
func (w *world) verify(repo, sha string) githubtest.CheckRun {
	w.t.Helper()
	runs := w.gh.CheckRuns("acme", repo, sha)
	if len(runs) != 1 || runs[0].Name != "driftfix/verify" {
		w.t.Fatalf("want one driftfix/verify check run on %s, got %+v", sha, runs)
	}
	return runs[0]
}

// TestCheckRunFixingPR: a fix PR gets a passing check on its head when it is
// opened (the plan's verification), the next cycle checks the head's own
// files and says so, and later cycles publish nothing while nothing changes.
func TestCheckRunFixingPR(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	w.cycle(&now)
	pr := w.open("shop")[0]
	head := w.gh.Head("acme", "shop", pr.Head)
	run := w.verify("shop", head)
	if run.Conclusion != "success" || !strings.HasPrefix(run.Title, "Fixes 1 of 1 differing path") || !strings.Contains(run.Summary, "while planning it") {
		t.Fatalf("check on opening: %+v", run)
	}
	if !strings.Contains(run.Text, "`/spec/replicas`") || !strings.Contains(run.Text, "| fixed |") || !strings.Contains(run.Text, "HorizontalPodAutoscaler") {
		t.Errorf("the check's table must show the path, its status and the evidence:\n%s", run.Text)
	}
	if run.DetailsURL != "https://argocd.example.com/applications/argocd/shop" {
		t.Errorf("details link %q", run.DetailsURL)
	}

	out := w.cycle(&now) // the head's own files are checked now
	run = w.verify("shop", head)
	if run.Conclusion != "success" || !strings.Contains(run.Summary, "from commit") || run.Updates != 1 || len(out.Published.Checked) != 1 {
		t.Fatalf("check of the head's files: %+v, published %+v", run, out.Published.Checked)
	}
	posts, patches := w.gh.CallCount(checkRuns), w.gh.CallCount(checkUpdates)
	for i := 0; i < 2; i++ {
		if out := w.cycle(&now); len(out.Published.Checked) != 0 {
			t.Fatalf("an unchanged head and result must not be published again: %+v", out.Published.Checked)
		}
	}
	if w.gh.CallCount(checkRuns) != posts || w.gh.CallCount(checkUpdates) != patches {
		t.Errorf("check API calls while nothing changed: %d→%d creates, %d→%d updates", posts, w.gh.CallCount(checkRuns), patches, w.gh.CallCount(checkUpdates))
	}
}

// TestCheckRunPersonEditedPR: a person's commit on the fix's branch is
// checked on its own the next cycle: putting replicas back fails (the path
// still differs), changing the image as well fails (a new difference), and
// a different edit that does fix passes.
func TestCheckRunPersonEditedPR(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	w.cycle(&now)
	pr := w.open("shop")[0]
	fixed, err := w.gh.File("acme", "shop", pr.Head, "apps/shop/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	orig, err := w.gh.File("acme", "shop", "main", "apps/shop/web.yaml")
	if err != nil || !strings.Contains(orig, "replicas: 2") || !strings.Contains(fixed, "registry.example.com/web:1.0.0") {
		t.Fatalf("not the manifest this test edits: %v\n%s", err, orig)
	}
	for _, tc := range []struct {
		name, content, conclusion, title, row string
	}{
		{"replicas put back", strings.Replace(orig, "replicas: 2", "replicas: 4", 1), "failure", "1 of 1 path still differs", "| still differs |"},
		{"the fix and a new image", strings.Replace(fixed, "registry.example.com/web:1.0.0", "registry.example.com/web:2.0.0", 1), "failure", "Makes 1 new difference", "| new difference |"},
		{"another edit that fixes", fixed + "# replicas are the HPA's\n", "success", "Fixes 1 of 1 differing path", "| fixed |"},
	} {
		if err := w.gh.CommitFile("acme", "shop", pr.Head, "apps/shop/web.yaml", tc.content, "dev"); err != nil {
			t.Fatal(err)
		}
		head := w.gh.Head("acme", "shop", pr.Head)
		out := w.cycle(&now)
		run := w.verify("shop", head)
		if run.Conclusion != tc.conclusion || !strings.HasPrefix(run.Title, tc.title) || !strings.Contains(run.Text, tc.row) || !strings.Contains(run.Summary, "apps/shop/web.yaml") {
			t.Errorf("%s: check %+v\n%s", tc.name, run, run.Text)
		}
		if len(out.Published.Checked) != 1 || len(w.open("shop")) != 1 {
			t.Errorf("%s: the person's head must be checked once and the PR stay open: %+v", tc.name, out.Published)
		}
	}
	if got, _ := w.gh.File("acme", "shop", pr.Head, "apps/shop/web.yaml"); !strings.HasSuffix(got, "# replicas are the HPA's\n") {
		t.Errorf("driftfix must not overwrite the person's commits:\n%s", got)
	}
}

// TestDashboardCooldownHoldsBackFreshFinding: right after a sync, a stuck
// application's fix waits for minStuckFor since that sync and minCycles
// cycles, shown on the Drift Dashboard as a fix not opened yet, cooling
// down; "open now" is not needed for a finding that has waited.
func TestDashboardCooldownHoldsBackFreshFinding(t *testing.T) {
	cfg := strings.Replace(dashboardConfig, "dashboard: {enabled: true}}", "dashboard: {enabled: true}, minStuckFor: 40m, minCycles: 2}", 1)
	w := newWorld(t, cfg)
	now := worldNow
	w.addRepo("shop")
	w.setApp("shop", "shop", true, now.Add(45*time.Minute)) // synced 15 minutes ago
	for i := 0; i < 2; i++ {
		out := w.cycle(&now)
		if len(w.open("shop")) != 0 || !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "cooling down") {
			t.Fatalf("cycle %d: a fresh finding must wait: %+v", i+1, out.Published)
		}
		if d := w.dashboard("shop"); !strings.Contains(d.Body, "**Fixes not opened yet**") || !strings.Contains(d.Body, "cooling down") {
			t.Fatalf("cycle %d: the dashboard must show the fix cooling down:\n%s", i+1, d.Body)
		}
	}
	out := w.cycle(&now) // 45 minutes since the sync, third cycle
	if len(w.open("shop")) != 1 || len(out.Published.Opened) != 1 {
		t.Fatalf("after the cooldown the PR opens: %+v", out.Published)
	}
	if d := w.dashboard("shop"); strings.Contains(d.Body, "cooling down") || !strings.Contains(d.Body, "**Open fix pull requests**") {
		t.Errorf("the dashboard must list the opened PR, no longer cooling down:\n%s", d.Body)
	}

	// Zero means zero: no wait at all.
	cfg = strings.Replace(worldConfig, "draft: true}", "draft: true, minStuckFor: 0s}", 1)
	w = newWorld(t, cfg)
	now = worldNow
	w.addRepo("cart")
	w.setApp("cart", "cart", true, now.Add(50*time.Minute))
	if w.cycle(&now); len(w.open("cart")) != 1 {
		t.Fatal("minStuckFor: 0s must not hold a fix back")
	}
}

// TestCommandsRecheckAndSnooze: /driftfix recheck from a writer publishes
// the check again once; /driftfix snooze 14d closes the PR and holds the fix
// until then, after which it is proposed again; a command that cannot be read
// is answered with a confused reaction; a passer-by's snooze is not followed.
func TestCommandsRecheckAndSnooze(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	w.cycle(&now)
	w.cycle(&now)
	n := w.open("shop")[0].Number
	w.gh.SetPermission("acme", "shop", "ops", githost.PermissionWrite)
	w.gh.CommentAs("acme", "shop", n, "ops", "MEMBER", "/driftfix recheck")
	patches := w.gh.CallCount(checkUpdates)
	out := w.cycle(&now)
	if len(out.Published.Checked) != 1 || w.gh.CallCount(checkUpdates) != patches+1 {
		t.Fatalf("/driftfix recheck must publish the check again: %+v", out.Published)
	}
	if out := w.cycle(&now); len(out.Published.Checked) != 0 {
		t.Fatal("a recheck must be followed once, not every cycle")
	}
	w.gh.CommentAs("acme", "shop", n, "mallory", "NONE", "/driftfix snooze 30d")
	w.gh.CommentAs("acme", "shop", n, "ops", "MEMBER", "/driftfix snooze 14x")
	out = w.cycle(&now)
	if len(w.open("shop")) != 1 || len(out.Published.Snoozed) != 0 {
		t.Fatalf("neither a passer-by's nor an unreadable snooze may close the PR: %+v", out.Published)
	}
	w.gh.CommentAs("acme", "shop", n, "ops", "MEMBER", "/driftfix snooze 14d")
	out = w.cycle(&now)
	if len(w.open("shop")) != 0 || len(out.Published.Snoozed) != 1 {
		t.Fatalf("/driftfix snooze 14d must close the PR: %+v", out.Published)
	}
	comments := w.gh.Comments("acme", "shop", n)
	reactions := map[string]string{}
	for _, c := range comments {
		reactions[c.Body+" "+c.Author] = strings.Join(c.Reactions, ",")
	}
	for body, want := range map[string]string{
		"/driftfix recheck ops": "+1 by driftfix[bot]", "/driftfix snooze 14x ops": "confused by driftfix[bot]",
		"/driftfix snooze 14d ops": "+1 by driftfix[bot]", "/driftfix snooze 30d mallory": "",
	} {
		if reactions[body] != want {
			t.Errorf("reactions on %q: %q, want %q", body, reactions[body], want)
		}
	}
	if last := comments[len(comments)-1]; last.Author != "driftfix[bot]" || !strings.Contains(last.Body, "Snoozed until") || !strings.Contains(last.Body, "@ops") {
		t.Errorf("closing comment %+v", last)
	}
	for i := 0; i < 2; i++ {
		out = w.cycle(&now)
		if len(w.gh.PullRequests("acme", "shop")) != 1 || !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "snoozed on") {
			t.Fatalf("a snoozed fix came back early: %+v", out.Published)
		}
	}
	now = now.Add(15 * 24 * time.Hour)
	w.setApp("shop", "shop", true, now)
	w.cycle(&now)
	if len(w.open("shop")) != 1 || len(w.gh.PullRequests("acme", "shop")) != 2 {
		t.Fatalf("after the snooze the fix is proposed again: %+v", w.gh.PullRequests("acme", "shop"))
	}
}

// TestCheckRunAfterMergeComment: when Argo CD has synced a merged fix, driftfix says
// the result once on the merged PR: Synced, or the paths that still differ
// at the merged revision.
func TestCheckRunAfterMergeComment(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop", "cart")
	w.cycle(&now)
	for _, repo := range []string{"shop", "cart"} {
		if err := w.gh.Merge("acme", repo, w.open(repo)[0].Number); err != nil {
			t.Fatal(err)
		}
	}
	w.cycle(&now) // merged; Argo CD has not synced yet
	for _, repo := range []string{"shop", "cart"} {
		if cs := w.gh.Comments("acme", repo, 1); len(cs) != 0 {
			t.Fatalf("%s: nothing to say before Argo CD syncs: %+v", repo, cs)
		}
	}
	w.setApp("shop", "shop", false, now) // Synced
	merged := w.gh.PullRequests("acme", "cart")[0].MergeSHA
	w.setAppAt("cart", "cart", true, now, merged) // synced the merge, still stuck
	out := w.cycle(&now)
	if len(out.Published.Fixed) != 1 || len(out.Published.StillDrifts) != 1 {
		t.Fatalf("outcomes after the sync: %+v", out.Published)
	}
	shop := w.gh.Comments("acme", "shop", 1)
	if len(shop) != 1 || !strings.Contains(shop[0].Body, "is Synced") {
		t.Errorf("shop: %+v", shop)
	}
	cart := w.gh.Comments("acme", "cart", 1)
	if len(cart) != 1 || !strings.Contains(cart[0].Body, "still OutOfSync") || !strings.Contains(cart[0].Body, "`/spec/replicas`") {
		t.Errorf("cart: %+v", cart)
	}
	w.cycle(&now)
	if len(w.gh.Comments("acme", "shop", 1))+len(w.gh.Comments("acme", "cart", 1)) != 2 {
		t.Error("the result of a merge is said once")
	}
}

// TestDashboardOpenNowSkipsCooldown: a fix cooling down is listed on the
// dashboard; a writer ticking "open the fix PR now" opens it on the next
// cycle that reads the request, before the cooldown is over.
func TestDashboardOpenNowSkipsCooldown(t *testing.T) {
	cfg := strings.Replace(dashboardConfig, "dashboard: {enabled: true}}", "dashboard: {enabled: true}, minStuckFor: 6h}", 1)
	w, now := stuckWorld(t, cfg, "shop")
	w.cycle(&now)
	d := w.dashboard("shop")
	if len(w.open("shop")) != 0 || !strings.Contains(d.Body, "cooling down") || !strings.Contains(d.Body, "- [ ] open the fix PR now") {
		t.Fatalf("the fix must wait and the dashboard offer to open it:\n%s", d.Body)
	}
	w.gh.SetPermission("acme", "shop", "maintainer", githost.PermissionWrite)
	if err := w.gh.TickAs("acme", "shop", d.Number, "maintainer", "- [ ] open the fix PR now"); err != nil {
		t.Fatal(err)
	}
	w.cycle(&now) // the tick is read and recorded
	out := w.cycle(&now)
	if len(w.open("shop")) != 1 || len(out.Published.Opened) != 1 {
		t.Fatalf("open now must skip the cooldown: %+v", out.Published)
	}
	if ok, _ := w.store().Requested(context.Background(), keyOf(t, d.Body, "- [ ] open the fix PR now"), state.ActionOpenNow); ok {
		t.Error("the request must be cleared once the PR is open")
	}
}

// TestCheckRunAfterMergeCommentOnceAfterLostDatabase: a merged fix whose
// application Argo CD synced while it stayed OutOfSync gets its one
// after-merge comment, even when a person pasted its marker first; a
// restart with a lost database, which learns of the merged PR again from
// GitHub, does not say it a second time.
func TestCheckRunAfterMergeCommentOnceAfterLostDatabase(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "cart")
	w.cycle(&now)
	orig, err := w.gh.File("acme", "cart", "main", "apps/shop/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.gh.Merge("acme", "cart", w.open("cart")[0].Number); err != nil {
		t.Fatal(err)
	}
	merged := w.gh.PullRequests("acme", "cart")[0].MergeSHA
	w.setAppAt("cart", "cart", true, now, merged) // synced the merge, still stuck
	// A person puts the file back on main: the same fix is planned again,
	// and its branch's newest PR is the merged one.
	if err := w.gh.CommitFile("acme", "cart", "main", "apps/shop/web.yaml", orig, "dev"); err != nil {
		t.Fatal(err)
	}
	w.gh.CommentAs("acme", "cart", 1, "person", "MEMBER", "merged, thanks\n\n<!-- driftfix:after-merge -->")
	said := func() []githubtest.Comment {
		var own []githubtest.Comment
		for _, c := range w.gh.Comments("acme", "cart", 1) {
			if c.Author == "driftfix[bot]" {
				own = append(own, c)
			}
		}
		return own
	}
	w.cycle(&now)
	w.cycle(&now)
	if cs := said(); len(cs) != 1 || !strings.Contains(cs[0].Body, "still OutOfSync") {
		t.Fatalf("one after-merge comment expected (a person's marker is not driftfix's): %+v", cs)
	}
	for i := 0; i < 2; i++ {
		w.loseDatabase()
		w.cycle(&now)
		w.cycle(&now)
	}
	if cs := said(); len(cs) != 1 {
		t.Fatalf("the result of a merge is said once, also after a lost database: %d comments\n%+v", len(cs), cs)
	}
}

// TestCheckRunPollsHeadsConditionally: a running bot reads each open fix
// PR once per cycle, with a conditional request that GitHub answers 304
// (not counted against the rate limit) while nobody touches it; when a
// person pushes to the branch, that read sees the new head and its check
// is published in the same cycle.
func TestCheckRunPollsHeadsConditionally(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	r, closeDB := w.runner() // one long-lived process
	defer closeDB()
	r.PredictPerCycle = -1 // predict lists pull requests for itself (TestPredictOnPullRequests); these are the fix PR's reads
	once := func() Outcome {
		t.Helper()
		out, err := r.Once(context.Background(), now)
		if err != nil || len(out.Result.Errors)+len(out.Published.Errors) > 0 {
			t.Fatalf("cycle: %v %v %v", err, out.Result.Errors, out.Published.Errors)
		}
		now = now.Add(15 * time.Minute)
		return out
	}
	routes := []string{"GET /repos/{owner}/{repo}/pulls", "GET /repos/{owner}/{repo}/pulls/{number}"}
	reads := func() (all, unchanged int) {
		for _, rt := range routes {
			all += w.gh.CallCount(rt)
			unchanged += w.gh.NotModifiedCount(rt)
		}
		return all, unchanged
	}
	once()
	once() // the head's own files checked
	pr := w.open("shop")[0]
	all0, unchanged0 := reads()
	const quiet = 3
	for i := 0; i < quiet; i++ {
		if out := once(); len(out.Published.Checked) != 0 {
			t.Fatalf("an untouched PR's check was published again: %+v", out.Published.Checked)
		}
	}
	all1, unchanged1 := reads()
	if all1-all0 != quiet || unchanged1-unchanged0 != quiet {
		t.Fatalf("%d cycles read the PR %d times (%d answered 304); want once a cycle, each a 304", quiet, all1-all0, unchanged1-unchanged0)
	}

	fixed, err := w.gh.File("acme", "shop", pr.Head, "apps/shop/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.gh.CommitFile("acme", "shop", pr.Head, "apps/shop/web.yaml", fixed+"# reviewed\n", "dev"); err != nil {
		t.Fatal(err)
	}
	head := w.gh.Head("acme", "shop", pr.Head)
	out := once()
	all2, unchanged2 := reads()
	if all2-all1 != 1 || unchanged2 != unchanged1 {
		t.Errorf("the cycle after a push must read the PR once, fresh: %d reads, %d answered 304", all2-all1, unchanged2-unchanged1)
	}
	if run := w.verify("shop", head); len(out.Published.Checked) != 1 || run.Conclusion != "success" || !strings.Contains(run.Summary, "from commit") {
		t.Fatalf("the person's head must be checked in the cycle that sees it: %+v %+v", out.Published.Checked, run)
	}
}

// TestCheckRunNonFixingPR: a fix PR whose head does not fix its drift
// concludes failure, with why, and the Drift Dashboard shows the failure
// beside the PR: a head that leaves the targeted path as it was (an
// unrelated change), one that changes nothing against the synced revision
// (the fix reverted), and one that does not render.
func TestCheckRunNonFixingPR(t *testing.T) {
	for _, tc := range []struct {
		name        string
		edit        func(orig string) (string, string)
		title, text string
	}{
		{"unrelated change", func(orig string) (string, string) { return "apps/shop/web.yaml", orig + "# the HPA owns replicas\n" },
			"1 of 1 path still differs", "| still differs |"},
		{"fix reverted", func(orig string) (string, string) { return "apps/shop/web.yaml", orig },
			"Cannot be checked: the head changes no file of the synced revision", "| still differs |"},
		{"does not render", func(orig string) (string, string) { return "apps/shop/web.yaml", "kind: Deployment\nspec: [unclosed\n" },
			"Cannot be checked:", "| still differs |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, now := stuckWorld(t, dashboardConfig, "shop")
			w.cycle(&now)
			pr := w.open("shop")[0]
			orig, err := w.gh.File("acme", "shop", "main", "apps/shop/web.yaml")
			if err != nil {
				t.Fatal(err)
			}
			// The branch holds the fix and then a person's commit that undoes it.
			file, content := tc.edit(orig)
			if err := w.gh.CommitFile("acme", "shop", pr.Head, file, content, "dev"); err != nil {
				t.Fatal(err)
			}
			head := w.gh.Head("acme", "shop", pr.Head)
			out := w.cycle(&now)
			run := w.verify("shop", head)
			if run.Conclusion != "failure" || !strings.HasPrefix(run.Title, tc.title) || !strings.Contains(run.Text, tc.text) || len(out.Published.Checked) != 1 {
				t.Fatalf("check of a head that does not fix: %+v\n%s\npublished %+v", run, run.Text, out.Published.Checked)
			}
			w.cycle(&now) // the dashboard shows the check published last cycle
			if d := w.dashboard("shop"); !strings.Contains(d.Body, fmt.Sprintf("| #%d |", pr.Number)) || !strings.Contains(d.Body, "| `failure` |") {
				t.Errorf("the dashboard must show the failing check beside the PR:\n%s", d.Body)
			}
			if out := w.cycle(&now); len(out.Published.Checked) != 0 || len(w.open("shop")) != 1 {
				t.Errorf("an unchanged failing head is published once and its PR left open: %+v", out.Published)
			}
			if got, _ := w.gh.File("acme", "shop", pr.Head, file); got != content {
				t.Errorf("driftfix must not overwrite the person's commit:\n%s", got)
			}
		})
	}
}

// TestCommandsRecheckOutlastsQuietHours: a /driftfix recheck read while the
// policy's quiet hours hold publishing is acknowledged at once and done
// when they end, once, not dropped with the cycle that read it.
func TestCommandsRecheckOutlastsQuietHours(t *testing.T) {
	cfg := strings.Replace(worldConfig, "draft: true}", `draft: true, quietHours: {from: "12:40", to: "13:10", timezone: UTC}}`, 1)
	w, now := stuckWorld(t, cfg, "shop")
	w.cycle(&now) // 12:00: opened
	w.cycle(&now) // 12:15: the head's own files checked
	w.cycle(&now) // 12:30
	n := w.open("shop")[0].Number
	w.gh.SetPermission("acme", "shop", "ops", githost.PermissionWrite)
	w.gh.CommentAs("acme", "shop", n, "ops", "MEMBER", "/driftfix recheck")
	for i := 0; i < 2; i++ { // 12:45 and 13:00 are quiet
		if out := w.cycle(&now); len(out.Published.Checked) != 0 {
			t.Fatalf("a check was published in quiet hours: %+v", out.Published)
		}
	}
	if cs := w.gh.Comments("acme", "shop", n); len(cs) != 1 || strings.Join(cs[0].Reactions, ",") != "+1 by driftfix[bot]" {
		t.Fatalf("the recheck must be acknowledged when it is read: %+v", cs)
	}
	if out := w.cycle(&now); len(out.Published.Checked) != 1 { // 13:15
		t.Fatalf("the recheck asked in quiet hours must be done when they end: %+v", out.Published)
	}
	if out := w.cycle(&now); len(out.Published.Checked) != 0 {
		t.Fatal("a recheck is done once")
	}
}

// TestCheckRunAfterMergeCommentLaterRevision: main moves on after the merge
// and Argo CD syncs a later commit: that revision holds the merge, so the
// result is said (still OutOfSync here); a revision from before the merge
// says nothing yet.
func TestCheckRunAfterMergeCommentLaterRevision(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "cart")
	before := w.gh.Head("acme", "cart", "main")
	w.cycle(&now)
	if err := w.gh.Merge("acme", "cart", w.open("cart")[0].Number); err != nil {
		t.Fatal(err)
	}
	if err := w.gh.CommitFile("acme", "cart", "main", "README.md", "notes\n", "dev"); err != nil {
		t.Fatal(err)
	}
	later := w.gh.Head("acme", "cart", "main")
	w.setAppAt("cart", "cart", true, now, before) // Argo CD still at the revision before the merge
	w.cycle(&now)
	w.cycle(&now)
	if cs := w.gh.Comments("acme", "cart", 1); len(cs) != 0 {
		t.Fatalf("nothing is said before Argo CD syncs a revision holding the merge: %+v", cs)
	}
	w.setAppAt("cart", "cart", true, now, later) // synced past the merge, still stuck
	out := w.cycle(&now)
	cs := w.gh.Comments("acme", "cart", 1)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "still OutOfSync") || !strings.Contains(cs[0].Body, later[:12]) || len(out.Published.StillDrifts) != 1 {
		t.Fatalf("the result at a revision past the merge must be said once: %+v %+v", cs, out.Published)
	}
	w.cycle(&now)
	if len(w.gh.Comments("acme", "cart", 1)) != 1 {
		t.Error("the result of a merge is said once")
	}
}
