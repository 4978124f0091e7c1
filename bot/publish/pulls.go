package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// prStore is what publishing a fix pull request remembers: the pull
// request of each fix, the fixes people turned down or held back, and how
// often a fix was proposed (its cooldown).
type prStore interface {
	// SavePR records or updates the pull request of a fix.
	SavePR(ctx context.Context, pr state.PR) error
	// PRs are the pull requests in the given states, oldest first.
	PRs(ctx context.Context, states ...string) ([]state.PR, error)
	// PRFor is the pull request of a fix, if one was recorded.
	PRFor(ctx context.Context, fingerprint string) (state.PR, bool, error)
	// Reject remembers that a person turned a fix down.
	Reject(ctx context.Context, fingerprint, app, reason string, now time.Time) error
	// Rejected reports whether a person turned a fix down, and why.
	Rejected(ctx context.Context, fingerprint string) (string, bool, error)
	// Seen counts a cycle that proposed a fix and returns its sightings.
	Seen(ctx context.Context, fingerprint string, now time.Time) (state.Sighting, error)
	// Snooze holds a fix back until a time, with why.
	Snooze(ctx context.Context, fingerprint string, until time.Time, reason string) error
	// Snoozed reports whether a fix is held back at now, until when and why.
	Snoozed(ctx context.Context, fingerprint string, now time.Time) (time.Time, string, bool, error)
}

// proposeAll publishes this cycle's proposals, each in its own context.
func (r *run) proposeAll() {
	for _, pr := range r.res.PRs {
		switch {
		case r.ctx.Err() != nil:
			r.out.Skipped = append(r.out.Skipped, pr.Branch+": the cycle was stopped before it was published")
			continue
		case r.limited:
			r.out.Skipped = append(r.out.Skipped, pr.Branch+": the Git host's rate limit is used up; left for the next cycle")
			continue
		case r.platformHeld(pr.Key) != "":
			r.out.Skipped = append(r.out.Skipped, pr.Branch+": "+r.platformHeld(pr.Key))
			continue
		case r.ignoreHeld(pr.Key) != "":
			r.out.Skipped = append(r.out.Skipped, pr.Branch+": "+r.ignoreHeld(pr.Key))
			continue
		}
		ctx, cancel := r.perPR()
		err := (&proposal{run: r, ctx: ctx, pr: pr}).publish()
		cancel()
		if err != nil {
			r.fail(fmt.Errorf("application %s/%s: %w", pr.Namespace, pr.App, err))
			r.rateLimited(err)
		}
	}
}

// proposeHost is what publishing a fix pull request needs: its branch, the
// pull request, its cooldown check and its comments.
type proposeHost interface {
	BranchHost
	PullHost
	CheckHost
	SteerHost
}

// proposal is one proposed pull request being published, in its own context.
type proposal struct {
	*run
	ctx      context.Context
	pr       cycle.ProposedPR
	host     proposeHost
	repo     githost.Repo
	base     string
	existing *githost.PullRequest
	rec      state.PR
	// msg is the commit message, in the repository's style and signed off
	// when its policy asks (repopolicy.go).
	msg string
}

func (p *proposal) skip(why string) { p.out.Skipped = append(p.out.Skipped, p.pr.Branch+": "+why) }

// publish publishes the proposal: skipped when a person turned it down,
// when the policy says dry-run or quiet hours, or past a PR limit; an
// existing PR is updated when the fix changed; otherwise the branch is
// pushed and the PR opened.
func (p *proposal) publish() error {
	if why, err := p.held(); err != nil || why != "" {
		if why != "" {
			p.skip(why)
		}
		return err
	}
	if err := p.locate(); err != nil {
		return err
	}
	t, err := p.terms(p.ctx, p.host, p.repo, p.pr.Policy, true, p.pr.Title, p.message())
	if err != nil || t.held != "" {
		if t.held != "" {
			p.skip(t.held)
		}
		return err
	}
	p.pr.Title, p.msg, p.pr.Policy.Labels, p.pr.Policy.Reviewers = t.title, t.message, t.labels, t.reviewers
	if p.existing != nil {
		done, err := p.settled()
		if err != nil || done {
			return err
		}
	}
	if p.existing != nil {
		return p.update()
	}
	return p.openNew()
}

// held says why the proposal is not published at all this cycle.
func (p *proposal) held() (string, error) {
	pol := p.pr.Policy
	if why, ok, err := p.Store.Rejected(p.ctx, p.pr.Key); err != nil || ok {
		if ok {
			return "turned down before (" + why + ")", err
		}
		return "", err
	}
	if until, why, on, err := p.Store.Snoozed(p.ctx, p.pr.Key, p.now); err != nil || on {
		if on {
			return fmt.Sprintf("%s, until %s", why, until.UTC().Format(time.RFC3339)), err
		}
		return "", err
	}
	if why, err := p.appSnoozed(); err != nil || why != "" {
		return why, err
	}
	// every cycle that proposes the fix counts towards its cooldown, quiet hours and dry runs too
	seen, err := p.Store.Seen(p.ctx, p.pr.Key, p.now)
	if err != nil {
		return "", err
	}
	switch {
	case p.Config.DryRun || (pol.DryRun != nil && *pol.DryRun):
		return "dry run by policy", nil
	case pol.Quiet(p.now):
		return "quiet hours", nil
	case len(p.Hosts) == 0:
		return "no Git host credentials configured", nil
	}
	return p.coolingDown(seen)
}

// locate finds the repository's host, the proposal's pull request if one
// exists, and the base branch.
func (p *proposal) locate() error {
	var err error
	if p.host, p.repo, err = p.hostFor(p.pr.RepoURL); err != nil {
		return err
	}
	if polled, ok := p.polled[p.repo.Key()+" "+p.pr.Branch]; ok {
		cp := *polled // read moments ago by followUp, still open
		p.existing = &cp
	} else if p.existing, err = p.host.FindPR(p.ctx, p.repo, p.pr.Branch); err != nil {
		return err
	}
	p.base = p.pr.Base
	if p.base == "" || p.base == "HEAD" {
		if p.base, err = p.host.DefaultBranch(p.ctx, p.repo); err != nil {
			return err
		}
	}
	p.rec = state.PR{Fingerprint: p.pr.Key, App: cycle.AppKey(p.pr.Instance, p.pr.Namespace, p.pr.App), Repo: p.repo.Key(), Branch: p.pr.Branch, State: state.PROpen, Updated: p.now}
	return nil
}

// settled handles a pull request from the fix's branch that is not
// driftfix's, merged, or closed; it reports whether nothing more is to do.
// A PR driftfix closed when the drift went (its own last comment says so) is
// forgotten: the drift is back.
func (p *proposal) settled() (bool, error) {
	login, err := p.host.Login(p.ctx)
	if err != nil {
		return true, err
	}
	ex := p.existing
	switch {
	case !ex.Own(p.repo, login):
		p.skip(fmt.Sprintf("%s from this branch was opened by %s, not by driftfix's account %s; left alone", ref(p.repo, ex.Number), ex.Author, login))
		return true, nil
	case ex.Merged:
		p.rec.Number, p.rec.State, p.rec.MergeSHA = ex.Number, state.PRMerged, ex.MergeCommitSHA
		if old, ok, _ := p.Store.PRFor(p.ctx, p.pr.Key); ok && (old.State == state.PRFixed || old.State == state.PRStillDrifts) {
			what := "which Argo CD synced without ending this drift"
			if old.State == state.PRFixed {
				what = "which Argo CD synced and the application was Synced, but the drift came back"
			}
			p.skip(fmt.Sprintf("merged in %s, %s; the same fix is not proposed again", ref(p.repo, ex.Number), what))
			return true, nil
		}
		p.skip(fmt.Sprintf("merged in %s; waiting for Argo CD to sync it", ref(p.repo, ex.Number)))
		return true, p.Store.SavePR(p.ctx, p.rec)
	case ex.State != "closed":
		return false, nil
	}
	comments, err := p.host.Comments(p.ctx, p.repo, ex.Number)
	if err != nil {
		return true, err
	}
	if last := len(comments) - 1; last >= 0 && strings.EqualFold(comments[last].Author, login) && strings.Contains(comments[last].Body, closedMarker) {
		// driftfix closed it: for good when a person asked it to stop, until
		// a snooze ends, or because the drift went (and is now back). The
		// state database may have lost what was asked: GitHub still says.
		body := comments[last].Body
		if strings.Contains(body, stoppedMarker) {
			if again, err := p.proposeAgain(ex.Number); err != nil || again {
				p.existing = nil
				return err != nil, err
			}
			if err := p.Store.Reject(p.ctx, p.pr.Key, p.rec.App, "asked to stop on "+ref(p.repo, ex.Number), p.now); err != nil {
				return true, err
			}
			p.skip("asked to stop on " + ref(p.repo, ex.Number) + "; not proposed again")
			return true, nil
		}
		if until, ok := snoozedUntil(body); ok && until.After(p.now) {
			if err := p.Store.Snooze(p.ctx, p.pr.Key, until, "snoozed on "+ref(p.repo, ex.Number)); err != nil {
				return true, err
			}
			p.skip(fmt.Sprintf("snoozed on %s, until %s", ref(p.repo, ex.Number), until.Format(time.RFC3339)))
			return true, nil
		}
		p.existing = nil
		return false, nil
	}
	if again, err := p.proposeAgain(ex.Number); err != nil || again {
		p.existing = nil
		return err != nil, err
	}
	if err := p.Store.Reject(p.ctx, p.pr.Key, p.rec.App, "pull request "+ref(p.repo, ex.Number)+" was closed unmerged", p.now); err != nil {
		return true, err
	}
	p.skip("a person closed " + ref(p.repo, ex.Number) + " unmerged; not proposed again")
	return true, nil
}

// files are the proposal's changes, each with the content it was planned on.
func (p *proposal) files() map[string]githost.Change {
	files := map[string]githost.Change{}
	for _, e := range p.pr.Plan.Edits {
		files[e.File] = githost.Change{Synced: e.Before, Content: e.After}
	}
	return files
}

func (p *proposal) message() string {
	return p.pr.Title + "\n\nPlanned and verified by driftfix for " + p.pr.Namespace + "/" + p.pr.App + ".\n\ndriftfix-fix: " + p.pr.Key
}

func (p *proposal) line(url string) templates.PRLine {
	return templates.PRLine{App: p.pr.App, Namespace: p.pr.Namespace, Instance: p.pr.Instance, Title: p.pr.Title, URL: url, Key: p.pr.Key}
}

// update brings driftfix's open pull request to the current fix: its
// branch (never over a person's commits or a changed file) and, when the
// fix changed, its title and body.
func (p *proposal) update() error {
	ex := p.existing
	p.rec.Number = ex.Number
	unchanged := ex.Title == p.pr.Title
	if m := lastMarker(bodyFingerprint, ex.Body); m == nil || m[1] != p.pr.Fingerprint {
		unchanged = false
	}
	pushed, _, err := p.host.Push(p.ctx, p.repo, p.base, p.pr.Branch, p.msg, p.files())
	switch {
	case errors.Is(err, githost.ErrNotOurs) || errors.Is(err, githost.ErrFileChanged):
		if !unchanged {
			if cerr := p.heldComment(err); cerr != nil {
				return cerr
			}
		}
		p.skip(fmt.Sprintf("%s not updated: %v", ref(p.repo, ex.Number), err))
		return errors.Join(p.publishCheck(ex.HeadSHA, false), p.Store.SavePR(p.ctx, p.rec))
	case err != nil:
		return err
	case unchanged && !pushed:
		p.out.Unchanged = append(p.out.Unchanged, ref(p.repo, ex.Number))
		return errors.Join(p.publishCheck(ex.HeadSHA, true), p.Store.SavePR(p.ctx, p.rec))
	}
	head := ex.HeadSHA
	if pushed {
		if now, err := p.host.GetPR(p.ctx, p.repo, ex.Number); err == nil {
			head = now.HeadSHA
		}
	}
	if err := p.publishCheck(head, true); err != nil {
		return err
	}
	if unchanged {
		p.out.Unchanged = append(p.out.Unchanged, ref(p.repo, ex.Number))
		return p.Store.SavePR(p.ctx, p.rec)
	}
	if err := p.host.EditPR(p.ctx, p.repo, ex.Number, p.pr.Title, fitBody(p.pr.Body)); err != nil {
		return err
	}
	p.out.Updated = append(p.out.Updated, ref(p.repo, ex.Number))
	p.digests.prLine(p.rec.App, "updated", p.line(ex.URL))
	return p.Store.SavePR(p.ctx, p.rec)
}

// heldComment tells a pull request's readers, once per fix, why its branch
// was not updated to the changed fix: people pushed to it, or the file
// changed on the base branch since the synced revision.
func (p *proposal) heldComment(why error) error {
	marker := heldMarker(p.pr.Fingerprint)
	comments, err := p.host.Comments(p.ctx, p.repo, p.existing.Number)
	if err != nil {
		return err
	}
	login, err := p.host.Login(p.ctx)
	if err != nil {
		return err
	}
	for _, c := range comments {
		if strings.EqualFold(c.Author, login) && strings.Contains(c.Body, marker) {
			return nil
		}
	}
	msg := "The fix changed, but a file it writes changed on the base branch since the revision the fix was computed from, so driftfix does not update this branch (that would revert the change). It is planned again once Argo CD syncs the new revision."
	if errors.Is(why, githost.ErrNotOurs) {
		msg = "The fix changed, but this branch has commits from people, so driftfix does not overwrite it: update the branch by hand."
	}
	return p.host.Comment(p.ctx, p.repo, p.existing.Number, msg+"\n\n"+marker)
}

// overLimit says which of the policy's pull request limits a new PR would pass.
func (p *proposal) overLimit() string {
	pol, n := p.pr.Policy, p.open
	switch {
	case pol.PRsPerCycle > 0 && n.opened >= pol.PRsPerCycle:
		return fmt.Sprintf("the limit of %d new pull requests per cycle is reached", pol.PRsPerCycle)
	case pol.OpenPRs > 0 && n.open >= pol.OpenPRs:
		return fmt.Sprintf("the limit of %d open pull requests is reached", pol.OpenPRs)
	case pol.PRsPerRepo > 0 && n.perRepo[p.repo.Key()] >= pol.PRsPerRepo:
		return fmt.Sprintf("the limit of %d open pull requests in %s is reached", pol.PRsPerRepo, p.repo)
	}
	return ""
}

// openNew pushes the fix's branch and opens its pull request; a PR that
// cannot be opened takes its new branch with it.
func (p *proposal) openNew() error {
	if why := p.overLimit(); why != "" {
		p.skip(why)
		return nil
	}
	_, created, err := p.host.Push(p.ctx, p.repo, p.base, p.pr.Branch, p.msg, p.files())
	if why := pushRefused(err, p.base, p.repo); why != "" {
		p.skip(why)
		return nil
	}
	if err != nil {
		return err
	}
	pol := p.pr.Policy
	gpr, err := p.host.OpenPR(p.ctx, p.repo, githost.NewPullRequest{Branch: p.pr.Branch, Base: p.base, Title: p.pr.Title, Body: fitBody(p.pr.Body),
		Draft: pol.Draft != nil && *pol.Draft, Labels: pol.Labels, Reviewers: pol.Reviewers, Assignees: pol.Assignees})
	if errors.Is(err, githost.ErrRace) {
		p.skip("another driftfix opened this fix's pull request first")
		return nil
	}
	if err != nil {
		if created {
			if derr := p.host.DeleteBranch(p.ctx, p.repo, p.pr.Branch); derr != nil {
				err = errors.Join(err, derr)
			}
		}
		return err
	}
	p.open.opened++
	p.open.open++
	p.open.perRepo[p.repo.Key()]++
	p.rec.Number = gpr.Number
	p.out.Opened = append(p.out.Opened, ref(p.repo, gpr.Number))
	p.digests.prLine(p.rec.App, "opened", p.line(gpr.URL))
	if err := p.Store.SavePR(p.ctx, p.rec); err != nil {
		return err
	}
	if err := p.Store.ClearRequest(p.ctx, p.pr.Key, state.ActionOpenNow); err != nil {
		return err
	}
	if err := p.Store.ClearRequest(p.ctx, p.pr.Key, state.ActionUnreject); err != nil {
		return err
	}
	return p.publishCheck(gpr.HeadSHA, true)
}

// pushRefused says why a new fix's branch was not pushed, for the refusals
// that are not failures.
func pushRefused(err error, base string, repo githost.Repo) string {
	switch {
	case errors.Is(err, githost.ErrRace):
		return "another driftfix is publishing this fix right now"
	case errors.Is(err, githost.ErrFileChanged):
		return fmt.Sprintf("not proposed: %v; writing the fix would revert that change (it is planned again once Argo CD syncs it)", err)
	case errors.Is(err, githost.ErrNotOurs):
		return fmt.Sprintf("not proposed: %v; driftfix does not overwrite it", err)
	case errors.Is(err, githost.ErrNoBase):
		return fmt.Sprintf("targetRevision %q is not a branch of %s; driftfix proposes fixes to branches only", base, repo)
	}
	return ""
}
