package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/templates"
)

const worldConfig = `
argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]
slack: {tokenEnv: S, channel: "#gitops"}
policy: {labels: [driftfix], reviewers: [platform-oncall], draft: true}
`

// TestPublishLifecycle follows one fix from drift to Synced: opened once,
// left alone while unchanged, merged by a person, reported fixed when Argo CD
// is Synced; then a second app's PR closed by a person is never reopened, a
// `/driftfix ignore` comment stops a third, and a fourth is closed when its
// drift goes away.
func TestPublishLifecycle(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	cycle := func() Outcome { return w.cycle(&now) }

	out := cycle()
	prs := w.open("shop")
	if len(out.Published.Opened) != 1 || len(prs) != 1 {
		t.Fatalf("one PR expected: %+v, open %+v", out.Published, prs)
	}
	pr := prs[0]
	if !strings.HasPrefix(pr.Head, "driftfix/shop/hpa-replicas-") || !pr.Draft || pr.Labels[0] != "driftfix" || pr.Reviewers[0] != "platform-oncall" || pr.Base != "main" {
		t.Errorf("PR %+v", pr)
	}
	if !strings.Contains(pr.Body, "driftfix:key=") || !strings.Contains(pr.Body, "HorizontalPodAutoscaler") {
		t.Errorf("PR body lacks its key marker or evidence:\n%s", pr.Body)
	}
	fixed, err := w.gh.File("acme", "shop", pr.Head, "apps/shop/web.yaml")
	if err != nil || strings.Contains(fixed, "replicas:") {
		t.Fatalf("the branch must hold the file without replicas: %v\n%s", err, fixed)
	}
	posts := w.slack.Posts()
	if len(posts) != 1 || posts[0]["channel"] != "#gitops" || !strings.Contains(posts[0]["attachments"], "Newly stuck") || !strings.Contains(posts[0]["attachments"], "opened") {
		t.Fatalf("digest: %+v", posts)
	}

	out = cycle() // nothing changed: no PR, no digest
	if len(out.Published.Opened)+len(out.Published.Updated) != 0 || len(out.Published.Unchanged) != 1 || len(w.open("shop")) != 1 || len(w.slack.Posts()) != 1 {
		t.Fatalf("an unchanged fix must be left alone and no digest sent: %+v, posts %d", out.Published, len(w.slack.Posts()))
	}

	if err := w.gh.Merge("acme", "shop", pr.Number); err != nil {
		t.Fatal(err)
	}
	// The list still says OutOfSync; the refresh driftfix asks for finds
	// the merge synced, and the same cycle reports the app fixed.
	w.argo.OnRefresh = func(s *drift.Snapshot) {
		if s.AppName() == "shop" {
			drift.Map(s.Application, "status")["sync"] = map[string]any{"status": "Synced", "revision": "main"}
			s.Resources = nil
		}
	}
	out = cycle()
	w.argo.OnRefresh = nil
	if len(out.Published.Merged) != 1 || len(out.Published.Fixed) != 1 {
		t.Fatalf("merge and fix must be reported: %+v", out.Published)
	}
	last := w.slack.Posts()[len(w.slack.Posts())-1]
	if !strings.Contains(last["attachments"], "merged") || !strings.Contains(last["attachments"], "Synced again") {
		t.Errorf("digest after merge: %s", last["attachments"])
	}
	if last["thread_ts"] != "1700000000.000001" {
		t.Errorf("news of the PR must go in the thread of the digest that announced it, not %q", last["thread_ts"])
	}

	// A PR a person closes unmerged is never proposed again.
	w.addRepo("cart")
	w.setApp("cart", "cart", true, now)
	cycle()
	cart := w.open("cart")
	if len(cart) != 1 {
		t.Fatalf("cart PRs %+v", cart)
	}
	w.gh.CloseUnmerged("acme", "cart", cart[0].Number)
	out = cycle()
	if len(out.Published.Rejected) != 1 || len(w.open("cart")) != 0 {
		t.Fatalf("closed by a person: %+v", out.Published)
	}
	for i := 0; i < 2; i++ {
		out = cycle()
		if len(w.gh.PullRequests("acme", "cart")) != 1 || !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "turned down") {
			t.Fatalf("a rejected fix came back: %+v", out.Published)
		}
	}
	w.loseDatabase() // GitHub still knows: the closed PR has no driftfix closing comment
	out = cycle()
	if len(w.gh.PullRequests("acme", "cart")) != 1 || !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "a person closed") {
		t.Fatalf("a lost database reopened a rejected fix: %+v", out.Published)
	}

	// `/driftfix ignore` stops a fix.
	w.addRepo("pay")
	w.setApp("pay", "pay", true, now)
	cycle()
	pay := w.open("pay")
	w.gh.Comment("acme", "pay", pay[0].Number, "not now\n/driftfix ignore")
	out = cycle()
	if len(w.open("pay")) != 0 || len(out.Published.Rejected) != 1 {
		t.Fatalf("/driftfix ignore: %+v", out.Published)
	}
	cycle()
	if len(w.gh.PullRequests("acme", "pay")) != 1 {
		t.Fatal("an ignored fix came back")
	}

	// Drift that goes away closes its PR with a comment, and comes back as a new one.
	w.addRepo("blog")
	w.setApp("blog", "blog", true, now)
	cycle()
	blog := w.open("blog")
	w.setApp("blog", "blog", false, now)
	out = cycle()
	if len(w.open("blog")) != 0 || len(out.Published.Closed) != 1 {
		t.Fatalf("drift gone: %+v", out.Published)
	}
	if cs := w.gh.Comments("acme", "blog", blog[0].Number); len(cs) == 0 || !strings.Contains(cs[len(cs)-1].Body, "Synced") {
		t.Errorf("closing comment %+v", cs)
	}
	w.setApp("blog", "blog", true, now)
	cycle()
	if len(w.open("blog")) != 1 {
		t.Fatalf("returning drift must get a PR again: %+v", w.gh.PullRequests("acme", "blog"))
	}
}

// TestTagTargetRevision: an application that follows a tag gets no PR, and
// says why.
func TestTagTargetRevision(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	r, closeDB := w.runner()
	defer closeDB()
	res := plan.Cycle(context.Background(), w.cfg, r.Instances, now, plan.CycleOptions{})
	if len(res.PRs) != 1 {
		t.Fatalf("proposals %+v", res.PRs)
	}
	res.PRs[0].Base = "v1.2.0"
	out := r.Publisher.Publish(context.Background(), &res, now)
	if len(out.Errors) != 0 || len(w.gh.PullRequests("acme", "shop")) != 0 || !strings.Contains(strings.Join(out.Skipped, "\n"), `targetRevision "v1.2.0" is not a branch`) {
		t.Fatalf("published %+v", out)
	}
}

// TestLostDatabaseNeverDuplicates: a fresh database finds the open PR on
// GitHub by its branch and adopts it, so it is closed when the drift goes.
func TestLostDatabaseNeverDuplicates(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	for i := 0; i < 3; i++ {
		r, closeDB := w.runner()
		if _, err := r.Once(context.Background(), now.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		closeDB()
		w.loseDatabase()
	}
	if n := len(w.gh.PullRequests("acme", "shop")); n != 1 {
		t.Fatalf("%d PRs after restarts with lost databases", n)
	}
	w.setApp("shop", "shop", false, now)
	r, closeDB := w.runner()
	defer closeDB()
	out, _ := r.Once(context.Background(), now.Add(4*time.Hour))
	if len(w.open("shop")) != 0 || len(out.Published.Closed) != 1 {
		t.Fatalf("the adopted PR must be closed when the drift is gone: %+v", out.Published)
	}
}

// TestNoSecretsPublished greps everything driftfix wrote (PRs, digests,
// errors, its result and its log, through retries) for tokens and keys.
func TestNoSecretsPublished(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	r, closeDB := w.runner()
	defer closeDB()
	w.gh.FailNext(500, 403)
	w.slack.RateLimit(1)
	w.argo.Fail(1)
	out, err := r.Once(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out)
	var written []string
	written = append(written, string(raw))
	for _, p := range w.gh.PullRequests("acme", "shop") {
		written = append(written, p.Title, p.Body)
	}
	for _, p := range w.slack.Posts() {
		for k, v := range p {
			if k != "token" {
				written = append(written, v)
			}
		}
	}
	for _, e := range append(out.Result.Errors, out.Published.Errors...) {
		written = append(written, e.Error())
	}
	written = append(written, w.logs.String())
	if !strings.Contains(w.logs.String(), "secondary rate limit") || !strings.Contains(w.logs.String(), "cycle done") {
		t.Fatalf("the log lacks the retries and the cycle:\n%s", w.logs.String())
	}
	all := strings.Join(written, "\n")
	for _, secret := range []string{"argo-token", slackToken, "PRIVATE KEY", string(w.gh.PrivateKeyPEM[40:80]), "ghs_"} {
		if strings.Contains(all, secret) {
			t.Errorf("a secret (%.12s…) was published", secret)
		}
	}
}

// TestPRLimits: new PRs per cycle and open at once are capped by the policy;
// what is held back is said, and comes in later cycles.
func TestPRLimits(t *testing.T) {
	w, now := stuckWorld(t, `
argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]
policy: {prsPerCycle: 1, openPRs: 2}
overrides: [{match: {app: "quiet-*"}, policy: {quietHours: {from: "00:00", to: "23:59", timezone: UTC}}}]
`, "a", "b", "c", "quiet-d")
	opened := func() int {
		n := 0
		for _, r := range []string{"a", "b", "c", "quiet-d"} {
			n += len(w.open(r))
		}
		return n
	}
	r, closeDB := w.runner()
	defer closeDB()
	var skipped []string
	for i, want := range []int{1, 2, 2} {
		out, err := r.Once(context.Background(), now.Add(time.Duration(i)*time.Hour))
		if err != nil || len(out.Published.Errors) > 0 {
			t.Fatal(err, out.Published.Errors)
		}
		if got := opened(); got != want {
			t.Fatalf("cycle %d: %d open PRs, want %d (skipped %q)", i, got, want, out.Published.Skipped)
		}
		skipped = out.Published.Skipped
	}
	all := strings.Join(skipped, "\n")
	if !strings.Contains(all, "limit of 2 open pull requests") || !strings.Contains(all, "quiet hours") {
		t.Fatalf("held-back fixes must say why: %q", skipped)
	}
	if len(w.open("quiet-d")) != 0 {
		t.Fatal("a PR was opened in quiet hours")
	}
}

// TestStopMidPublish: a cycle asked to stop while it writes a PR finishes
// that PR and starts no other; no branch is left without its PR.
func TestStopMidPublish(t *testing.T) {
	names := []string{"a", "b", "c"}
	w, now := stuckWorld(t, worldConfig, names...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.gh.Fault = func(r *http.Request) int {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git/refs") {
			cancel() // SIGTERM arrives as the first branch is created
		}
		return 0
	}
	r, closeDB := w.runner()
	defer closeDB()
	res := plan.Cycle(context.Background(), w.cfg, r.Instances, now, plan.CycleOptions{})
	out := r.Publisher.Publish(ctx, &res, now)
	if len(out.Opened) != 1 {
		t.Fatalf("the PR in flight must be finished and no other started: %+v", out)
	}
	for _, n := range names {
		branches, prs := 0, len(w.open(n))
		for _, b := range w.gh.Branches("acme", n) {
			if strings.HasPrefix(b, "driftfix/") {
				branches++
			}
		}
		if branches != prs {
			t.Errorf("%s: %d driftfix branches, %d PRs", n, branches, prs)
		}
	}
	if !strings.Contains(strings.Join(out.Skipped, "\n"), "stopped before it was published") {
		t.Errorf("skipped %q", out.Skipped)
	}
}

// TestMetrics: one cycle's work and the failed calls it retried show up
// by service.
func TestMetrics(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	r, closeDB := w.runner()
	defer closeDB()
	w.gh.FailNext(502)
	w.slack.RateLimit(1)
	w.argo.Fail(1)
	if _, err := r.Once(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	r.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	for _, want := range []string{
		"driftfix_apps_scanned_total 1", "driftfix_apps_stuck 1", `driftfix_findings{cause="hpa-replicas"} 1`,
		`driftfix_pull_requests_total{action="opened"} 1`,
		`driftfix_api_errors_total{service="argocd"} 1`, `driftfix_api_errors_total{service="github"} 1`, `driftfix_api_errors_total{service="slack"} 1`,
		`driftfix_api_calls_total{service="slack"} 2`, "driftfix_cycle_duration_seconds_count 1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

// TestShardedBots: two bots split one Argo CD instance by shard and share a
// repository; each keeps to its own pull requests, also with lost databases.
func TestShardedBots(t *testing.T) {
	w, now := newWorld(t, worldConfig), worldNow
	w.addRepo("shared")
	w.setApp("a1", "shared", true, now)
	w.setApp("b1", "shared", true, now)
	bot := func(shard string) Outcome {
		t.Helper()
		w.dbPath = filepath.Join(w.dir, shard+".db")
		r, closeDB := w.runner()
		defer closeDB()
		r.Instances[0].Shard = shard + "*"
		out, err := r.Once(context.Background(), now)
		if err != nil || len(out.Published.Errors) > 0 {
			t.Fatal(err, out.Published.Errors)
		}
		return out
	}
	bot("a")
	bot("b")
	if n := len(w.open("shared")); n != 2 {
		t.Fatalf("%d open PRs, want one per bot", n)
	}
	w.setApp("a1", "shared", false, now)
	for i := 0; i < 2; i++ {
		w.loseDatabase()
		w.dbPath = filepath.Join(w.dir, "a.db")
		w.loseDatabase()
		if out := bot("b"); len(out.Published.Closed) != 0 {
			t.Fatalf("bot b closed bot a's PR: %+v", out.Published)
		}
		now = now.Add(time.Hour)
	}
	if out := bot("a"); len(out.Published.Closed) != 1 {
		t.Fatalf("bot a must close its own PR when its drift is gone: %+v", out.Published)
	}
	open := w.open("shared")
	if len(open) != 1 || !strings.Contains(open[0].Head, "/b1/") {
		t.Fatalf("open PRs %+v", open)
	}
}

// TestRateLimitedCycle: with GitHub's hourly limit used up, the cycle reports
// it once and leaves the other fixes for the next cycle, which opens them.
func TestRateLimitedCycle(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "a", "b", "c")
	r, closeDB := w.runner()
	defer closeDB()
	w.gh.SetRateLimit(0, time.Now().Add(time.Hour))
	out, _ := r.Once(context.Background(), now)
	if len(out.Published.Errors) != 1 || !strings.Contains(out.Published.Errors[0].Error(), "used up until") ||
		strings.Count(strings.Join(out.Published.Skipped, "\n"), "left for the next cycle") != 3 {
		t.Fatalf("rate-limited cycle: errors %v, skipped %q", out.Published.Errors, out.Published.Skipped)
	}
	w.gh.SetRateLimit(5000, time.Now().Add(time.Hour))
	r2, closeDB2 := w.runner()
	defer closeDB2()
	out, _ = r2.Once(context.Background(), now.Add(time.Hour))
	if len(out.Published.Opened) != 3 {
		t.Fatalf("the next cycle must open the fixes: %+v", out.Published)
	}
}

// TestTwoReplicasAtOnce: two bots without leader election publish the same
// fixes at the same moment; GitHub lets one win each fix, the other steps
// back, and no PR is duplicated.
func TestTwoReplicasAtOnce(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	w, now := stuckWorld(t, worldConfig, names...)
	var outs [2]Outcome
	var wg sync.WaitGroup
	for i := range outs {
		w.dbPath = filepath.Join(w.dir, fmt.Sprintf("replica%d.db", i))
		r, closeDB := w.runner()
		defer closeDB()
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], _ = r.Once(context.Background(), now)
		}()
	}
	wg.Wait()
	for _, n := range names {
		if got := len(w.gh.PullRequests("acme", n)); got != 1 {
			t.Errorf("%s: %d PRs", n, got)
		}
	}
	if opened := len(outs[0].Published.Opened) + len(outs[1].Published.Opened); opened != len(names) {
		t.Errorf("%d PRs reported opened for %d fixes", opened, len(names))
	}
	for _, o := range outs {
		if len(o.Published.Errors) > 0 {
			t.Errorf("a replica that lost a race must step back, not fail: %v", o.Published.Errors)
		}
		t.Logf("skipped: %q", o.Published.Skipped)
	}
}

// TestAdoptsOnceAtStart: a running bot looks its open PRs up on GitHub in
// its first cycle only; later cycles list no repository, and a restarted one
// (a new database) adopts again.
func TestAdoptsOnceAtStart(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	lists := func() int { return w.gh.CallCount("GET /repos/{owner}/{repo}/pulls") }
	r, closeDB := w.runner()
	defer closeDB()
	r.PredictPerCycle = -1 // predict lists each repository's open pull requests for itself (TestPredictOnPullRequests)
	if _, err := r.Once(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	before := lists()
	if _, err := r.Once(context.Background(), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := lists() - before; n != 0 {
		t.Fatalf("a steady cycle made %d pull-request list calls, want none (its known PR is read by number, once)", n)
	}
	w.loseDatabase()
	r2, closeDB2 := w.runner()
	defer closeDB2()
	w.setApp("shop", "shop", false, now)
	out, _ := r2.Once(context.Background(), now.Add(2*time.Hour))
	if len(out.Published.Closed) != 1 {
		t.Fatalf("a restarted bot must adopt and close its PR: %+v", out.Published)
	}
}

// TestCorruptDatabaseRebuilt: a state database overwritten with garbage is
// moved aside at start; the bot adopts its open PR from GitHub and closes it
// when the drift goes, without a duplicate.
func TestCorruptDatabaseRebuilt(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	r, closeDB := w.runner()
	if _, err := r.Once(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	closeDB()
	w.loseDatabase()
	if err := os.WriteFile(w.dbPath, bytes.Repeat([]byte("garbage!"), 1024), 0o600); err != nil {
		t.Fatal(err)
	}
	w.setApp("shop", "shop", false, now)
	r, closeDB = w.runner()
	defer closeDB()
	out, err := r.Once(context.Background(), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.gh.PullRequests("acme", "shop")); n != 1 || len(out.Published.Closed) != 1 {
		t.Fatalf("the PR must be adopted and closed, not duplicated: %d PRs, %+v", n, out.Published)
	}
}

// TestShrunkenListClosesNothing: when Argo CD's list loses more than the
// policy's fraction of its applications (an RBAC or sharding change), no PR
// is closed as "no longer listed", however long it lasts; one application
// missing from an otherwise full list has its PR closed only after
// closeAfterCycles cycles in a row.
func TestShrunkenListClosesNothing(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	w, now := stuckWorld(t, worldConfig+"unlisted: {closeAfterCycles: 3, maxListShrink: 0.2}\n", names...)
	w.cfg.Policy.PRsPerCycle, w.cfg.Policy.PRsPerRepo = 20, 20
	r, closeDB := w.runner()
	defer closeDB()
	cycle := func() Outcome {
		t.Helper()
		out, err := r.Once(context.Background(), now)
		if err != nil || len(out.Published.Errors) > 0 {
			t.Fatalf("cycle: %v %v", err, out.Published.Errors)
		}
		now = now.Add(15 * time.Minute)
		return out
	}
	if out := cycle(); len(out.Published.Opened) != len(names) {
		t.Fatalf("opened %v", out.Published.Opened)
	}
	for _, n := range names[:5] { // half the list disappears
		w.argo.Remove("argocd", n)
	}
	for i := 0; i < 5; i++ {
		out := cycle()
		if len(out.Published.Closed) != 0 {
			t.Fatalf("cycle %d: a list that shrank by half closed %v", i, out.Published.Closed)
		}
		if !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "lists 5 applications, down from 10") {
			t.Fatalf("the shrunken list must be reported: %q", out.Published.Skipped)
		}
	}
	for _, n := range names[:5] {
		w.setApp(n, n, true, now)
	}
	cycle()
	w.argo.Remove("argocd", "a") // one of ten: within the fraction
	for i := 1; i <= 2; i++ {
		out := cycle()
		if len(out.Published.Closed) != 0 || len(w.open("a")) != 1 {
			t.Fatalf("missing for %d cycle(s), already closed: %v", i, out.Published.Closed)
		}
		if !strings.Contains(strings.Join(out.Published.Skipped, "\n"), fmt.Sprintf("not been listed by Argo CD for %d cycle(s)", i)) {
			t.Errorf("skipped %q", out.Published.Skipped)
		}
	}
	w.setApp("a", "a", true, now) // back for a cycle: the count starts over
	cycle()
	w.argo.Remove("argocd", "a")
	cycle()
	cycle()
	if len(w.open("a")) != 1 {
		t.Fatal("a relisted application's count must start over")
	}
	out := cycle()
	if len(out.Published.Closed) != 1 || len(w.open("a")) != 0 {
		t.Fatalf("after 3 cycles missing, its PR is closed: %+v", out.Published)
	}
	for _, b := range w.gh.Branches("acme", "a") {
		if strings.HasPrefix(b, "driftfix/") {
			t.Errorf("branch %s left after closing", b)
		}
	}
}

// TestAdoptsOnlyOwnPRs: with a lost database, a fork's PR and a person's PR
// that carry driftfix's branch prefix and a copied key marker are neither
// adopted nor closed, and no branch of the base repository is deleted;
// driftfix's own PR is adopted and closed when its drift goes.
func TestAdoptsOnlyOwnPRs(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	r, closeDB := w.runner()
	if _, err := r.Once(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	closeDB()
	own := w.open("shop")
	if len(own) != 1 || own[0].Author != "driftfix[bot]" {
		t.Fatalf("own PR %+v", own)
	}
	// A person's branch in the base repository named like a fork's head.
	const forkBranch = "driftfix/shop/hpa-replicas-fork"
	if err := w.gh.CommitFile("acme", "shop", forkBranch, "notes.md", "alice's work\n", "alice"); err != nil {
		t.Fatal(err)
	}
	fork, err := w.gh.AddPR("acme", "shop", githubtest.PullRequest{Title: own[0].Title, Body: own[0].Body, Head: forkBranch, HeadRepo: "mallory/shop", Author: "mallory"})
	if err != nil {
		t.Fatal(err)
	}
	person, err := w.gh.AddPR("acme", "shop", githubtest.PullRequest{Title: "mine", Body: own[0].Body, Head: forkBranch, Author: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	w.loseDatabase()
	w.setApp("shop", "shop", false, now) // drift gone: adopted PRs would be closed
	r, closeDB = w.runner()
	defer closeDB()
	out, err := r.Once(context.Background(), now.Add(time.Hour))
	if err != nil || len(out.Published.Errors) > 0 {
		t.Fatal(err, out.Published.Errors)
	}
	if len(out.Published.Closed) != 1 || out.Published.Closed[0] != fmt.Sprintf("acme/shop#%d", own[0].Number) {
		t.Fatalf("only driftfix's own PR may be closed: %+v", out.Published)
	}
	open := map[int]bool{}
	for _, p := range w.open("shop") {
		open[p.Number] = true
	}
	if !open[fork] || !open[person] || open[own[0].Number] {
		t.Errorf("open PRs %v: the fork's #%d and alice's #%d must stay open", open, fork, person)
	}
	if !slices.Contains(w.gh.Branches("acme", "shop"), forkBranch) {
		t.Error("a branch driftfix did not make was deleted")
	}
	if got, _ := w.gh.File("acme", "shop", forkBranch, "notes.md"); got != "alice's work\n" {
		t.Errorf("alice's branch was changed: %q", got)
	}
}

// TestNoRevertNoForcePush: a fix is written onto the base branch only when
// the file there is still the one the fix was computed from (a commit a
// person made to it after the sync is never reverted), and a PR branch a
// person pushed to is never overwritten: the PR says so once, when the fix
// changes.
func TestNoRevertNoForcePush(t *testing.T) {
	const file = "apps/shop/web.yaml"
	w, now := stuckWorld(t, worldConfig, "shop")
	r, closeDB := w.runner()
	defer closeDB()
	ctx := context.Background()

	// alice commits to the file on main between the sync and the publish.
	res := plan.Cycle(ctx, w.cfg, r.Instances, now, plan.CycleOptions{})
	if len(res.PRs) != 1 {
		t.Fatalf("proposals %+v", res.PRs)
	}
	synced, _ := w.gh.File("acme", "shop", "main", file)
	alices := synced + "# alice: keep 3 replicas during the sale\n"
	if err := w.gh.CommitFile("acme", "shop", "main", file, alices, "alice"); err != nil {
		t.Fatal(err)
	}
	out := r.Publisher.Publish(ctx, &res, now)
	if len(out.Errors) != 0 || len(w.gh.PullRequests("acme", "shop")) != 0 || !strings.Contains(strings.Join(out.Skipped, "\n"), "changed since the synced revision") {
		t.Fatalf("a fix computed from an older file must not be written: %+v", out)
	}
	if got, _ := w.gh.File("acme", "shop", "main", file); got != alices {
		t.Fatalf("main changed: %q", got)
	}
	for _, b := range w.gh.Branches("acme", "shop") {
		if b != "main" {
			t.Errorf("branch %s left behind", b)
		}
	}

	// The next cycle reads the new main and proposes onto it, keeping alice's line.
	if out, err := r.Once(ctx, now.Add(time.Hour)); err != nil || len(out.Published.Opened) != 1 {
		t.Fatalf("next cycle: %v %+v", err, out.Published)
	}
	pr := w.open("shop")[0]
	if got, _ := w.gh.File("acme", "shop", pr.Head, file); !strings.Contains(got, "# alice:") || strings.Contains(got, "replicas:") {
		t.Fatalf("the fix must be applied onto alice's content:\n%s", got)
	}

	// bob pushes to driftfix's branch; the fix then changes.
	if err := w.gh.CommitFile("acme", "shop", pr.Head, "apps/shop/NOTES.md", "bob's notes\n", "bob"); err != nil {
		t.Fatal(err)
	}
	if out, err := r.Once(ctx, now.Add(2*time.Hour)); err != nil || len(out.Published.Errors) != 0 {
		t.Fatalf("%v %v", err, out.Published.Errors)
	}
	if got, err := w.gh.File("acme", "shop", pr.Head, "apps/shop/NOTES.md"); err != nil || got != "bob's notes\n" {
		t.Fatalf("bob's commit was overwritten: %q %v", got, err)
	}
	cur, _ := w.gh.File("acme", "shop", "main", file)
	if err := w.gh.CommitFile("acme", "shop", "main", file, strings.Replace(cur, "# The storefront", "# The shop's storefront", 1), "alice"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		out, err := r.Once(ctx, now.Add(time.Duration(3+i)*time.Hour))
		if err != nil || len(out.Published.Errors) != 0 {
			t.Fatalf("%v %v", err, out.Published.Errors)
		}
		if !strings.Contains(strings.Join(out.Published.Skipped, "\n"), "commits driftfix did not make") {
			t.Errorf("skipped %q", out.Published.Skipped)
		}
	}
	if got, err := w.gh.File("acme", "shop", pr.Head, "apps/shop/NOTES.md"); err != nil || got != "bob's notes\n" {
		t.Fatalf("bob's commit was overwritten: %q %v", got, err)
	}
	held := 0
	for _, c := range w.gh.Comments("acme", "shop", pr.Number) {
		if strings.Contains(c.Body, "commits from people") {
			held++
		}
	}
	if held != 1 {
		t.Errorf("%d comments about the held branch, want 1: %+v", held, w.gh.Comments("acme", "shop", pr.Number))
	}

	// Closing that PR when the drift goes leaves bob's branch in place.
	w.setApp("shop", "shop", false, now)
	if out, _ := r.Once(ctx, now.Add(6*time.Hour)); len(out.Published.Closed) != 1 {
		t.Fatalf("closed %+v", out.Published)
	}
	if !slices.Contains(w.gh.Branches("acme", "shop"), pr.Head) {
		t.Error("a branch holding bob's commit was deleted")
	}
}

// TestFixNoLongerProposedSaysSo: a fix whose plan stops being proposed
// while its differences are still there (Git moved the manifest where the
// edit cannot go) is closed saying so and why, never that the drift is gone.
func TestFixNoLongerProposedSaysSo(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	w.cycle(&now)
	prs := w.open("shop")
	if len(prs) != 1 {
		t.Fatalf("one PR expected, open %+v", prs)
	}
	only := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector:\n    app: web\n  ports:\n    - port: 80\n"
	if err := w.gh.CommitFile("acme", "shop", "main", "apps/shop/web.yaml", only, "dev"); err != nil {
		t.Fatal(err)
	}
	out := w.cycle(&now)
	if len(w.open("shop")) != 0 || len(out.Published.Closed) != 1 {
		t.Fatalf("the PR must be closed: %+v, skipped %q", out.Published, out.Result.Skipped)
	}
	cs := w.gh.Comments("acme", "shop", prs[0].Number)
	if len(cs) == 0 {
		t.Fatal("no closing comment")
	}
	last := cs[len(cs)-1].Body
	if strings.Contains(last, "gone") || !strings.Contains(last, "no longer proposes this change") || !strings.Contains(last, "hpa-replicas") && !strings.Contains(last, "remove-field") {
		t.Fatalf("closing comment:\n%s\nskipped: %q", last, out.Result.Skipped)
	}
}

// TestLongDiffWithinBodyLimit: a fix whose diff is longer than GitHub takes
// in a pull request's body (here long comment lines next to the replicas
// it removes) is opened all the same, through an emulator that refuses a
// body over 65,536 characters with GitHub's 422, as GitHub does: the diff
// is cut, the body says the full change is in the branch, and the key
// marker still ends the body, so the PR is found again after a lost
// database instead of being opened twice.
func TestLongDiffWithinBodyLimit(t *testing.T) {
	w := newWorld(t, worldConfig)
	now := worldNow
	files := map[string]string{}
	for k, v := range w.base.Repo.Files {
		files[k] = v
	}
	web := files["apps/shop/web.yaml"]
	comment := "# first rollout only; the HPA scales it\n"
	i := strings.Index(web, comment)
	if i < 0 {
		t.Fatalf("no comment above replicas in:\n%s", web)
	}
	indent := web[strings.LastIndex(web[:i], "\n")+1 : i]
	long := strings.Repeat("# "+strings.Repeat("n", 30000)+"\n"+indent, 4)
	files["apps/shop/web.yaml"] = web[:i] + long + web[i:]
	u, err := githubtest.NewRepo(filepath.Join(w.dir, "git"), "acme", "shop", files)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.gh.AddRepo(filepath.Join(w.dir, "git"), "acme", "shop"); err != nil {
		t.Fatal(err)
	}
	w.repoURL["shop"] = u
	w.setApp("shop", "shop", true, now)

	out := w.cycle(&now)
	prs := w.open("shop")
	if len(out.Published.Opened) != 1 || len(prs) != 1 {
		t.Fatalf("the fix must be opened: %+v, open %+v", out.Published, prs)
	}
	body := prs[0].Body
	if n := utf8.RuneCountInString(body); n > 65536 {
		t.Fatalf("a body of %d characters got past the emulator", n)
	}
	if !strings.Contains(body, "the full change is in this pull request's branch") || !templates.KeyMarkerRE.MatchString(body[len(body)-200:]) {
		t.Errorf("the body must say the diff is cut and end with its key marker:\n%s", body[len(body)-600:])
	}
	if fixed, err := w.gh.File("acme", "shop", prs[0].Head, "apps/shop/web.yaml"); err != nil || strings.Contains(fixed, "replicas:") || len(fixed) > len(files["apps/shop/web.yaml"])-4*30000 {
		t.Errorf("the branch must hold the whole change (replicas and the comment above it gone): %v", err)
	}
	w.loseDatabase()
	out = w.cycle(&now)
	if len(out.Published.Opened) != 0 || len(w.gh.PullRequests("acme", "shop")) != 1 {
		t.Fatalf("after a lost database the PR must be found by its key, not opened again: %+v", out.Published)
	}
}
