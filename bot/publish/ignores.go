package publish

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/templates"
)

// IgnoreSectionEvery is how often the digest's section of flagged ignore
// rules is posted, per instance.
const IgnoreSectionEvery = 7 * 24 * time.Hour

// ignoreMarkerRE reads the marker an ignore-rule PR's body ends with.
var ignoreMarkerRE = regexp.MustCompile(`<!-- driftfix:ignores=([0-9a-f]+) -->`)

// RuleIdle returns, for CycleOptions.RuleIdle, the state store's record of
// since when each ignore rule has hidden nothing. A failed read or write
// says the rule hides something, so no removal is proposed from it.
func (p *Publisher) RuleIdle(ctx context.Context, now time.Time) func(instance, rule string, idle bool) time.Time {
	return func(instance, rule string, idle bool) time.Time {
		var since time.Time
		var err error
		if idle {
			since, err = p.Store.RuleIdle(ctx, rule, instance, now)
		} else {
			err = p.Store.RuleBusy(ctx, rule)
		}
		if err != nil {
			if p.Log != nil {
				p.Log.Warn("ignore rules: remember whether a rule hid nothing", "instance", instance, "error", err.Error())
			}
			return time.Time{}
		}
		return since
	}
}

// ignoreRules publishes the ignore-rule pull requests (one per file that
// declares stale or broad rules), closes driftfix's open ones no longer
// needed, forgets the rules no longer declared, and puts the flagged rules
// in the digest once a week. Like platform PRs, they are found on the host
// by their branch every cycle, never from the state store.
func (r *run) ignoreRules() {
	r.ignoreHold = map[string]string{}
	for _, inv := range r.res.Ignores {
		if slices.Contains(r.res.FailedInstances, inv.Instance) || !inv.Complete {
			continue
		}
		if err := r.Store.ForgetRulesBefore(r.ctx, inv.Instance, r.now); err != nil {
			r.fail(err)
		}
	}
	urls := map[string]string{} // PR URL by rule identity
	if len(r.Hosts) == 0 {
		for _, pr := range r.res.IgnorePRs {
			r.out.Skipped = append(r.out.Skipped, pr.Branch+": no Git host credentials configured")
		}
	} else {
		for _, repo := range r.ignoreRepos() {
			if r.ctx.Err() != nil || r.limited {
				break
			}
			ctx, cancel := r.perPR()
			err := (&ignoreRun{run: r, ctx: ctx, url: repo, urls: urls}).publish()
			cancel()
			if err != nil {
				r.fail(fmt.Errorf("ignore rules in %s: %w", repo, err))
				r.rateLimited(err)
			}
		}
	}
	for i := range r.res.Ignores {
		for j := range r.res.Ignores[i].Lines {
			l := &r.res.Ignores[i].Lines[j]
			l.PR = urls[l.Rule]
		}
	}
	r.ignoreDigest()
}

// ignoreRepos are the repositories that may hold an ignore-rule pull
// request: those this cycle proposes one to, and those where the state
// store remembers one open (a lost database forgets them until a cycle
// proposes to them again).
func (r *run) ignoreRepos() []string {
	var out []string
	for _, pr := range r.res.IgnorePRs {
		out = append(out, pr.RepoURL)
	}
	known, err := r.Store.IgnorePRRepos(r.ctx)
	if err != nil {
		r.fail(err)
	}
	out = append(out, known...)
	slices.Sort(out)
	return slices.Compact(out)
}

// ignoreDigest puts each instance's flagged rules in the digest of the
// global channel, at most once every IgnoreSectionEvery.
func (r *run) ignoreDigest() {
	ch := r.Config.Slack.Channel
	if ch == "" || r.Store == nil {
		return
	}
	for _, inv := range r.res.Ignores {
		if len(inv.Lines) == 0 || slices.Contains(r.res.FailedInstances, inv.Instance) {
			continue
		}
		section := "ignores/" + inv.Instance
		at, ok, err := r.Store.SectionPosted(r.ctx, section)
		if err != nil {
			r.fail(err)
			continue
		}
		if ok && r.now.Sub(at) < IgnoreSectionEvery {
			continue
		}
		r.digests.forChannel(ch, inv.Instance).Ignores = inv.Lines
		if err := r.Store.SetSectionPosted(r.ctx, section, r.now); err != nil {
			r.fail(err)
		}
	}
}

// ignoreLinesFor are the flagged rules that apply to any of the given
// applications (by AppKey), for the Drift Dashboard.
func (r *run) ignoreLinesFor(apps map[string]bool) []templates.IgnoreLine {
	var out []templates.IgnoreLine
	for _, inv := range r.res.Ignores {
		for _, l := range inv.Lines {
			for _, a := range l.Apps {
				ns, name, _ := strings.Cut(a, "/")
				if apps[cycle.AppKey(inv.Instance, ns, name)] {
					out = append(out, l)
					break
				}
			}
		}
	}
	return out
}

// ignoreRun publishes the ignore-rule pull requests of one repository.
type ignoreRun struct {
	*run
	ctx   context.Context
	url   string
	host  GitHost
	repo  githost.Repo
	login string
	urls  map[string]string
}

func (p *ignoreRun) publish() error {
	var err error
	if p.host, p.repo, err = p.hostFor(p.url); err != nil {
		return err
	}
	if p.login, err = p.host.Login(p.ctx); err != nil {
		return err
	}
	var errs []error
	for _, pr := range p.res.IgnorePRs {
		if pr.RepoURL == p.url {
			errs = append(errs, p.propose(pr))
		}
	}
	open := false // an ignore-rule PR of driftfix's stays open here
	for _, inv := range p.res.Ignores {
		if !inv.Complete || slices.Contains(p.res.FailedInstances, inv.Instance) {
			open = true // what the rules hide is not known: nothing is closed
			continue
		}
		prefix := cycle.IgnoreBranch(p.Config.Policy.BranchPrefix, inv.Instance, "")
		prefix = prefix[:strings.LastIndex(prefix, "/")+1]
		prs, err := p.host.OpenPRs(p.ctx, p.repo, prefix)
		if err != nil {
			open = true
			errs = append(errs, err)
			continue
		}
		for _, gpr := range prs {
			m := lastMarker(ignoreMarkerRE, gpr.Body)
			if m == nil || !gpr.Own(p.repo, p.login) {
				continue
			}
			if slices.Contains(inv.Keys, m[1]) {
				open = true
				continue
			}
			msg := "Closing: the ignore rules this change removes or narrows hide something again, or are no longer declared, in instance " + inv.Instance + ".\n\n" + closedMarker
			if err := p.host.ClosePR(p.ctx, p.repo, gpr.Number, gpr.Branch, msg); err != nil {
				errs = append(errs, err)
				continue
			}
			p.out.Closed = append(p.out.Closed, ref(p.repo, gpr.Number))
		}
	}
	errs = append(errs, p.Store.SetIgnorePRRepo(p.ctx, p.url, open, p.now))
	return errors.Join(errs...)
}

func (p *ignoreRun) skip(pr cycle.IgnorePR, why string) {
	p.out.Skipped = append(p.out.Skipped, pr.Branch+": "+why)
}

// found notes an open ignore-rule pull request: the flagged rules' lines
// name it, and an application's own narrow-ignore fix of a rule it changes
// is held back.
func (p *ignoreRun) found(pr cycle.IgnorePR, url string, number int) {
	for _, id := range pr.Rules {
		p.urls[id] = url
	}
	for _, fix := range p.res.PRs {
		if fix.Plan.Kind != drift.FixNarrowIgnore {
			continue
		}
		for _, f := range fix.Plan.Findings {
			if slices.Contains(pr.Holds, cycle.RuleAt(f.Resource, f.Path)) {
				p.ignoreHold[fix.Key] = ref(p.repo, number)
			}
		}
	}
}

// ignoreHeld says why a per-application fix is not published: an
// ignore-rule pull request changes its rule.
func (r *run) ignoreHeld(fixKey string) string {
	if ref, ok := r.ignoreHold[fixKey]; ok {
		return "held back: the ignore-rule pull request " + ref + " changes this rule"
	}
	return ""
}

// propose opens or updates one ignore-rule pull request, unless policy or
// a person says not to.
func (p *ignoreRun) propose(pr cycle.IgnorePR) error {
	pol := pr.Policy
	ex, err := p.host.FindPR(p.ctx, p.repo, pr.Branch)
	if err != nil {
		return err
	}
	switch {
	case ex != nil && !ex.Own(p.repo, p.login):
		p.skip(pr, fmt.Sprintf("%s from this branch was opened by %s, not by driftfix's account %s; left alone", ref(p.repo, ex.Number), ex.Author, p.login))
		return nil
	case ex != nil && ex.Merged:
		p.skip(pr, "merged in "+ref(p.repo, ex.Number)+"; waiting for Argo CD to read it")
		return nil
	case ex != nil && ex.State == "closed":
		comments, err := p.host.Comments(p.ctx, p.repo, ex.Number)
		if err != nil {
			return err
		}
		last := len(comments) - 1
		if last < 0 || !strings.EqualFold(comments[last].Author, p.login) || !strings.Contains(comments[last].Body, closedMarker) {
			p.skip(pr, "a person closed "+ref(p.repo, ex.Number)+" unmerged; not proposed again")
			return nil
		}
		ex = nil // driftfix closed it when it was no longer needed; it is needed again
	}
	switch {
	case ex == nil && (p.Config.DryRun || (pol.DryRun != nil && *pol.DryRun)):
		p.skip(pr, "dry run by policy")
		return nil
	case ex == nil && pol.Quiet(p.now):
		p.skip(pr, "quiet hours")
		return nil
	}
	base := pr.Base
	if base == "" || base == "HEAD" {
		if base, err = p.host.DefaultBranch(p.ctx, p.repo); err != nil {
			return err
		}
	}
	files := map[string]githost.Change{pr.File: {Synced: pr.Before, Content: pr.After}}
	msg := pr.Title + "\n\nPlanned and verified by driftfix for instance " + pr.Instance + ".\n\ndriftfix-ignores: " + pr.Key
	if ex != nil {
		return p.update(pr, ex, base, msg, files)
	}
	_, created, err := p.host.Push(p.ctx, p.repo, base, pr.Branch, msg, files)
	if why := pushRefused(err, base, p.repo); why != "" {
		p.skip(pr, why)
		return nil
	}
	if err != nil {
		return err
	}
	gpr, err := p.host.OpenPR(p.ctx, p.repo, githost.NewPullRequest{Branch: pr.Branch, Base: base, Title: pr.Title, Body: pr.Body,
		Draft: pol.Draft != nil && *pol.Draft, Labels: pol.Labels, Reviewers: pol.Reviewers, Assignees: pol.Assignees})
	if errors.Is(err, githost.ErrRace) {
		p.skip(pr, "another driftfix opened this pull request first")
		return nil
	}
	if err != nil {
		if created {
			err = errors.Join(err, p.host.DeleteBranch(p.ctx, p.repo, pr.Branch))
		}
		return err
	}
	p.out.Opened = append(p.out.Opened, ref(p.repo, gpr.Number))
	p.found(pr, gpr.URL, gpr.Number)
	p.log.Info("ignore rules pull request opened", "repo", p.repo.String(), "number", gpr.Number, "file", pr.File, "rules", len(pr.Rules))
	return nil
}

// update brings an open ignore-rule pull request to the current change.
func (p *ignoreRun) update(pr cycle.IgnorePR, ex *githost.PullRequest, base, msg string, files map[string]githost.Change) error {
	p.found(pr, ex.URL, ex.Number)
	unchanged := ex.Title == pr.Title
	if m := lastMarker(bodyFingerprint, strings.TrimSuffix(ex.Body, cycle.IgnoreMarker(pr.Key))); m == nil || m[1] != pr.Fingerprint {
		unchanged = false
	}
	if unchanged {
		p.out.Unchanged = append(p.out.Unchanged, ref(p.repo, ex.Number))
		return nil
	}
	_, _, err := p.host.Push(p.ctx, p.repo, base, pr.Branch, msg, files)
	if errors.Is(err, githost.ErrNotOurs) || errors.Is(err, githost.ErrFileChanged) {
		p.skip(pr, fmt.Sprintf("%s not updated: %v", ref(p.repo, ex.Number), err))
		return nil
	}
	if err != nil {
		return err
	}
	if err := p.host.EditPR(p.ctx, p.repo, ex.Number, pr.Title, pr.Body); err != nil {
		return err
	}
	p.out.Updated = append(p.out.Updated, ref(p.repo, ex.Number))
	return nil
}
