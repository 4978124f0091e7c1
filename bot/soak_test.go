package bot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/githost"
)

// TestSoak runs 100 cycles, restarting the bot every third (new clients, the
// state database reopened, and lost now and then), while drift appears and goes
// away, people merge and close PRs and ask /driftfix recheck, and faults are
// injected: GitHub 5xx and secondary limits, Slack 429s, Argo CD timeouts.
// After every cycle that reached Argo CD: each stuck application has exactly
// one open PR unless a person turned its fix down, no application has two,
// no PR of a Synced application stays open, and every stuck application's
// drift was diagnosed. At the end: one dashboard per repository at most, no
// comment said twice, one check run per commit, and no command acted on
// (acknowledged) twice.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	const apps, cycles = 6, 100
	w := newWorld(t, worldConfig+`overrides: [{match: {namespace: "*"}, policy: {dashboard: {enabled: true}}}]`+"\n")
	rng := rand.New(rand.NewPCG(7, 11))
	now := worldNow
	stuck := map[string]bool{}
	done := map[string]bool{} // merged: Synced for good
	rejected := map[string]bool{}
	for i := 0; i < apps; i++ {
		name := fmt.Sprintf("app%d", i)
		w.addRepo(name)
		stuck[name] = i%2 == 0
		w.setApp(name, name, stuck[name], now)
		w.gh.SetPermission("acme", name, "ops", githost.PermissionWrite)
	}
	var faults struct{ gh5xx, secondary, slack429, argoTimeouts, lostDB int }
	var opened, closed, merged, rejectedN, episodes, restarts, commands int
	var r *Runner
	var closeDB func()
	defer func() { closeDB() }()
	start := time.Now()
	for c := 0; c < cycles; c++ {
		// The world changes.
		for i := 0; i < apps; i++ {
			name := fmt.Sprintf("app%d", i)
			if done[name] || rng.Float64() > 0.15 {
				continue
			}
			stuck[name] = !stuck[name]
			if stuck[name] {
				episodes++
			}
			w.setApp(name, name, stuck[name], now)
		}
		// People act on open PRs.
		for i := 0; i < apps; i++ {
			name := fmt.Sprintf("app%d", i)
			for _, pr := range w.open(name) {
				if rng.Float64() < 0.05 {
					w.gh.CommentAs("acme", name, pr.Number, "ops", "MEMBER", "/driftfix recheck")
					commands++
				}
				switch x := rng.Float64(); {
				case x < 0.05:
					if err := w.gh.Merge("acme", name, pr.Number); err != nil {
						t.Fatal(err)
					}
					merged++
					done[name], stuck[name] = true, false
					w.setApp(name, name, false, now) // Argo CD syncs the merge
				case x < 0.08:
					if err := w.gh.CloseUnmerged("acme", name, pr.Number); err != nil {
						t.Fatal(err)
					}
					rejected[name] = true
				}
			}
		}
		// Faults.
		argoDown := false
		switch x := rng.Float64(); {
		case x < 0.15:
			w.gh.FailNext(502)
			faults.gh5xx++
		case x < 0.22:
			w.gh.FailNext(403)
			faults.secondary++
		case x < 0.30:
			w.slack.RateLimit(1)
			faults.slack429++
		case x < 0.36:
			w.argo.Delay(time.Second) // past the client's 500ms timeout
			argoDown = true
			faults.argoTimeouts++
		}
		// A restart every third cycle (a long-lived process in between,
		// whose conditional GETs are answered 304); the database is lost
		// on every 25th.
		if c%3 == 0 || c%25 == 24 {
			if r != nil {
				closeDB()
			}
			if c%25 == 24 {
				w.loseDatabase()
				faults.lostDB++
			}
			r, closeDB = w.runner()
			restarts++
		}
		before := w.allPRs()
		out, err := r.Once(context.Background(), now)
		w.argo.Delay(0)
		if err != nil {
			t.Fatalf("cycle %d: %v", c, err)
		}
		opened += len(out.Published.Opened)
		closed += len(out.Published.Closed)
		rejectedN += len(out.Published.Rejected)
		now = now.Add(15 * time.Minute)
		if argoDown {
			if len(out.Result.FailedInstances) != 1 {
				t.Fatalf("cycle %d: the Argo CD timeout went unnoticed", c)
			}
			if after := w.allPRs(); after != before {
				t.Fatalf("cycle %d: PRs changed while Argo CD was unreachable:\n%s\n→\n%s", c, before, after)
			}
			continue
		}
		if len(out.Published.Errors) > 0 || len(out.Result.Errors) > 0 {
			t.Fatalf("cycle %d: errors %v %v", c, out.Result.Errors, out.Published.Errors)
		}
		diagnosed := map[string]bool{}
		for _, s := range out.Result.Stuck {
			for _, f := range s.Findings {
				if f.Cause == drift.CauseHPAReplicas {
					diagnosed[s.App.Name] = true
				}
			}
		}
		checkSoakPRs(t, w, c, apps, stuck, rejected, diagnosed, out.Published.Skipped)
	}
	total, dashboards, comments, checks := soakRepos(t, w, apps)
	if total != opened {
		t.Errorf("%d PRs exist but %d were reported opened", total, opened)
	}
	if w.gh.RepeatedReactions != 0 {
		t.Errorf("%d commands were acknowledged (acted on) more than once", w.gh.RepeatedReactions)
	}
	t.Logf("soak: %d comments by driftfix, none twice on a PR; %d check runs, one per commit at most; %d /driftfix recheck commands, each acted on once", comments, checks, commands)
	t.Logf("soak: %d cycles, %d restarts, in %s; %d drift episodes, %d PRs opened, %d closed when the drift went, %d merged, %d turned down; faults: %d GitHub 5xx, %d secondary limits, %d Slack 429, %d Argo CD timeouts, %d lost databases; %d digests posted; %d dashboards (one per repository at most); GitHub answered %d 304s",
		cycles, restarts, time.Since(start).Round(time.Millisecond), episodes, opened, closed, merged, rejectedN,
		faults.gh5xx, faults.secondary, faults.slack429, faults.argoTimeouts, faults.lostDB, len(w.slack.Posts()), dashboards, w.gh.NotModified)
}

// checkSoakPRs checks, after cycle c, that each of the apps has at most one
// open pull request: one while it is stuck (its drift diagnosed) and its
// fix not turned down, none otherwise.
func checkSoakPRs(t *testing.T, w *world, c, apps int, stuck, rejected, diagnosed map[string]bool, skipped []string) {
	t.Helper()
	for i := 0; i < apps; i++ {
		name := fmt.Sprintf("app%d", i)
		open := w.open(name)
		switch {
		case len(open) > 1:
			t.Fatalf("cycle %d: %s has %d open PRs", c, name, len(open))
		case stuck[name] && !diagnosed[name]:
			t.Fatalf("cycle %d: %s is stuck but its drift was not diagnosed", c, name)
		case stuck[name] && !rejected[name] && len(open) != 1:
			t.Fatalf("cycle %d: stuck %s has no open PR (skipped: %v)", c, name, skipped)
		case (!stuck[name] || rejected[name]) && len(open) != 0:
			t.Fatalf("cycle %d: %s (stuck %v, rejected %v) still has PR #%d open", c, name, stuck[name], rejected[name], open[0].Number)
		}
	}
}

// soakRepos counts, over the apps' repositories at the end of the soak, the
// pull requests, Drift Dashboards, driftfix's comments and check runs, and
// checks none is repeated: one dashboard per repository and one check run
// per commit at most, no comment said twice on a pull request.
func soakRepos(t *testing.T, w *world, apps int) (total, dashboards, comments, checks int) {
	t.Helper()
	for i := 0; i < apps; i++ {
		total += len(w.gh.PullRequests("acme", fmt.Sprintf("app%d", i)))
	}
	for i := 0; i < apps; i++ {
		ds := len(w.dashboards(fmt.Sprintf("app%d", i), false))
		if ds > 1 {
			t.Errorf("app%d: %d dashboards", i, ds)
		}
		dashboards += ds
	}
	for i := 0; i < apps; i++ {
		repo := fmt.Sprintf("app%d", i)
		perCommit := map[string]int{}
		for _, c := range w.gh.CheckRuns("acme", repo, "") {
			if perCommit[c.HeadSHA]++; perCommit[c.HeadSHA] > 1 {
				t.Errorf("%s: %d driftfix/verify check runs on %s", repo, perCommit[c.HeadSHA], c.HeadSHA)
			}
			checks++
		}
		for _, p := range w.gh.PullRequests("acme", repo) {
			said := map[string]bool{}
			for _, c := range w.gh.Comments("acme", repo, p.Number) {
				if c.Author != "driftfix[bot]" {
					continue
				}
				if said[c.Body] {
					t.Errorf("%s#%d: driftfix said the same twice: %q", repo, p.Number, c.Body)
				}
				said[c.Body] = true
				comments++
			}
		}
	}
	return total, dashboards, comments, checks
}

// allPRs summarizes every PR of the world, to compare across a cycle.
func (w *world) allPRs() string {
	var lines []string
	for name := range w.repoURL {
		for _, p := range w.gh.PullRequests("acme", name) {
			lines = append(lines, fmt.Sprintf("%s#%d %s", name, p.Number, p.State))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
