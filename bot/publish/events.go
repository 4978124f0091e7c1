package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/state"
)

// The entry points a webhook event's work calls between cycles: each does,
// for one pull request, comment thread or dashboard, what a cycle does for
// all of them, with what the last cycle read. The caller holds the cycle's
// lock, so a Publisher is still used by one caller at a time.

// ErrNotWatched says an event names a repository, pull request or issue
// driftfix does not watch: its work is dropped.
var ErrNotWatched = errors.New("not watched by driftfix")

// repoOf finds the host of a repository an event names by its web URL and,
// among urls (as Argo CD's Applications name repositories), the one that is
// the same repository; "" when none is.
func (p *Publisher) repoOf(webURL string, urls []string) (GitHost, githost.Repo, string, error) {
	host, repo, err := p.hostFor(webURL)
	if err != nil {
		return nil, repo, "", fmt.Errorf("repository %s: %w", webURL, ErrNotWatched)
	}
	for _, u := range urls {
		if _, r, err := p.hostFor(u); err == nil && strings.EqualFold(r.Key(), repo.Key()) {
			return host, repo, u, nil
		}
	}
	return host, repo, "", nil
}

// PredictPR publishes driftfix/predict on one pull request's current head
// (read from the host, so an event about an older head predicts the newest
// one), as a cycle's PredictPRs does. A head checked before is left alone
// unless rerun (a re-run asked on GitHub), which publishes its check again.
func (p *Publisher) PredictPR(ctx context.Context, pr Predictor, webURL string, number int, rerun bool, now time.Time) (PredictedPRs, error) {
	var out PredictedPRs
	if p.Store == nil || len(p.Hosts) == 0 || pr == nil {
		return out, nil
	}
	if d := p.Config.Policy.DryRun; d != nil && *d {
		out.Skipped = append(out.Skipped, "every repository: the global policy is a dry run (policy.dryRun)")
		return out, nil
	}
	host, repo, url, err := p.repoOf(webURL, pr.Repositories())
	if err != nil {
		return out, err
	}
	if url == "" {
		return out, fmt.Errorf("repository %s: no application of the last cycle reads it: %w", repo, ErrNotWatched)
	}
	def, err := host.DefaultBranch(ctx, repo)
	if err != nil {
		return out, err
	}
	on, why, err := p.predictOn(ctx, host, repo, def)
	if err != nil {
		return out, err
	}
	if !on {
		out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %s", repo, why))
		return out, nil
	}
	login, err := host.Login(ctx)
	if err != nil {
		return out, err
	}
	o, err := host.GetPR(ctx, repo, number)
	if err != nil {
		return out, err
	}
	switch {
	case o.State != "open" || o.HeadSHA == "":
		out.Skipped = append(out.Skipped, fmt.Sprintf("%s: not open", ref(repo, number)))
		return out, nil
	case o.Own(repo, login) && markerRE.MatchString(o.Body):
		out.Skipped = append(out.Skipped, fmt.Sprintf("%s: driftfix's own pull request (driftfix/verify checks it)", ref(repo, number)))
		return out, nil
	}
	if _, ok, err := p.Store.PredictedFor(ctx, repo.Key(), o.HeadSHA); err != nil || (ok && !rerun) {
		return out, err
	}
	err = p.predictOne(ctx, host, repo, url, def, login, *o, pr, now, &out)
	if err != nil {
		err = fmt.Errorf("predict %s: %w", ref(repo, number), err)
	}
	return out, err
}

// FollowPR follows one of driftfix's open pull requests as a cycle does
// (merged, closed, its /driftfix commands and label), against what the last
// cycle (res) found. A pull request driftfix did not open is ErrNotWatched.
func (p *Publisher) FollowPR(ctx context.Context, res *plan.CycleResult, webURL string, number int, now time.Time) (Published, error) {
	k, err := p.knownPR(ctx, webURL, number)
	if err != nil {
		return Published{}, err
	}
	r := p.start(ctx, res, now)
	r.follow(k)
	return *r.out, errors.Join(r.out.Errors...)
}

// knownPR is the open pull request driftfix remembers at a repository's number.
func (p *Publisher) knownPR(ctx context.Context, webURL string, number int) (state.PR, error) {
	_, repo, _, err := p.repoOf(webURL, nil)
	if err != nil {
		return state.PR{}, err
	}
	known, err := p.Store.PRs(ctx, state.PROpen)
	if err != nil {
		return state.PR{}, err
	}
	for _, k := range known {
		if _, r, err := p.hostOf(k.Repo); err == nil && k.Number == number && strings.EqualFold(r.Key(), repo.Key()) {
			k.Repo = r.Key()
			return k, nil
		}
	}
	return state.PR{}, fmt.Errorf("%s: no open pull request of driftfix: %w", ref(repo, number), ErrNotWatched)
}

// DashboardTicks acts on the ticked boxes of one repository's Drift
// Dashboard as a cycle does, against what the last cycle (res) found; the
// next cycle writes the dashboard again and honours what the boxes asked
// (Pending says whether there is such a request).
func (p *Publisher) DashboardTicks(ctx context.Context, res *plan.CycleResult, webURL string, now time.Time) (Published, error) {
	_, repo, _, err := p.repoOf(webURL, nil)
	if err != nil {
		return Published{}, err
	}
	r := p.start(ctx, res, now)
	r.eventRepo = repo.Key()
	r.dashboards()
	return *r.out, errors.Join(r.out.Errors...)
}

// RecheckHead asks the next cycle to publish driftfix/verify again on the
// fix pull request of a repository whose head is sha (a re-run asked on
// GitHub); ErrNotWatched when no open pull request of driftfix has it.
func (p *Publisher) RecheckHead(ctx context.Context, webURL, sha string, now time.Time) error {
	host, repo, _, err := p.repoOf(webURL, nil)
	if err != nil {
		return err
	}
	known, err := p.Store.PRs(ctx, state.PROpen)
	if err != nil {
		return err
	}
	for _, k := range known {
		if _, r, err := p.hostOf(k.Repo); err != nil || !strings.EqualFold(r.Key(), repo.Key()) {
			continue
		}
		o, err := host.GetPR(ctx, repo, k.Number)
		if err != nil {
			return err
		}
		if strings.EqualFold(o.HeadSHA, sha) {
			return p.Store.Request(ctx, k.Fingerprint, state.ActionRecheck, now)
		}
	}
	return fmt.Errorf("%s@%s: no open pull request of driftfix has this head: %w", repo, short(sha), ErrNotWatched)
}

// Pending reports whether people asked for something only a cycle does
// (a recheck, opening a fix now, diagnosing an application now).
func (p *Publisher) Pending(ctx context.Context) (bool, error) {
	if p.Store == nil {
		return false, nil
	}
	for _, a := range []string{state.ActionRecheck, state.ActionOpenNow, state.ActionRunNow} {
		asked, err := p.Store.Requests(ctx, a)
		if err != nil || len(asked) > 0 {
			return len(asked) > 0, err
		}
	}
	return false, nil
}
