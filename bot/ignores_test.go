package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

const ignoresConfig = `
argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]
slack: {tokenEnv: S, channel: "#gitops"}
policy: {labels: [driftfix], dashboard: {enabled: true}, ignoreRules: {staleAfter: 14d}}
`

// ordersSnapshot is Synced with two rules: one hides the replicas an
// autoscaler sets, one names a Service the application does not have.
const ordersSnapshot = "bot/testdata/ignores/orders.yaml"

// ignoresWorld is a world with one Synced application per name, each read
// from its own repository, which also holds its Application manifest.
func ignoresWorld(t *testing.T, snapshot string, names ...string) (*world, time.Time) {
	t.Helper()
	w := newWorld(t, ignoresConfig)
	w.base = corpus.Load(t, snapshot)
	for _, n := range names {
		files := map[string]string{}
		for k, v := range w.base.Repo.Files {
			if k == "argocd/orders.yaml" {
				k, v = "argocd/"+n+".yaml", strings.Replace(v, "  name: orders\n  namespace: argocd\n", "  name: "+n+"\n  namespace: argocd\n", 1)
			}
			files[k] = v
		}
		w.addRepoFiles(n, files)
		w.serveSynced(n, snapshot, nil)
	}
	return w, worldNow
}

// serveSynced serves application name, Synced, with the snapshot's
// resources, changed by change first.
func (w *world) serveSynced(name, snapshot string, change func(*drift.Snapshot)) {
	s := corpus.Load(w.t, snapshot)
	if change != nil {
		change(s)
	}
	drift.Map(s.Application, "metadata")["name"] = name
	drift.Map(s.Application, "spec")["source"] = map[string]any{"repoURL": w.repoURL[name], "path": "apps/orders", "targetRevision": "main"}
	st := drift.Map(s.Application, "status")
	st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": worldNow.Add(-time.Hour).Format(time.RFC3339)}
	st["sync"] = map[string]any{"status": "Synced", "revision": "main"}
	w.argo.Add(s)
}

func ignoresGolden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", "ignores", name)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from the golden file:\n%s", name, got)
	}
}

// ignorePRs are the pull requests of a repository from ignore-rule branches.
func (w *world) ignorePRs(repo string) []githubtest.PullRequest {
	var out []githubtest.PullRequest
	for _, p := range w.gh.PullRequests("acme", repo) {
		if strings.Contains(p.Head, "/ignores-main/") {
			out = append(out, p)
		}
	}
	return out
}

// TestIgnoreRuleStaleRemovalPR: a rule that hides nothing gets no pull
// request before staleAfter (14 days), then exactly one that removes it from
// the Application manifest with its comments kept, verified by
// re-diagnosis; the rule that hides the autoscaler's replicas stays. Cycles
// after it, by fresh processes and after a lost database, never open a
// second one.
func TestIgnoreRuleStaleRemovalPR(t *testing.T) {
	w, now := ignoresWorld(t, ordersSnapshot, "orders")
	start := now
	w.cycle(&now)
	if n := len(w.ignorePRs("orders")); n != 0 {
		t.Fatalf("a pull request on the first cycle a rule hid nothing: %d", n)
	}
	now = start.Add(13*24*time.Hour + 23*time.Hour)
	w.cycle(&now)
	if n := len(w.ignorePRs("orders")); n != 0 {
		t.Fatalf("a pull request before 14 days: %d", n)
	}
	now = start.Add(14 * 24 * time.Hour)
	out := w.cycle(&now)
	prs := w.ignorePRs("orders")
	if len(prs) != 1 || len(out.Published.Opened) != 1 {
		t.Fatalf("want one removal PR after 14 days, got %d (opened %v); skipped %v", len(prs), out.Published.Opened, out.Result.Skipped)
	}
	pr := prs[0]
	after, err := w.gh.File("acme", "orders", pr.Head, "argocd/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ignoresGolden(t, "stale-removed.golden", after)
	for _, want := range []string{"# orders, owned by team-checkout", "# the autoscaler owns replicas", "- /spec/replicas"} {
		if !strings.Contains(after, want) {
			t.Errorf("%q is lost:\n%s", want, after)
		}
	}
	if strings.Contains(after, "orders-legacy") {
		t.Errorf("the stale rule is still there:\n%s", after)
	}
	for _, want := range []string{"remove 1 ignore rule that hid nothing for 14 days in argocd/orders.yaml",
		"no new difference, so none becomes OutOfSync", "`Application argocd/orders` `spec.ignoreDifferences[1]`"} {
		if !strings.Contains(pr.Title+pr.Body, want) {
			t.Errorf("the PR does not say %q:\n%s\n%s", want, pr.Title, pr.Body)
		}
	}
	if len(pr.Labels) != 1 || pr.Labels[0] != "driftfix" {
		t.Errorf("labels %v, want the policy's [driftfix]", pr.Labels)
	}
	w.cycle(&now)
	w.loseDatabase()
	w.cycle(&now)
	now = now.Add(15 * 24 * time.Hour)
	w.cycle(&now)
	if prs := w.ignorePRs("orders"); len(prs) != 1 || prs[0].State != "open" {
		t.Fatalf("want the one removal PR, still open, across restarts and a lost database; got %+v", prs)
	}
}

// TestIgnoreRuleHidingSomethingNoPR: a rule that hides the autoscaler's
// replicas is neither flagged nor removed, however long it stays.
func TestIgnoreRuleHidingSomethingNoPR(t *testing.T) {
	w, now := ignoresWorld(t, ordersSnapshot)
	w.addRepoFiles("orders", w.base.Repo.Files)
	w.serveSynced("orders", ordersSnapshot, func(s *drift.Snapshot) {
		spec := drift.Map(s.Application, "spec")
		spec["ignoreDifferences"] = drift.List(s.Application, "spec", "ignoreDifferences")[:1]
	})
	start := now
	for _, d := range []int{0, 14, 30} {
		now = start.Add(time.Duration(d) * 24 * time.Hour)
		out := w.cycle(&now)
		if len(out.Result.IgnorePRs) != 0 || len(w.ignorePRs("orders")) != 0 {
			t.Fatalf("day %d: a pull request for a rule that hides something: %+v", d, out.Result.IgnorePRs)
		}
		if len(out.Result.Ignores) != 1 || len(out.Result.Ignores[0].Lines) != 0 {
			t.Fatalf("day %d: want the inventory with nothing flagged, got %+v", d, out.Result.Ignores)
		}
	}
}

// TestIgnoreRuleBroadNarrowingPR: a Synced application whose rule ignores
// every container of every Deployment gets the narrow-ignore pull request
// at once: the rule is replaced by one for the CPU limit a webhook writes,
// and the image changed by hand shows again.
func TestIgnoreRuleBroadNarrowingPR(t *testing.T) {
	w, now := ignoresWorld(t, "remediations/testdata/app-narrow-ignore.yaml", "orders")
	out := w.cycle(&now)
	prs := w.ignorePRs("orders")
	if len(prs) != 1 {
		t.Fatalf("want one narrowing PR, got %d; skipped %v", len(prs), out.Result.Skipped)
	}
	pr := prs[0]
	after, err := w.gh.File("acme", "orders", pr.Head, "argocd/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ignoresGolden(t, "broad-narrowed.golden", after)
	for _, want := range []string{"narrow a broad ignore rule in argocd/orders.yaml", "Argo CD will show what the rule hid", "/spec/template/spec/containers/0/resources/limits/cpu"} {
		if !strings.Contains(pr.Title+pr.Body+after, want) {
			t.Errorf("the PR does not say %q:\n%s\n%s", want, pr.Title, pr.Body)
		}
	}
	w.cycle(&now)
	if n := len(w.ignorePRs("orders")); n != 1 {
		t.Fatalf("the next cycle made %d narrowing PRs, want the one", n)
	}
}

// TestIgnoreInventoryDigestWeekly: the digest's section of flagged ignore
// rules is posted on the first cycle, not again within 7 days, and again
// after them.
func TestIgnoreInventoryDigestWeekly(t *testing.T) {
	w, now := ignoresWorld(t, ordersSnapshot, "orders")
	start := now
	section := func() string {
		t.Helper()
		var lines []string
		in := false
		for _, p := range w.slack.Posts() {
			for _, l := range strings.Split(digestText(t, p), "\n") {
				switch {
				case l == "*Ignore rules to look at (weekly)*":
					in = true
					lines = append(lines, l)
				case strings.HasPrefix(l, "*"):
					in = false
				case in && l != "":
					lines = append(lines, l)
				}
			}
		}
		return strings.Join(lines, "\n") + "\n"
	}
	w.cycle(&now)
	first := section()
	ignoresGolden(t, "digest.golden", first)
	now = start.Add(6 * 24 * time.Hour)
	w.cycle(&now)
	if got := section(); got != first {
		t.Fatalf("the section was posted again within 7 days:\n%s", got)
	}
	now = start.Add(7 * 24 * time.Hour)
	w.cycle(&now)
	if got := section(); strings.Count(got, "*Ignore rules to look at (weekly)*") != 2 || !strings.Contains(got, "has hidden nothing for 7 days") {
		t.Fatalf("want the section posted again after 7 days, saying how long the rule hid nothing:\n%s", got)
	}
}

// TestIgnoreInventoryDashboard: the Drift Dashboard of the repository shows
// the flagged rules of its applications every time it is written, with the
// removal pull request once there is one.
func TestIgnoreInventoryDashboard(t *testing.T) {
	w, now := ignoresWorld(t, ordersSnapshot, "orders")
	start := now
	w.cycle(&now)
	body := func() string {
		for _, i := range w.gh.Issues("acme", "orders") {
			if strings.Contains(i.Body, "driftfix:dashboard=") {
				return i.Body
			}
		}
		t.Fatal("no Drift Dashboard")
		return ""
	}
	ignoresGolden(t, "dashboard.golden", body())
	now = start.Add(14 * 24 * time.Hour)
	w.cycle(&now)
	pr := w.ignorePRs("orders")
	if len(pr) != 1 || !strings.Contains(body(), "Pull request: http") || !strings.Contains(body(), "has hidden nothing for 14 days") {
		t.Fatalf("the dashboard does not name the removal PR (%d open):\n%s", len(pr), body())
	}
}

// TestIgnoreRuleStaleArgoCDCMRemovalPR: an argocd-cm rule for a kind no
// application has hides nothing; after 14 days one pull request removes
// its key from the platform repository's argocd-cm, comments kept.
func TestIgnoreRuleStaleArgoCDCMRemovalPR(t *testing.T) {
	w, now := ignoresWorld(t, ordersSnapshot)
	w.addRepoFiles("orders", w.base.Repo.Files)
	w.serveSynced("orders", ordersSnapshot, func(s *drift.Snapshot) {
		drift.Map(s.Application, "spec")["ignoreDifferences"] = drift.List(s.Application, "spec", "ignoreDifferences")[:1]
	})
	w.argo.Settings["resourceOverrides"] = map[string]any{"batch/CronJob": map[string]any{"ignoreDifferences": "jsonPointers:\n- /spec/suspend\n"}}
	const cm = `# Argo CD's settings. Owned by the platform team.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  # resource tracking by annotation, see ADR-12
  application.resourceTrackingMethod: annotation
  # batch jobs are suspended by the scheduler
  resource.customizations.ignoreDifferences.batch_CronJob: |
    jsonPointers:
    - /spec/suspend
  timeout.reconciliation: 180s # the default is too slow for us
`
	u := w.addRepoFiles("argocd-config", map[string]string{"argocd/argocd-cm.yaml": cm})
	var err error
	if w.cfg, err = config.Parse([]byte(ignoresConfig + "platformRepos:\n  - {url: " + u + ", instance: main, file: argocd/argocd-cm.yaml}\n")); err != nil {
		t.Fatal(err)
	}
	start := now
	w.cycle(&now)
	now = start.Add(14 * 24 * time.Hour)
	out := w.cycle(&now)
	prs := w.ignorePRs("argocd-config")
	if len(prs) != 1 {
		t.Fatalf("want one removal PR in the platform repository, got %d; skipped %v", len(prs), out.Result.Skipped)
	}
	after, err := w.gh.File("acme", "argocd-config", prs[0].Head, "argocd/argocd-cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ignoresGolden(t, "argocd-cm-removed.golden", after)
	if n := len(w.ignorePRs("orders")); n != 0 {
		t.Errorf("%d pull requests to the application's repository, whose rule hides something", n)
	}
}

// TestIgnoreRuleRemovalPRFollowUp: the removal PR is closed with a comment
// when its rule hides something again, opened again once the rule has hidden
// nothing for staleAfter anew, and, once a person closes it unmerged, never
// proposed again.
func TestIgnoreRuleRemovalPRFollowUp(t *testing.T) {
	w, now := ignoresWorld(t, ordersSnapshot, "orders")
	start := now
	w.cycle(&now)
	now = start.Add(14 * 24 * time.Hour)
	w.cycle(&now)
	if n := len(w.ignorePRs("orders")); n != 1 {
		t.Fatalf("want the removal PR, got %d", n)
	}
	// The Service comes back, with a clusterIP the rule hides.
	svc := func(ip string) drift.Object {
		return drift.Object{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "orders-legacy", "namespace": "shop"},
			"spec": map[string]any{"clusterIP": ip, "ports": []any{map[string]any{"port": 80}}}}
	}
	w.serveSynced("orders", ordersSnapshot, func(s *drift.Snapshot) {
		s.Resources = append(s.Resources, drift.Resource{Target: svc("10.0.0.1"), Live: svc("10.0.0.2")})
	})
	out := w.cycle(&now)
	prs := w.ignorePRs("orders")
	if len(prs) != 1 || prs[0].State != "closed" || prs[0].ClosedBy != "bot" || len(out.Published.Closed) != 1 {
		t.Fatalf("want the removal PR closed by driftfix once its rule hides something, got %+v (closed %v)", prs, out.Published.Closed)
	}
	// The Service goes again: 14 days later the rule is stale anew.
	w.serveSynced("orders", ordersSnapshot, nil)
	again := now
	w.cycle(&now)
	now = again.Add(14 * 24 * time.Hour)
	w.cycle(&now)
	prs = w.ignorePRs("orders")
	if len(prs) != 2 || prs[1].State != "open" {
		t.Fatalf("want a new removal PR once the rule is stale anew, got %+v", prs)
	}
	if err := w.gh.CloseUnmerged("acme", "orders", prs[1].Number); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * 24 * time.Hour)
	out = w.cycle(&now)
	if n := len(w.ignorePRs("orders")); n != 2 {
		t.Fatalf("a PR a person closed was proposed again: %d PRs", n)
	}
	said := false
	for _, s := range out.Published.Skipped {
		said = said || strings.Contains(s, "a person closed acme/orders#")
	}
	if !said {
		t.Errorf("the cycle does not say why it proposes nothing: %v", out.Published.Skipped)
	}
}

// TestIgnoreRuleBroadStuckHeldBack: a stuck application's broad rule gets
// the one narrowing pull request of its file; the application's own
// narrow-ignore fix of the same rule is held back while it is open, and
// says so, never a second PR for the rule.
func TestIgnoreRuleBroadStuckHeldBack(t *testing.T) {
	const snap = "remediations/testdata/app-narrow-ignore.yaml"
	w, now := ignoresWorld(t, snap)
	w.addRepoFiles("orders", w.base.Repo.Files)
	s := corpus.Load(t, snap)
	drift.Map(s.Application, "spec")["source"] = map[string]any{"repoURL": w.repoURL["orders"], "path": "apps/orders", "targetRevision": "main"}
	st := drift.Map(s.Application, "status")
	st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": worldNow.Add(-time.Hour).Format(time.RFC3339)}
	st["sync"] = map[string]any{"status": "OutOfSync", "revision": "main"}
	w.argo.Add(s)
	out := w.cycle(&now)
	narrow := 0
	for _, p := range out.Result.PRs {
		if p.Plan.Kind == drift.FixNarrowIgnore {
			narrow++
		}
	}
	if narrow != 1 || len(out.Result.IgnorePRs) != 1 {
		t.Fatalf("want the application's own narrow-ignore fix and the ignore-rule PR proposed, got %d and %d; stuck %d, skipped %v, PRs %+v", narrow, len(out.Result.IgnorePRs), len(out.Result.Stuck), out.Result.Skipped, len(out.Result.PRs))
	}
	if n, all := len(w.ignorePRs("orders")), len(w.open("orders")); n != 1 || all != 1 {
		t.Fatalf("want one open PR, the ignore-rule one; got %d ignore-rule PRs of %d open", n, all)
	}
	held := false
	for _, s := range out.Published.Skipped {
		held = held || strings.Contains(s, "held back: the ignore-rule pull request acme/orders#")
	}
	if !held {
		t.Errorf("the application's own fix does not say it is held back: %v", out.Published.Skipped)
	}
}
