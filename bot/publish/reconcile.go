package publish

import (
	"context"
	"fmt"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// followUp looks at the pull requests opened before: merged, closed by a
// person, asked to stop, or no longer needed; and merged fixes whose
// application is Synced again.
func (r *run) followUp() {
	known, err := r.Store.PRs(r.ctx, state.PROpen, state.PRMerged)
	if err != nil {
		r.fail(err)
	}
	for i := range known {
		if _, repo, err := r.hostOf(known[i].Repo); err == nil {
			known[i].Repo = repo.Key() // records written before hosts were named
		}
	}
	// A database is fresh or stale only at start (a new pod, a new leader),
	// so the open PRs are looked up on the hosts once, after a cycle that
	// reached every instance; later cycles know what they opened.
	if len(r.Hosts) > 0 && !r.adopted {
		adopted, err := r.adopt(known)
		if err != nil {
			r.fail(err)
			r.rateLimited(err)
		}
		r.adopted = err == nil && len(r.res.FailedInstances) == 0
		known = append(known, adopted...)
	}
	r.mayClose = r.unlisted(known)
	for _, k := range known {
		if r.ctx.Err() != nil {
			break
		}
		r.follow(k)
	}
}

// follow looks at one remembered pull request.
func (r *run) follow(k state.PR) {
	if k.State == state.PROpen {
		if !r.reconcileOpen(k) {
			r.open.open++
			r.open.perRepo[k.Repo]++
			return
		}
		if cur, ok, err := r.Store.PRFor(r.ctx, k.Fingerprint); err == nil && ok {
			k = cur
		}
	}
	if k.State == state.PRMerged {
		r.afterMerge(k)
	}
}

// reconcileOpen reconciles an open pull request on its host and reports
// whether it is done (no longer open).
func (r *run) reconcileOpen(k state.PR) bool {
	if len(r.Hosts) == 0 || r.limited {
		return false
	}
	host, repo, err := r.hostOf(k.Repo)
	if err != nil {
		r.fail(err)
		return false
	}
	ctx, cancel := r.perPR()
	defer cancel()
	f := &followed{run: r, ctx: ctx, host: host, repo: repo, k: k}
	done, err := f.reconcile()
	if err != nil {
		r.fail(err)
	}
	if err == nil && !done && f.pr != nil && f.pr.State == "open" {
		r.polled[repo.Key()+" "+k.Branch] = f.pr
	}
	return done
}

// followHost is what following up an open pull request needs: reading
// and closing it, and the comments and labels people steer it with.
type followHost interface {
	PullHost
	SteerHost
}

// followed is one open pull request being reconciled, in its own context.
type followed struct {
	*run
	ctx  context.Context
	host followHost
	repo githost.Repo
	k    state.PR
	pr   *githost.PullRequest
}

// reconcile looks at the pull request: merged, closed by a person (never
// proposed again), asked to stop by label or comment, or no longer needed
// (closed with a comment). It reports whether the PR is done.
func (c *followed) reconcile() (bool, error) {
	var err error
	if c.pr, err = c.host.GetPR(c.ctx, c.repo, c.k.Number); err != nil {
		return false, err
	}
	login, err := c.host.Login(c.ctx)
	if err != nil {
		return false, err
	}
	if !c.pr.Own(c.repo, login) {
		c.out.Skipped = append(c.out.Skipped, fmt.Sprintf("%s: opened by %s from %s, not by driftfix's account %s from %s; forgotten and left alone", c.ref(), c.pr.Author, c.pr.HeadRepo, login, c.repo))
		return true, c.save(state.PRClosed)
	}
	switch {
	case c.pr.Merged:
		c.k.MergeSHA = c.pr.MergeCommitSHA
		c.report("merged", "")
		c.out.Merged = append(c.out.Merged, c.ref())
		return true, c.save(state.PRMerged)
	case c.pr.State == "closed":
		if err := c.Store.Reject(c.ctx, c.k.Fingerprint, c.k.App, "pull request "+c.ref()+" was closed unmerged", c.now); err != nil {
			return false, err
		}
		c.report("closed", " (closed by a person; not proposed again)")
		c.out.Rejected = append(c.out.Rejected, c.ref())
		return true, c.save(state.PRClosed)
	}
	if done, err := c.steer(); err != nil || done {
		return done, err
	}
	return c.closeIfUnneeded()
}

func (c *followed) ref() string { return ref(c.repo, c.k.Number) }

func (c *followed) save(st string) error {
	c.k.State, c.k.Updated = st, c.now
	return c.Store.SavePR(c.ctx, c.k)
}

// report puts the pull request's news in its application's digest.
func (c *followed) report(kind, note string) {
	id := cycle.ParseAppKey(c.k.App)
	c.digests.prLine(c.k.App, kind, templates.PRLine{App: id.Name, Namespace: id.Namespace, Instance: id.Instance, Title: c.pr.Title + note, URL: c.pr.URL, Key: c.k.Fingerprint})
}

// closeIfUnneeded closes the pull request when its drift is gone: the
// application is Synced, no longer needs this fix, or is no longer listed
// (for long enough). Nothing is concluded about an application this cycle
// did not diagnose.
func (c *followed) closeIfUnneeded() (bool, error) {
	a, listed := c.apps[c.k.App]
	if !c.res.Owns(c.k.App) || (listed && a.Failed) {
		return false, nil // nothing known about its drift this cycle
	}
	why, note, after := "", " (drift gone)", " driftfix opens a new pull request if the drift comes back."
	switch {
	case !listed && !c.mayClose[c.k.App]:
		return false, nil // not missing long enough, or the whole list shrank
	case !listed:
		why = "The application is no longer listed by Argo CD."
	case !a.Stuck:
		why = fmt.Sprintf("The application is %s without this change.", a.App.SyncStatus)
	case c.proposed[c.k.Fingerprint].Key != "":
		return false, nil
	case c.res.NotProposed[c.k.Fingerprint] != "":
		// The differences are still there; this change is no longer the
		// fix driftfix stands behind.
		why = "driftfix no longer proposes this change for differences it still finds: " + templates.Code(c.res.NotProposed[c.k.Fingerprint]) + "."
		note, after = " (no longer proposed)", " driftfix opens a new pull request once it has a fix it stands behind."
	default:
		why = "The differences this pull request fixes are gone."
	}
	if err := c.host.ClosePR(c.ctx, c.repo, c.k.Number, c.k.Branch, "Closing: "+why+after+"\n\n"+closedMarker); err != nil {
		return false, err
	}
	c.report("closed", note)
	c.out.Closed = append(c.out.Closed, c.ref())
	return true, c.save(state.PRClosed)
}
