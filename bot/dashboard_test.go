package bot

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/state"
)

const dashboardConfig = `
argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]
slack: {tokenEnv: S, channel: "#gitops"}
policy: {labels: [driftfix], dashboard: {enabled: true}}
overrides:
  - match: {app: "quiet-*"}
    policy: {quietHours: {from: "00:00", to: "23:59", timezone: UTC}}
  - match: {app: "nodash-*"}
    policy: {dashboard: {enabled: false}}
`

const dashboardMarker = "<!-- driftfix:dashboard=all -->"

// dashboards are driftfix's own dashboard issues of a repository (open ones
// only, with open).
func (w *world) dashboards(repo string, open bool) []githubtest.Issue {
	var out []githubtest.Issue
	for _, i := range w.gh.Issues("acme", repo) {
		if i.Author == "driftfix[bot]" && strings.HasPrefix(i.Body, dashboardMarker) && (!open || i.State == "open") {
			out = append(out, i)
		}
	}
	return out
}

// dashboard is a repository's one open dashboard; the test fails unless there is exactly one.
func (w *world) dashboard(repo string) githubtest.Issue {
	w.t.Helper()
	ds := w.dashboards(repo, true)
	if len(ds) != 1 {
		w.t.Fatalf("%s: %d open dashboards, want 1: %+v", repo, len(ds), ds)
	}
	return ds[0]
}

func (w *world) store() *state.Store {
	w.t.Helper()
	st, err := state.Open(context.Background(), w.dbPath, rowSeal)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { st.Close() })
	return st
}

// TestDashboardOnePerRepository: each repository driftfix reads gets one
// dashboard holding its applications (those whose policy enables it), kept
// across restarts with a fresh database and across two replicas publishing
// at once; it is written only when its text changes.
func TestDashboardOnePerRepository(t *testing.T) {
	w, now := stuckWorld(t, dashboardConfig, "shop", "cart", "nodash-blog")
	w.setApp("shop-admin", "shop", true, now) // a second application of acme/shop
	cycle := func() Outcome { return w.cycle(&now) }
	writes := func() (int, int) {
		return w.gh.CallCount("POST /repos/{owner}/{repo}/issues"), w.gh.CallCount("PATCH /repos/{owner}/{repo}/issues/{number}")
	}
	cycle()
	shop := w.dashboard("shop")
	if !strings.Contains(shop.Body, "<b>argocd/shop</b>") || !strings.Contains(shop.Body, "<b>argocd/shop-admin</b>") || shop.Title != "Drift Dashboard" {
		t.Fatalf("acme/shop's dashboard must hold both its applications:\n%s", shop.Body)
	}
	if cart := w.dashboard("cart"); strings.Contains(cart.Body, "argocd/shop") {
		t.Errorf("acme/cart's dashboard holds another repository's application:\n%s", cart.Body)
	}
	if n := len(w.gh.Issues("acme", "nodash-blog")); n != 0 {
		t.Errorf("a repository whose applications disable the dashboard got %d issues", n)
	}
	opened, edited := writes()
	searches := w.gh.CallCount("GET /repos/{owner}/{repo}/issues")
	if opened != 2 {
		t.Fatalf("%d issues opened, want 2", opened)
	}
	for i := 0; i < 2; i++ {
		cycle()
		if o, e := writes(); o != opened || e != edited {
			t.Fatalf("an unchanged dashboard was written: %d opened, %d edited (before %d, %d)", o, e, opened, edited)
		}
	}
	if n := w.gh.CallCount("GET /repos/{owner}/{repo}/issues") - searches; n != 0 {
		t.Errorf("a remembered dashboard is read by number, not searched: %d searches", n)
	}

	w.setApp("cart", "cart", false, now) // cart is Synced: its dashboard says so, once
	cycle()
	if o, e := writes(); o != opened || e != edited+1 {
		t.Fatalf("a changed dashboard must be edited once: %d opened, %d edited (before %d, %d)", o, e, opened, edited)
	}
	if cart := w.dashboard("cart"); !strings.Contains(cart.Body, "Nothing is stuck") {
		t.Errorf("cart's dashboard:\n%s", cart.Body)
	}

	for i := 0; i < 2; i++ { // restarts with a lost database find the dashboards again
		w.loseDatabase()
		cycle()
	}
	w.setApp("cart", "cart", true, now)
	var wg sync.WaitGroup // two replicas with their own databases, at once
	for i := 0; i < 2; i++ {
		w.dbPath = filepath.Join(w.dir, fmt.Sprintf("replica%d.db", i))
		r, closeDB := w.runner()
		defer closeDB()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Once(context.Background(), now)
		}()
	}
	wg.Wait()
	for _, repo := range []string{"shop", "cart"} {
		if all := w.dashboards(repo, false); len(all) != 1 {
			t.Errorf("%s: %d dashboards after restarts and two replicas, want 1", repo, len(all))
		}
	}
	if o, _ := writes(); o != opened {
		t.Errorf("%d issues opened in all, want %d", o, opened)
	}
}

// TestDashboardTwoReplicasOpenAtOnce: two replicas that both find no
// dashboard and open one at the same moment keep the older open and close
// the newer. The second replica's whole cycle runs while the first one's
// request to open the issue is on the wire.
func TestDashboardTwoReplicasOpenAtOnce(t *testing.T) {
	w, now := stuckWorld(t, dashboardConfig, "shop")
	w.dbPath = filepath.Join(w.dir, "replica-a.db")
	a, closeA := w.runner()
	defer closeA()
	var once sync.Once
	gh, err := github.New(github.Config{AppID: w.gh.AppID, PrivateKey: w.gh.PrivateKeyPEM, BaseURL: w.gh.API, Backoff: 5 * time.Millisecond,
		Transport: roundTrip(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/repos/acme/shop/issues") {
				once.Do(func() {
					w.dbPath = filepath.Join(w.dir, "replica-b.db")
					b, closeB := w.runner()
					defer closeB()
					if out, err := b.Once(context.Background(), now); err != nil || len(out.Published.Errors) > 0 {
						t.Errorf("replica b: %v %v", err, out.Published.Errors)
					}
				})
			}
			return http.DefaultTransport.RoundTrip(req)
		})})
	if err != nil {
		t.Fatal(err)
	}
	a.Publisher.Hosts = []publish.GitHost{gh}
	if out, err := a.Once(context.Background(), now); err != nil || len(out.Published.Errors) > 0 {
		t.Fatalf("replica a: %v %v", err, out.Published.Errors)
	}
	all := w.dashboards("shop", false)
	d := w.dashboard("shop")
	if len(all) != 2 || d.Number != all[0].Number || all[1].State != "closed" {
		t.Fatalf("both replicas opened one; the older must stay open and the newer be closed: %+v", all)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var boxKey = regexp.MustCompile(`- \[ \] (?:stop proposing this fix and close #\d+|recheck|open the fix PR now|stop proposing this fix) <!-- driftfix:do=[a-z-]+ key=([0-9a-f]+) -->`)

// keyOf is the fix key of the first box on a line containing text.
func keyOf(t *testing.T, body, text string) string {
	t.Helper()
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, text) {
			if m := boxKey.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no box %q in:\n%s", text, body)
	return ""
}

// TestDashboardCheckboxes: a box ticked by an account that can write is
// acted on once and unticked: recheck and open-now are recorded for the code
// that honours them; stop rejects the fix and closes its PR. A box ticked
// by an edit of someone who cannot write is not followed, and unticked.
func TestDashboardCheckboxes(t *testing.T) {
	w, now := stuckWorld(t, dashboardConfig, "shop")
	w.setApp("quiet-cart", "shop", true, now) // held by quiet hours: its fix waits
	cycle := func() Outcome { return w.cycle(&now) }
	cycle()
	prs := w.open("shop")
	d := w.dashboard("shop")
	if len(prs) != 1 || !strings.Contains(d.Body, fmt.Sprintf("| #%d |", prs[0].Number)) || !strings.Contains(d.Body, "quiet hours") || !strings.Contains(d.Body, "| `success` |") {
		t.Fatalf("the dashboard must list the open PR with its passing check and the fix held by quiet hours; PRs %+v:\n%s", prs, d.Body)
	}
	w.gh.SetPermission("acme", "shop", "maintainer", githost.PermissionWrite)
	w.gh.SetPermission("acme", "shop", "reader", githost.PermissionRead)
	prKey := keyOf(t, d.Body, "- [ ] recheck")
	heldKey := keyOf(t, d.Body, "- [ ] open the fix PR now")
	ctx := context.Background()

	if err := w.gh.TickAs("acme", "shop", d.Number, "maintainer", "- [ ] recheck"); err != nil {
		t.Fatal(err)
	}
	if err := w.gh.TickAs("acme", "shop", d.Number, "maintainer", "- [ ] open the fix PR now"); err != nil {
		t.Fatal(err)
	}
	cycle()
	st := w.store()
	for _, rq := range [][2]string{{prKey, state.ActionRecheck}, {heldKey, state.ActionOpenNow}} {
		if ok, err := st.Requested(ctx, rq[0], rq[1]); err != nil || !ok {
			t.Errorf("the %s box ticked by a maintainer must be recorded for %s: %v %v", rq[1], rq[0], ok, err)
		}
	}
	d = w.dashboard("shop")
	if strings.Contains(d.Body, "[x]") || !strings.Contains(d.Body, "(a recheck is asked for)") || !strings.Contains(d.Body, "(opening it now is asked for)") {
		t.Fatalf("acted-on boxes must be unticked and the requests shown:\n%s", d.Body)
	}
	if out := cycle(); len(out.Published.Checked) != 1 {
		t.Errorf("the recheck asked on the dashboard must publish the PR's check again: %+v", out.Published)
	}
	if ok, _ := st.Requested(ctx, prKey, state.ActionRecheck); ok {
		t.Error("a recheck done must be cleared")
	}
	if out := cycle(); len(out.Published.Checked) != 0 {
		t.Error("an unticked box was acted on again")
	}

	// The reader ticks "stop": not followed, and unticked.
	if err := w.gh.TickAs("acme", "shop", d.Number, "reader", "- [ ] stop proposing this fix and close"); err != nil {
		t.Fatal(err)
	}
	out := cycle()
	if len(w.open("shop")) != 1 || len(out.Published.Rejected) != 0 {
		t.Fatalf("a box ticked by a reader stopped the fix: %+v", out.Published)
	}
	if !strings.Contains(strings.Join(out.Published.Skipped, "\n"), `last edited by "reader"`) {
		t.Errorf("the cycle must say the reader's box was not followed: %q", out.Published.Skipped)
	}
	if d = w.dashboard("shop"); strings.Contains(d.Body, "[x]") {
		t.Errorf("a box not followed must be unticked:\n%s", d.Body)
	}
	if _, ok, _ := st.Rejected(ctx, prKey); ok {
		t.Fatal("the reader's box rejected the fix")
	}

	// The maintainer ticks "stop": the fix is rejected and its PR closed, once.
	if err := w.gh.TickAs("acme", "shop", d.Number, "maintainer", "- [ ] stop proposing this fix and close"); err != nil {
		t.Fatal(err)
	}
	out = cycle()
	if len(w.open("shop")) != 0 || len(out.Published.Rejected) != 1 {
		t.Fatalf("a maintainer's stop box must close the PR: %+v", out.Published)
	}
	if _, ok, _ := st.Rejected(ctx, prKey); !ok {
		t.Error("the stopped fix is not remembered as rejected")
	}
	d = w.dashboard("shop")
	if strings.Contains(d.Body, "[x]") || !strings.Contains(d.Body, "Rejected or ignored fixes") || !strings.Contains(d.Body, "asked to stop on the Drift Dashboard") {
		t.Fatalf("the stopped fix must be listed as rejected:\n%s", d.Body)
	}
	for i := 0; i < 2; i++ {
		if out := cycle(); len(out.Published.Rejected)+len(out.Published.Opened) != 0 || len(w.gh.PullRequests("acme", "shop")) != 1 {
			t.Fatalf("a stopped fix came back or was stopped again: %+v", out.Published)
		}
	}
}

// TestDashboardForgedMarker: a person's issue that carries the dashboard's
// marker and a ticked stop box is neither adopted nor followed: driftfix
// opens its own, and the person's stays as it was.
func TestDashboardForgedMarker(t *testing.T) {
	w, now := stuckWorld(t, dashboardConfig, "shop")
	w.cycle(&now)
	own := w.dashboard("shop")
	key := keyOf(t, own.Body, "- [ ] stop proposing this fix and close")
	forged := dashboardMarker + "\n- [x] stop proposing this fix and close #1 <!-- driftfix:do=stop key=" + key + " -->\n"
	n, err := w.gh.AddIssue("acme", "shop", githubtest.Issue{Title: "Drift Dashboard", Body: forged, Author: "person"})
	if err != nil {
		t.Fatal(err)
	}
	w.loseDatabase()
	w.gh.SetPermission("acme", "shop", "person", githost.PermissionWrite)
	out := w.cycle(&now)
	if len(w.open("shop")) != 1 || len(out.Published.Rejected) != 0 {
		t.Fatalf("a forged dashboard's box stopped the fix: %+v", out.Published)
	}
	if d := w.dashboard("shop"); d.Number != own.Number {
		t.Errorf("driftfix must keep its own dashboard #%d, not #%d", own.Number, d.Number)
	}
	for _, i := range w.gh.Issues("acme", "shop") {
		if i.Number == n && i.Body != forged {
			t.Errorf("the person's issue was changed:\n%s", i.Body)
		}
	}
}

// TestDashboardOverTheLimit: a repository with more applications than one
// issue body holds gets a dashboard GitHub accepts (the emulator refuses a
// body over 65,536 characters), its sections collapsed and the rest named,
// each section whole.
func TestDashboardOverTheLimit(t *testing.T) {
	w, now := stuckWorld(t, dashboardConfig, "shop")
	const n = 120
	for i := 0; i < n; i++ {
		w.setApp(fmt.Sprintf("shop-%03d", i), "shop", true, now)
	}
	w.cycle(&now)
	d := w.dashboard("shop")
	if len(d.Body) > 65536 || strings.Contains(d.Body, "<details open>") {
		t.Fatalf("%d bytes, expanded %v", len(d.Body), strings.Contains(d.Body, "<details open>"))
	}
	whole := strings.Count(d.Body, "</details>")
	if strings.Count(d.Body, "<details>") != whole || !strings.Contains(d.Body, fmt.Sprintf("%d of %d applications are shortened to their names", n+1-whole, n+1)) {
		t.Fatalf("%d whole sections; the rest must be counted:\n%s", whole, d.Body[len(d.Body)-2000:])
	}
	t.Logf("%d applications: %d sections whole, %d bytes", n+1, whole, len(d.Body))
}

// TestDashboardEditedByAPerson: a maintainer who rewrites the dashboard
// (its marker too) does not make driftfix open another: its remembered
// issue is written back as driftfix renders it.
func TestDashboardEditedByAPerson(t *testing.T) {
	w, now := stuckWorld(t, dashboardConfig, "shop")
	w.cycle(&now)
	d := w.dashboard("shop")
	if err := w.gh.EditIssueAs("acme", "shop", d.Number, "person", "notes from the platform team"); err != nil {
		t.Fatal(err)
	}
	w.cycle(&now)
	if all := w.gh.Issues("acme", "shop"); len(all) != 1 || all[0].Body != d.Body {
		t.Fatalf("the dashboard must be written back in place, not opened again: %+v", all)
	}
}

// TestDashboardKeptWhileArgoCDIsDown: while one of two Argo CD instances
// does not answer, nothing is known about its applications, so no dashboard
// is written (it would drop them as if they were fine).
func TestDashboardKeptWhileArgoCDIsDown(t *testing.T) {
	w, now := stuckWorld(t, dashboardConfig, "shop")
	second := argocdtest.NewServer("argo-token")
	t.Cleanup(second.Close)
	first := w.argo
	w.argo = second
	w.setApp("shop-b", "shop", true, now) // served by the second instance, reading acme/shop too
	w.argo = first
	cycle := func() Outcome {
		t.Helper()
		r, closeDB := w.runner()
		defer closeDB()
		ac, err := argocd.New(argocd.Config{BaseURL: second.URL, Token: "argo-token", Retries: 1, Backoff: 5 * time.Millisecond, Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		in := r.Instances[0]
		in.Name, in.Client = "second", ac
		r.Instances = append(r.Instances, in)
		out, err := r.Once(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(15 * time.Minute)
		return out
	}
	cycle()
	before := w.dashboard("shop")
	if !strings.Contains(before.Body, "<b>argocd/shop-b</b> on second") {
		t.Fatalf("both instances' applications belong on the dashboard:\n%s", before.Body)
	}
	edits := w.gh.CallCount("PATCH /repos/{owner}/{repo}/issues/{number}")
	second.Delay(time.Second) // past the client's timeout
	if out := cycle(); len(out.Result.FailedInstances) != 1 {
		t.Fatalf("the second instance must fail: %v", out.Result.FailedInstances)
	}
	second.Delay(0)
	if d := w.dashboard("shop"); d.Body != before.Body || w.gh.CallCount("PATCH /repos/{owner}/{repo}/issues/{number}") != edits {
		t.Fatalf("a cycle without one instance rewrote the dashboard:\n%s", d.Body)
	}
}

// TestDashboardMergedFixStillDiffers: when Argo CD synced a merged fix and
// the application is still OutOfSync, the finding goes back on the
// dashboard with why (the merged PR, the revision synced, what still
// differs), not as a fix waiting to be opened, and the cycle does not
// claim it waits for a sync; once the application is Synced it goes.
func TestDashboardMergedFixStillDiffers(t *testing.T) {
	w, now := stuckWorld(t, dashboardConfig, "cart")
	w.cycle(&now)
	orig, err := w.gh.File("acme", "cart", "main", "apps/shop/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := w.open("cart")[0].Number
	if err := w.gh.Merge("acme", "cart", n); err != nil {
		t.Fatal(err)
	}
	merged := w.gh.PullRequests("acme", "cart")[0].MergeSHA
	w.setAppAt("cart", "cart", true, now, merged) // synced the merge, still stuck
	// Someone puts the file back on main: the same fix is planned again.
	if err := w.gh.CommitFile("acme", "cart", "main", "apps/shop/web.yaml", orig, "dev"); err != nil {
		t.Fatal(err)
	}
	w.cycle(&now)
	out := w.cycle(&now)
	d := w.dashboard("cart")
	section, _, _ := strings.Cut(d.Body[strings.Index(d.Body, "**Merged fixes that did not end the drift**")+1:], "\n**")
	if !strings.Contains(d.Body, "**Merged fixes that did not end the drift**") || !strings.Contains(section, fmt.Sprintf("- #%d ", n)) ||
		!strings.Contains(section, "at revision `"+merged[:12]+"`") || !strings.Contains(section, "`/spec/replicas` — `hpa-replicas`") {
		t.Fatalf("the merged fix that did not end the drift must be back on the dashboard with why:\n%s", d.Body)
	}
	if strings.Contains(d.Body, "**Fixes not opened yet**") || strings.Contains(d.Body, "waiting for Argo CD to sync") {
		t.Errorf("a merged, synced fix is neither waiting to be opened nor waiting for a sync:\n%s", d.Body)
	}
	if skipped := strings.Join(out.Published.Skipped, "\n"); !strings.Contains(skipped, "synced without ending this drift") {
		t.Errorf("the cycle must say why the fix is not proposed again: %q", out.Published.Skipped)
	}
	w.setAppAt("cart", "cart", false, now, merged)
	w.cycle(&now)
	if d := w.dashboard("cart"); strings.Contains(d.Body, "Merged fixes") || !strings.Contains(d.Body, "Nothing is stuck") {
		t.Errorf("a Synced application's dashboard lists nothing:\n%s", d.Body)
	}
}

// TestDashboardStopWaitingFix: "stop proposing this fix" ticked by a writer
// on a fix not opened yet (cooling down) rejects it for good: no PR opens
// after the cooldown, and the dashboard lists it as rejected, once.
func TestDashboardStopWaitingFix(t *testing.T) {
	cfg := strings.Replace(dashboardConfig, "dashboard: {enabled: true}}", "dashboard: {enabled: true}, minStuckFor: 2h}", 1)
	w, now := stuckWorld(t, cfg, "shop")
	w.cycle(&now)
	d := w.dashboard("shop")
	key := keyOf(t, d.Body, "- [ ] stop proposing this fix <!--")
	w.gh.SetPermission("acme", "shop", "maintainer", githost.PermissionWrite)
	if err := w.gh.TickAs("acme", "shop", d.Number, "maintainer", "- [ ] stop proposing this fix <!--"); err != nil {
		t.Fatal(err)
	}
	w.cycle(&now)
	if _, ok, _ := w.store().Rejected(context.Background(), key); !ok {
		t.Fatal("the stop box ticked by a writer must reject the waiting fix")
	}
	for i := 0; i < 8; i++ { // well past the cooldown (synced an hour before the first cycle)
		if out := w.cycle(&now); len(out.Published.Opened) != 0 {
			t.Fatalf("a stopped fix was opened: %+v", out.Published)
		}
	}
	d = w.dashboard("shop")
	if strings.Contains(d.Body, "[x]") || strings.Contains(d.Body, "**Fixes not opened yet**") || strings.Count(d.Body, "asked to stop on the Drift Dashboard") != 1 {
		t.Fatalf("the stopped fix must be listed once as rejected, no longer as waiting:\n%s", d.Body)
	}
	if len(w.gh.PullRequests("acme", "shop")) != 0 {
		t.Error("no pull request may exist for a stopped fix")
	}
}
