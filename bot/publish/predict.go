package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
)

// predictStore remembers the predictions published on pull request heads.
type predictStore interface {
	// PredictedFor is the prediction published on a head.
	PredictedFor(ctx context.Context, repo, sha string) (state.Predicted, bool, error)
	// SavePredicted remembers a prediction published on a head.
	SavePredicted(ctx context.Context, repo, sha string, p state.Predicted) error
	// ForgetPredictedBefore forgets predictions older than a time.
	ForgetPredictedBefore(ctx context.Context, before time.Time) error
}

// DefaultPredictPerCycle is how many pull request heads one cycle predicts
// when PredictPRs is given 0; the others wait for the next cycle.
const DefaultPredictPerCycle = 20

// predictedKept is how long a checked head is remembered.
const predictedKept = 30 * 24 * time.Hour

// Predictor predicts pull requests' heads: cycle.Predictor, with what the
// cycle read.
type Predictor interface {
	// Repositories are the repositories of the applications the cycle listed.
	Repositories() []string
	// Predict predicts one pull request's head.
	Predict(ctx context.Context, h cycle.PRHead) (cycle.PRPrediction, error)
}

// predictHost is what predicting a repository's open pull requests needs:
// listing them and checking their heads.
type predictHost interface {
	PullHost
	CheckHost
}

// ReviewHost is a CheckHost that can post pull request reviews with comments
// on lines of the change (GitHub's pull request reviews). On a host that
// cannot, predictions are in the check only.
type ReviewHost interface {
	// Review posts a review of a pull request's head commit.
	Review(ctx context.Context, r githost.Repo, number int, rv githost.Review) error
	// Reviewed reports whether login posted a review on the pull request
	// at commit.
	Reviewed(ctx context.Context, r githost.Repo, number int, commit, login string) (bool, error)
}

// PredictedPRs is what predicting pull requests did in one cycle.
type PredictedPRs struct {
	// Checked are the heads that got a driftfix/predict check
	// ("owner/name#number@commit"); Reviewed those that also got a review.
	Checked, Reviewed []string
	// Skipped are repositories and pull requests not predicted, with why.
	Skipped []string
	Errors  []error
}

// PredictPRs publishes driftfix/predict on the open pull requests of the
// repositories the cycle's applications read: for each head commit not yet
// checked, a check with an annotation per predicted field (neutral when the
// change introduces none) and, where a fix is one line's edit on a line of
// the change, one review with suggestions. Pull requests driftfix opened
// are left alone, as are repositories whose own file switches predict off.
// At most perCycle heads are predicted per cycle (0: DefaultPredictPerCycle).
func (p *Publisher) PredictPRs(ctx context.Context, pr Predictor, perCycle int, now time.Time) PredictedPRs {
	var out PredictedPRs
	if p.Store == nil || len(p.Hosts) == 0 || pr == nil {
		return out
	}
	if d := p.Config.Policy.DryRun; d != nil && *d {
		out.Skipped = append(out.Skipped, "every repository: the global policy is a dry run (policy.dryRun)")
		return out
	}
	budget := perCycle
	if budget <= 0 {
		budget = DefaultPredictPerCycle
	}
	if err := p.Store.ForgetPredictedBefore(ctx, now.Add(-predictedKept)); err != nil {
		out.Errors = append(out.Errors, err)
	}
	for _, url := range pr.Repositories() {
		if ctx.Err() != nil || budget <= 0 {
			break
		}
		host, repo, err := p.hostFor(url)
		if err != nil {
			continue // not a repository of a configured host: nothing to publish to
		}
		n, limited := p.predictRepo(ctx, host, repo, url, pr, budget, now, &out)
		budget -= n
		if limited {
			break
		}
	}
	return out
}

// predictRepo predicts the open pull requests of one repository; it returns
// how many heads it predicted and whether the host's rate limit is spent.
func (p *Publisher) predictRepo(ctx context.Context, host predictHost, repo githost.Repo, url string, pr Predictor, budget int, now time.Time, out *PredictedPRs) (int, bool) {
	fail := func(err error) (int, bool) {
		out.Errors = append(out.Errors, err)
		return 0, errors.Is(err, githost.ErrRateLimited)
	}
	def, err := host.DefaultBranch(ctx, repo)
	if err != nil {
		return fail(err)
	}
	on, why, err := p.predictOn(ctx, host, repo, def)
	if err != nil {
		return fail(err)
	}
	if !on {
		out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %s", repo, why))
		return 0, false
	}
	login, err := host.Login(ctx)
	if err != nil {
		return fail(err)
	}
	prs, err := host.OpenPRs(ctx, repo, "")
	if err != nil {
		return fail(err)
	}
	done := 0
	for _, o := range prs {
		if done >= budget || ctx.Err() != nil {
			break
		}
		if o.HeadSHA == "" {
			continue
		}
		if o.Own(repo, login) && markerRE.MatchString(o.Body) {
			// driftfix's own pull request (a fix: its driftfix/verify check
			// says what it changes). In token mode the account is a person's,
			// whose other pull requests are predicted as anyone's.
			continue
		}
		if _, ok, err := p.Store.PredictedFor(ctx, repo.Key(), o.HeadSHA); err != nil || ok {
			if err != nil {
				out.Errors = append(out.Errors, err)
			}
			continue
		}
		done++
		if err := p.predictOne(ctx, host, repo, url, def, login, o, pr, now, out); err != nil {
			if errors.Is(err, cycle.ErrCycleBudget) {
				// nothing else is rendered this cycle: the rest wait for the next
				out.Skipped = append(out.Skipped, fmt.Sprintf("%s and the pull requests after it: %v", ref(repo, o.Number), cycle.ErrCycleBudget))
				return done - 1, true
			}
			out.Errors = append(out.Errors, fmt.Errorf("predict %s: %w", ref(repo, o.Number), err))
			if errors.Is(err, githost.ErrRateLimited) {
				return done, true
			}
		}
	}
	return done, false
}

// predictOn says whether predict runs in a repository: the central policy
// with what the repository's own file may decide (config.RepoFilePath on
// its default branch, read where the host can read a file).
func (p *Publisher) predictOn(ctx context.Context, host RepoHost, repo githost.Repo, def string) (bool, string, error) {
	pol := p.Config.Policy
	var own *config.RepoFile
	if fh, ok := host.(FileHost); ok && pol.RepoFile.Reads() {
		b, err := fh.File(ctx, repo, def, config.RepoFilePath)
		if err != nil {
			return false, "", err
		}
		if b != nil {
			if own, err = pol.ReadRepoFile(b); err != nil {
				p.log().Warn("repository file not used", "repo", repo.String(), "file", config.RepoFilePath, "error", err.Error())
				own = nil
			}
		}
	}
	if !pol.ForRepo(repo.Key(), own).Predict {
		return false, "predict is switched off by " + config.RepoFilePath, nil
	}
	return true, "", nil
}

// predictOne predicts one head, publishes its check and review, and
// remembers it. A fork's head is anyone's code: it is predicted apart (see
// forkWork), and predictOne returns at once.
func (p *Publisher) predictOne(ctx context.Context, host CheckHost, repo githost.Repo, url, def, login string, o githost.PullRequest, pr Predictor, now time.Time, out *PredictedPRs) error {
	if !strings.EqualFold(o.HeadRepo, repo.String()) {
		at := fmt.Sprintf("%s@%s", ref(repo, o.Number), short(o.HeadSHA))
		if p.forks.add(repo.Key()+"@"+o.HeadSHA, func() {
			var apart PredictedPRs
			err := p.predictHead(ctx, host, repo, url, def, login, o, pr, now, &apart)
			for _, e := range append(apart.Errors, err) {
				if e != nil {
					p.log().Warn("predict a fork's pull request", "pr", at, "error", e.Error())
				}
			}
			if len(apart.Checked) > 0 {
				p.log().Info("fork's pull request predicted", "pr", at, "reviewed", len(apart.Reviewed) > 0)
			}
		}) {
			out.Skipped = append(out.Skipped, at+": from a fork, predicted apart from the cycle")
		}
		return nil
	}
	return p.predictHead(ctx, host, repo, url, def, login, o, pr, now, out)
}

// forkWork predicts pull requests from forks apart from the cycle: in a
// goroutine of its own, one head at a time, outside the runner's lock, so
// that neither the cycle nor an event waits for a fork's renders (each
// still within its budget). Its zero value is ready.
type forkWork struct {
	mu      sync.Mutex
	queued  map[string]bool // repository@head, queued or being predicted
	work    []func()
	running bool
	wg      sync.WaitGroup
}

// add queues a head's prediction unless it is queued already; it reports
// whether it queued it.
func (f *forkWork) add(key string, job func()) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.queued[key] {
		return false
	}
	if f.queued == nil {
		f.queued = map[string]bool{}
	}
	f.queued[key] = true
	f.work = append(f.work, func() {
		defer func() {
			f.mu.Lock()
			delete(f.queued, key)
			f.mu.Unlock()
		}()
		job()
	})
	if !f.running {
		f.running = true
		f.wg.Add(1)
		go f.run()
	}
	return true
}

func (f *forkWork) run() {
	defer f.wg.Done()
	for {
		f.mu.Lock()
		if len(f.work) == 0 {
			f.running = false
			f.mu.Unlock()
			return
		}
		job := f.work[0]
		f.work = f.work[1:]
		f.mu.Unlock()
		job()
	}
}

// WaitForks waits for the forks' pull requests queued so far to be
// predicted (driftfix once, before it exits). Call it when no cycle runs.
func (p *Publisher) WaitForks() { p.forks.wg.Wait() }

// predictHead predicts one head, publishes its check and review, and
// remembers it.
func (p *Publisher) predictHead(ctx context.Context, host CheckHost, repo githost.Repo, url, def, login string, o githost.PullRequest, pr Predictor, now time.Time, out *PredictedPRs) error {
	ctx, cancel := context.WithTimeout(ctx, p.perPRTimeout())
	defer cancel()
	res, err := pr.Predict(ctx, cycle.PRHead{RepoURL: url, Number: o.Number, Base: o.Base, DefaultBranch: def, HeadSHA: o.HeadSHA,
		Fork: !strings.EqualFold(o.HeadRepo, repo.String())})
	if err != nil {
		return err
	}
	if err := host.SetCheck(ctx, repo, o.HeadSHA, res.Check); err != nil {
		return err
	}
	at := fmt.Sprintf("%s@%s", ref(repo, o.Number), short(o.HeadSHA))
	out.Checked = append(out.Checked, at)
	reviewed := false
	if rh, ok := host.(ReviewHost); ok && res.Review != nil {
		// One review per head commit, even when the state was lost.
		done, err := rh.Reviewed(ctx, repo, o.Number, o.HeadSHA, login)
		if err != nil {
			return err
		}
		switch {
		case done:
			reviewed = true
		default:
			err := rh.Review(ctx, repo, o.Number, *res.Review)
			if errors.Is(err, githost.ErrRateLimited) || ctx.Err() != nil {
				return err // the head is checked again next cycle, its check updated in place
			}
			if err != nil {
				// The host refused the review (a line it does not count as
				// the diff's): the check stands and carries every
				// prediction; the head is not tried again.
				out.Errors = append(out.Errors, fmt.Errorf("review %s: %w", at, err))
				break
			}
			reviewed = true
			out.Reviewed = append(out.Reviewed, at)
		}
	}
	return p.Store.SavePredicted(ctx, repo.Key(), o.HeadSHA, state.Predicted{Number: o.Number, Predictions: res.Predictions, Reviewed: reviewed, At: now})
}

// perPRTimeout bounds predicting and publishing one head: PerPR for reading
// and writing, and the policy's render budget per pull request besides, so
// that the budget, not this bound, stops a slow render (and the check says
// so).
func (p *Publisher) perPRTimeout() time.Duration {
	d := p.PerPR
	if d <= 0 {
		d = 2 * time.Minute
	}
	if p.Config != nil {
		perPR, _ := p.Config.Limits.PredictBudgets()
		d += perPR
	}
	return d
}

func (p *Publisher) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return p.Log
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
