package publish_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/publish/publishtest"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// The publisher's tests run Publish with in-memory stand-ins at its two
// ports (publishtest's Git host and notifier) over the real state store in
// a file; the bot/ world tests run the same through GitHub's and Slack's
// emulators, as acceptance tests.

const policy = `
argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]
slack: {tokenEnv: S, channel: "#gitops"}
policy: {labels: [driftfix], minStuckFor: 0s, minCycles: 1, dashboard: {enabled: true}}
`

const (
	repo    = "acme/shop"
	repoURL = "https://git.example.org/acme/shop.git"
	file    = "apps/shop/web.yaml"
	key     = "5f3a9c1d2e4b"
	branch  = "driftfix/shop/hpa-replicas-5f3a9c1d2e4b"
	appKey  = "main/argocd/shop"
	before  = "spec:\n  replicas: 2\n  template: {}\n"
)

// rowSeal seals the test state's rows as the bot's GitHub credential does
// (memo.Seal); reopening the database with it reads them back.
var rowSeal = func() memo.Seal {
	s, err := memo.NewSeal([]byte("the GitHub App's key"), [32]byte{})
	if err != nil {
		panic(err)
	}
	return s
}()

// bench is one publisher with its ports and its state, and the clock of
// its cycles.
type bench struct {
	t    *testing.T
	cfg  *config.Config
	st   *state.Store
	path string // the state database's file
	host *publishtest.Host
	note *publishtest.Notifier
	p    *publish.Publisher
	now  time.Time
}

func newBench(t *testing.T) *bench {
	t.Helper()
	cfg, err := config.Parse([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := state.Open(context.Background(), path, rowSeal)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := &bench{t: t, cfg: cfg, st: st, path: path, host: &publishtest.Host{}, note: &publishtest.Notifier{},
		now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	b.p = &publish.Publisher{Config: cfg, Store: st, Hosts: []publish.GitHost{b.host}, Notifier: b.note}
	return b
}

// fix is the fix a cycle proposes for the stuck application shop.
type fix struct {
	fingerprint, title, after string
	planned                   bool            // the plan's verification passed
	check                     *plan.HeadCheck // the cycle's check of the open PR's head, if it read one
}

var removeReplicas = fix{fingerprint: "a1", title: "driftfix(shop): Stop declaring /spec/replicas", after: "spec:\n  template: {}\n", planned: true}

// stuck is a cycle's result with shop stuck and f proposed for it.
func (b *bench) stuck(f fix) *plan.CycleResult {
	res := b.synced()
	res.Apps[0].Stuck, res.Apps[0].Keys = true, []string{key}
	res.Apps[0].App.SyncStatus = "OutOfSync"
	conclusion := "passed"
	if !f.planned {
		conclusion = "failed"
	}
	res.PRs = []plan.ProposedPR{{Instance: "main", App: "shop", Namespace: "argocd", Key: key, Fingerprint: f.fingerprint,
		RepoURL: repoURL, Base: "main", Branch: branch, Title: f.title,
		Body:   "Stops declaring what the HPA scales.\n\n<!-- driftfix:key=" + key + " -->\n<!-- driftfix:fingerprint=" + f.fingerprint + " -->",
		Policy: b.cfg.For("default", "shop", "argocd"),
		Plan: remediations.Plan{Kind: drift.FixRemoveField, Edits: []remediations.Edit{{File: file, Before: []byte(before), After: []byte(f.after)}},
			Verification: "re-diagnosed with the change: 1 finding gone"},
		Planned: plan.HeadCheck{Success: f.planned, Title: "verification " + conclusion, Summary: "re-diagnosed", Digest: f.fingerprint + conclusion},
		Check:   f.check}}
	res.Digest.NewStuck = []templates.AppLine{{App: "shop", Namespace: "argocd", Instance: "main", Causes: []drift.Cause{drift.CauseHPAReplicas}}}
	return res
}

// synced is a cycle's result with shop Synced: nothing to fix.
func (b *bench) synced() *plan.CycleResult {
	return &plan.CycleResult{Scanned: 1, URLs: map[string]string{"main": "https://argocd.example.com"},
		Apps: []plan.AppState{{Instance: "main", App: argocd.AppSummary{Name: "shop", Namespace: "argocd", Project: "default", RepoURL: repoURL,
			SyncStatus: "Synced", Revision: "c0ffee"}}}}
}

// publish publishes one cycle's result; the next cycle is 15 minutes later.
func (b *bench) publish(res *plan.CycleResult) publish.Published {
	b.t.Helper()
	out := b.p.Publish(context.Background(), res, b.now)
	b.now = b.now.Add(15 * time.Minute)
	return out
}

// clean publishes and fails on any error.
func (b *bench) clean(res *plan.CycleResult) publish.Published {
	b.t.Helper()
	out := b.publish(res)
	if len(out.Errors) > 0 {
		b.t.Fatalf("publishing failed: %v", out.Errors)
	}
	return out
}

func (b *bench) onlyPR() githost.PullRequest {
	b.t.Helper()
	prs := b.host.PRs(repo)
	if len(prs) != 1 {
		b.t.Fatalf("%d pull requests on the host, want 1: %+v", len(prs), prs)
	}
	return prs[0]
}

// TestFixPROpenedOnceThenReused: a fix's pull request is opened once, its
// branch holding the planned file; the next cycle proposing the same fix
// finds it and changes nothing; a changed fix updates the same pull
// request (branch, title, body) instead of opening another.
func TestFixPROpenedOnceThenReused(t *testing.T) {
	b := newBench(t)
	out := b.clean(b.stuck(removeReplicas))
	if fmt.Sprint(out.Opened) != "[acme/shop#1]" {
		t.Fatalf("opened %v, want acme/shop#1 (published %+v)", out.Opened, out)
	}
	pr := b.onlyPR()
	if pr.Branch != branch || pr.Base != "main" || pr.State != "open" || pr.Title != removeReplicas.title || fmt.Sprint(pr.Labels) != "[driftfix]" ||
		!strings.Contains(pr.Body, "driftfix:fingerprint=a1") {
		t.Errorf("pull request %+v", pr)
	}
	if got := string(b.host.Branch(repo, branch)[file]); got != removeReplicas.after {
		t.Errorf("the branch holds %q, want the planned file %q", got, removeReplicas.after)
	}
	rec, ok, err := b.st.PRFor(context.Background(), key)
	if err != nil || !ok || rec.Number != 1 || rec.State != state.PROpen || rec.Repo != "git.example.org/acme/shop" || rec.App != appKey {
		t.Fatalf("the state store remembers %+v (%v, %v)", rec, ok, err)
	}

	out = b.clean(b.stuck(removeReplicas)) // the same fix again
	if fmt.Sprint(out.Unchanged) != "[acme/shop#1]" || len(out.Opened)+len(out.Updated) != 0 {
		t.Errorf("the same fix must leave its PR as it is: %+v", out)
	}
	if n := b.host.Calls("OpenPR"); n != 1 {
		t.Errorf("OpenPR called %d times, want once", n)
	}
	if n := b.host.Calls("EditPR"); n != 0 {
		t.Errorf("an unchanged PR was edited %d times", n)
	}

	changed := fix{fingerprint: "b2", title: "driftfix(shop): Stop declaring /spec/replicas and /spec/template", after: "spec: {}\n", planned: true}
	out = b.clean(b.stuck(changed))
	if fmt.Sprint(out.Updated) != "[acme/shop#1]" || len(out.Opened) != 0 {
		t.Fatalf("a changed fix must update its PR: %+v", out)
	}
	pr = b.onlyPR()
	if pr.Title != changed.title || !strings.Contains(pr.Body, "driftfix:fingerprint=b2") || string(b.host.Branch(repo, branch)[file]) != changed.after {
		t.Errorf("the PR was not brought to the changed fix: %+v, file %q", pr, b.host.Branch(repo, branch)[file])
	}
}

// TestClosedByAPersonNeverReopened: a fix PR a person closed unmerged is
// their answer: the fix is remembered as turned down and not proposed
// again, however often the cycle plans it.
func TestClosedByAPersonNeverReopened(t *testing.T) {
	b := newBench(t)
	b.clean(b.stuck(removeReplicas))
	pr := b.onlyPR()
	b.host.Close(repo, pr.Number)

	out := b.clean(b.stuck(removeReplicas))
	if want := fmt.Sprintf("[acme/shop#%d]", pr.Number); fmt.Sprint(out.Rejected) != want || len(out.Opened) != 0 {
		t.Fatalf("the PR closed by a person must count as turned down: %+v", out)
	}
	for range 2 {
		out = b.clean(b.stuck(removeReplicas))
		if len(out.Opened)+len(out.Updated) != 0 || !strings.Contains(strings.Join(out.Skipped, "\n"), "turned down before") {
			t.Fatalf("a turned-down fix must not be proposed again: %+v", out)
		}
	}
	if n := b.host.Calls("OpenPR"); n != 1 {
		t.Errorf("OpenPR called %d times, want once", n)
	}
	if why, ok, err := b.st.Rejected(context.Background(), key); err != nil || !ok || !strings.Contains(why, "closed unmerged") {
		t.Errorf("the state store must remember why: %q %v %v", why, ok, err)
	}
}

// TestMergedThenFixed: a merged fix PR is followed until Argo CD syncs it:
// merged is reported once, and when the application is Synced again the
// PR says so once and the digest tells it in the thread that announced it.
func TestMergedThenFixed(t *testing.T) {
	b := newBench(t)
	b.clean(b.stuck(removeReplicas))
	pr := b.onlyPR()
	b.host.Merge(repo, pr.Number)
	ref := fmt.Sprintf("[acme/shop#%d]", pr.Number)

	out := b.clean(b.stuck(removeReplicas)) // Argo CD has not synced the merge yet
	if fmt.Sprint(out.Merged) != ref || len(out.Opened)+len(out.Fixed) != 0 {
		t.Fatalf("the merge must be reported, nothing else: %+v", out)
	}
	for i := range 2 {
		out = b.clean(b.synced())
		if got, want := fmt.Sprint(out.Fixed), map[bool]string{true: ref, false: "[]"}[i == 0]; got != want {
			t.Errorf("cycle %d after the sync: fixed %s, want %s", i+1, got, want)
		}
	}
	var said int
	for _, c := range b.host.CommentsOn(repo, pr.Number) {
		if strings.Contains(c.Body, "Argo CD synced this change") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the merged PR was told the outcome %d times, want once", said)
	}
	sent := b.note.Sent()
	if last := sent[len(sent)-1]; last.Text != "synced again: argocd/shop" || last.Thread != sent[0].ID {
		t.Errorf("the fix must be told in the thread that announced it (%q): %+v", sent[0].ID, last)
	}
	if rec, _, _ := b.st.PRFor(context.Background(), key); rec.State != state.PRFixed {
		t.Errorf("the state store keeps %q, want %q", rec.State, state.PRFixed)
	}
}

// TestCheckConclusion: the check published on a fix PR's head says what
// the verification said: the plan's own check on the commit driftfix
// pushed, then the cycle's check of that head once the cycle read it; the
// same check on the same commit is not published twice.
func TestCheckConclusion(t *testing.T) {
	for _, tc := range []struct {
		name               string
		planned, cycleSays bool   // the plan's verification; the next cycle's check of the same head
		want               string // the checks' titles on the head, in order
	}{
		{"passes, still passes", true, true, "[verification passed]"},
		{"passes, then fails on the head", true, false, "[verification passed verification failed]"},
		{"fails, still fails", false, false, "[verification failed]"},
		{"fails, then passes on the head", false, true, "[verification failed verification passed]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(t)
			f := removeReplicas
			f.planned = tc.planned
			b.clean(b.stuck(f))
			head := b.onlyPR().HeadSHA
			checks := b.host.Checks(head)
			if len(checks) != 1 || checks[0].Success != tc.planned || checks[0].Name != templates.CheckName {
				t.Fatalf("checks on the pushed head: %+v, want one %s with success %v", checks, templates.CheckName, tc.planned)
			}
			says := "passed"
			if !tc.cycleSays {
				says = "failed"
			}
			f.check = &plan.HeadCheck{SHA: head, Success: tc.cycleSays, Title: "verification " + says, Digest: f.fingerprint + says}
			out := b.clean(b.stuck(f))
			checks = b.host.Checks(head)
			var titles []string
			for _, c := range checks {
				titles = append(titles, c.Title)
			}
			if fmt.Sprint(titles) != tc.want || checks[len(checks)-1].Success != tc.cycleSays {
				t.Errorf("checks on %s: %v (last success %v), want %s", head, titles, checks[len(checks)-1].Success, tc.want)
			}
			if again := tc.planned != tc.cycleSays; (len(out.Checked) > 0) != again {
				t.Errorf("Checked %v; a new check was due: %v", out.Checked, again)
			}
		})
	}
}

// TestNothingHalfWritten: when the host fails half-way through opening a
// fix's pull request, the branch it pushed is deleted, nothing is
// remembered or announced as opened, and the next cycle opens the pull
// request once; a refused push publishes nothing and says why.
func TestNothingHalfWritten(t *testing.T) {
	b := newBench(t)
	b.host.FailNext("OpenPR", errors.New("502 Bad Gateway"))
	out := b.publish(b.stuck(removeReplicas))
	if len(out.Errors) != 1 || !strings.Contains(out.Errors[0].Error(), "502 Bad Gateway") || len(out.Opened) != 0 {
		t.Fatalf("the failed open must be one error and nothing opened: %+v", out)
	}
	if files := b.host.Branch(repo, branch); files != nil {
		t.Errorf("the branch pushed for the PR that failed was left behind: %v", files)
	}
	if _, ok, _ := b.st.PRFor(context.Background(), key); ok {
		t.Error("a pull request that was never opened is remembered")
	}
	if n := b.host.Calls("SetCheck"); n != 0 {
		t.Errorf("%d checks published for a pull request that was never opened", n)
	}
	for _, m := range b.note.Sent() {
		if strings.HasPrefix(m.Text, "fix opened") {
			t.Errorf("the digest announced a pull request that was never opened: %q", m.Text)
		}
	}

	out = b.clean(b.stuck(removeReplicas))
	if len(out.Opened) != 1 || len(b.host.PRs(repo)) != 1 || b.host.Calls("OpenPR") != 2 {
		t.Fatalf("the next cycle must open the PR once: %+v, %d PRs", out, len(b.host.PRs(repo)))
	}

	// A push the host refuses (a person changed the file since the synced
	// revision) is no failure: nothing is published, and the skip says why.
	b2 := newBench(t)
	b2.host.FailNext("Push", fmt.Errorf("%s: %w", file, githost.ErrFileChanged))
	out = b2.clean(b2.stuck(removeReplicas))
	if len(out.Opened) != 0 || len(b2.host.PRs(repo)) != 0 || b2.host.Branch(repo, branch) != nil {
		t.Errorf("a refused push must publish nothing: %+v", out)
	}
	if !strings.Contains(strings.Join(out.Skipped, "\n"), "would revert that change") {
		t.Errorf("the skip must say why: %q", out.Skipped)
	}
}

// TestDigestGoesOnWhereItStopped: a digest the notifier stopped taking
// half-way is continued from the first message not sent, in the same
// thread, and nothing it already sent is sent again.
func TestDigestGoesOnWhereItStopped(t *testing.T) {
	b := newBench(t)
	b.note.FailAt(2, errors.New("connection reset"))
	out := b.publish(b.stuck(removeReplicas))
	if len(out.Errors) != 1 || !strings.Contains(out.Errors[0].Error(), "the rest follows next cycle") {
		t.Fatalf("the stopped digest must be one error saying it goes on: %v", out.Errors)
	}
	if sent := b.note.Sent(); len(sent) != 1 || sent[0].Text != "digest for main" {
		t.Fatalf("sent %+v, want the first message only", sent)
	}

	b.clean(b.stuck(removeReplicas)) // nothing new: only the rest of the digest
	sent := b.note.Sent()
	var texts []string
	for _, m := range sent {
		texts = append(texts, m.Text)
	}
	want := []string{"digest for main", "newly stuck: argocd/shop", "fix opened for argocd/shop: " + removeReplicas.title + " https://git.example.org/acme/shop/pull/1"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Fatalf("sent %q, want %q", texts, want)
	}
	for _, m := range sent[1:] {
		if m.Channel != "#gitops" || m.Thread != sent[0].ID {
			t.Errorf("message %q went to %s thread %q, want #gitops thread %q", m.Text, m.Channel, m.Thread, sent[0].ID)
		}
	}
}

// TestDashboardUpdatedInPlace: the repository's Drift Dashboard is one
// issue driftfix opens once and edits as things change: it lists the stuck
// application with its fix PR, and says when nothing is stuck.
func TestDashboardUpdatedInPlace(t *testing.T) {
	b := newBench(t)
	b.clean(b.stuck(removeReplicas))
	issues := b.host.Issues(repo)
	if len(issues) != 1 || issues[0].Title != config.DefaultDashboardTitle || issues[0].State != "open" {
		t.Fatalf("one open dashboard issue expected: %+v", issues)
	}
	if body := issues[0].Body; !strings.Contains(body, "argocd/shop") || !strings.Contains(body, "| #1 | "+removeReplicas.title) {
		t.Errorf("the dashboard must list shop and its fix PR:\n%s", body)
	}
	first := issues[0].Body

	out := b.clean(b.synced()) // the drift went
	if fmt.Sprint(out.Closed) != "[acme/shop#1]" || b.onlyPR().State != "closed" {
		t.Fatalf("the fix PR must close when its drift goes: %+v", out)
	}
	issues = b.host.Issues(repo)
	if len(issues) != 1 || b.host.Calls("OpenIssue") != 1 || b.host.Calls("EditIssue") == 0 {
		t.Fatalf("the dashboard must be edited in place: %d issues, %d opened, %d edits", len(issues), b.host.Calls("OpenIssue"), b.host.Calls("EditIssue"))
	}
	if issues[0].Body == first || strings.Contains(issues[0].Body, "| #1 |") {
		t.Errorf("the dashboard still shows the closed fix:\n%s", issues[0].Body)
	}
}

// TestAddingANotifier (docs/development.md, "How to add a Git host or a
// notifier"): a notifier of its own format, one type with Render and Send,
// gets the digest as the neutral view through the path Slack's does
// (Render, the outbox, Send): the newly stuck application and its opened
// fix PR with its link and key, then, in the thread that announced the PR,
// its closing.
func TestAddingANotifier(t *testing.T) {
	b := newBench(t)
	out := b.clean(b.stuck(removeReplicas))
	views := b.note.Views()
	if len(views) != 1 {
		t.Fatalf("%d digests rendered, want 1", len(views))
	}
	v := views[0]
	if v.Instance != "main" || v.ArgoCDURL != "https://argocd.example.com" || len(v.NewStuck) != 1 || v.NewStuck[0].App != "shop" ||
		len(v.Opened) != 1 || v.Opened[0].URL != "https://git.example.org/acme/shop/pull/1" || v.Opened[0].Key != key {
		t.Errorf("the digest view %+v", v)
	}
	if len(out.Digests["#gitops"]) != 3 {
		t.Errorf("Published.Digests %q, want the 3 messages sent to #gitops", out.Digests)
	}

	b.clean(b.synced())
	sent := b.note.Sent()
	last := sent[len(sent)-1]
	if !strings.HasPrefix(last.Text, "fix closed for argocd/shop") || last.Thread != sent[0].ID {
		t.Errorf("the PR's closing must go in the thread that announced it (%q): %+v", sent[0].ID, last)
	}
}
