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
	"github.com/driftfix/driftfix/templates"
)

// ignoreStore keeps what the ignore-rule inventory and its pull requests
// need across cycles.
type ignoreStore interface {
	// SectionPosted is when a weekly digest section was last posted.
	SectionPosted(ctx context.Context, section string) (time.Time, bool, error)
	// SetSectionPosted remembers when a weekly section was posted.
	SetSectionPosted(ctx context.Context, section string, at time.Time) error
	// IgnorePRRepos are the repositories with an open ignore-rule pull request.
	IgnorePRRepos(ctx context.Context) ([]string, error)
	// SetIgnorePRRepo remembers whether a repository has one open.
	SetIgnorePRRepo(ctx context.Context, repo string, open bool, now time.Time) error
	// RuleIdle records that an ignore rule hid nothing this cycle and returns since when it has hidden nothing.
	RuleIdle(ctx context.Context, rule, instance string, now time.Time) (time.Time, error)
	// RuleBusy marks an ignore rule as hiding something.
	RuleBusy(ctx context.Context, rule string) error
	// ForgetRulesBefore forgets the rules of an instance not seen since a time.
	ForgetRulesBefore(ctx context.Context, instance string, before time.Time) error
}

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
			err := (&ignoreRun{fileRun: fileRun{run: r, ctx: ctx}, url: repo, urls: urls}).publish()
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
	fileRun
	url  string
	urls map[string]string
}

func (p *ignoreRun) publish() error {
	if err := p.connect(p.url); err != nil {
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
			errs = append(errs, p.close(gpr, "the ignore rules this change removes or narrows hide something again, or are no longer declared, in instance "+inv.Instance+"."))
		}
	}
	errs = append(errs, p.Store.SetIgnorePRRepo(p.ctx, p.url, open, p.now))
	return errors.Join(errs...)
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
	c := fileChange{Branch: pr.Branch, Base: pr.Base, Title: pr.Title, Body: pr.Body, Policy: pr.Policy,
		File: pr.File, Before: pr.Before, After: pr.After, Marker: cycle.IgnoreMarker(pr.Key), Fingerprint: pr.Fingerprint,
		Message: pr.Title + "\n\nPlanned and verified by driftfix for instance " + pr.Instance + ".\n\ndriftfix-ignores: " + pr.Key,
		What:    "pull request", Waits: "waiting for Argo CD to read it", Dropped: "not proposed again"}
	return p.fileRun.propose(c, func(number int, url string, merged bool) {
		if !merged {
			p.found(pr, url, number)
		}
	})
}
