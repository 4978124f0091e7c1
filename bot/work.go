package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/state"
)

// Between cycles the runner does the units of work webhook deliveries ask
// for (events.Work), each under the cycle's lock and with what the last
// cycle read, and it takes a changed policy at the start of each cycle and
// unit.

// Parts are what a policy makes of the bot: built again when the policy
// file changes (Runner.Reload).
type Parts struct {
	Config    *config.Config
	Instances []plan.Instance
	Publisher *publish.Publisher // nil: plan only (dry run)
	MemoSeal  *memo.Seal
	// Metrics holds the new parts' clients, which the runner's metrics count from then on.
	Metrics *Metrics
	// Close releases the parts (the state database).
	Close func()
}

// ErrNoCycle says a unit of work came before the first cycle finished: the
// first cycle does what it asked.
var ErrNoCycle = errors.New("no cycle has finished yet: the first cycle does it")

// eventState is what the runner keeps for events between cycles.
type eventState struct {
	last      *plan.CycleResult  // the last cycle's, or nil before the first
	predictor *Predictor         // reads with last, made once per cycle
	soon      chan time.Duration // cycles asked for (CycleSoon)
	closeOld  func()             // releases the parts the last reload replaced
	pushDelay time.Duration      // 0: DefaultPushDelay
	// limited holds, per App installation, until when GitHub's rate limit
	// is spent: its units wait for the cycles meanwhile.
	limited map[int64]time.Time
}

// rateLimitPause is how long an installation's units are left to the
// cycles after one found GitHub's rate limit spent.
const rateLimitPause = time.Minute

// DefaultPushDelay is how long after a push to a tracked branch the cycle
// that re-checks its applications starts, so that Argo CD has compared the
// new commit (at once with Argo CD's own Git webhook; within its
// timeout.reconciliation, 3 minutes by default, without).
const DefaultPushDelay = time.Minute

// SetPushDelay sets how long after a push the cycle starts (default
// DefaultPushDelay).
func (r *Runner) SetPushDelay(d time.Duration) {
	r.busy.Lock()
	defer r.busy.Unlock()
	r.ev.pushDelay = d
}

// CycleSoon asks Serve for a cycle after delay (sooner asks win; one
// pending at most): what an event asked needs a whole cycle.
func (r *Runner) CycleSoon(delay time.Duration) {
	r.mu.Lock()
	if r.ev.soon == nil {
		r.ev.soon = make(chan time.Duration, 1)
	}
	ch := r.ev.soon
	r.mu.Unlock()
	select {
	case ch <- delay:
	default: // one is pending already
	}
}

// soonC is the channel CycleSoon sends on.
func (r *Runner) soonC() chan time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ev.soon == nil {
		r.ev.soon = make(chan time.Duration, 1)
	}
	return r.ev.soon
}

// keepLast remembers a finished cycle's result for the events after it.
// The caller holds busy.
func (r *Runner) keepLast(res *plan.CycleResult) {
	r.ev.last, r.ev.predictor = res, nil
}

// runnerStore is what the runner keeps in the publisher's state store
// beside what publishing keeps (publish.Store): webhook deliveries, the
// digest's snoozes and the memo. bot/state's Store keeps them all.
type runnerStore interface {
	publish.Store
	memo.Store
	// FirstDelivery records a webhook delivery; false when it was seen.
	FirstDelivery(ctx context.Context, id string, now time.Time) (bool, error)
	// ForgetDelivery forgets a webhook delivery, so a redelivery is done.
	ForgetDelivery(ctx context.Context, id string) error
	// SnoozeApp holds an application's digest lines and fixes back until a time.
	SnoozeApp(ctx context.Context, app string, until time.Time, by string) error
}

var _ runnerStore = (*state.Store)(nil)

// store is the state store deliveries, snoozes and the memo are kept in,
// or nil in a dry run (or with a publisher's store that keeps only what
// publishing needs, which Once warns of).
func (r *Runner) store() runnerStore {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Publisher == nil {
		return nil
	}
	st, _ := r.Publisher.Store.(runnerStore)
	return st
}

// FirstDelivery records a webhook delivery in the state store and reports
// whether it is new (events.Deliveries); in a dry run, without a store,
// every delivery is.
func (r *Runner) FirstDelivery(ctx context.Context, id string, now time.Time) (bool, error) {
	if st := r.store(); st != nil {
		return st.FirstDelivery(ctx, id, now)
	}
	return true, nil
}

// ForgetDelivery forgets a webhook delivery (events.Deliveries).
func (r *Runner) ForgetDelivery(ctx context.Context, id string) error {
	if st := r.store(); st != nil {
		return st.ForgetDelivery(ctx, id)
	}
	return nil
}

// Watches reports whether a repository (a web URL) is read by an
// application of the last cycle; before the first cycle, every repository
// is. The work's handler checks again.
func (r *Runner) Watches(webURL string) bool {
	r.mu.Lock()
	repos := r.watched
	r.mu.Unlock()
	if repos == nil {
		return true
	}
	key, ok := repoKey(webURL)
	return ok && repos[key]
}

// repoKey is the host-free owner/name of a repository URL, lower case.
func repoKey(u string) (string, bool) {
	u = strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(u), "/"), ".git")
	parts := strings.Split(u, "/")
	if len(parts) < 2 || parts[len(parts)-1] == "" || parts[len(parts)-2] == "" {
		return "", false
	}
	owner := parts[len(parts)-2]
	if i := strings.LastIndex(owner, ":"); i >= 0 { // git@host:owner/name
		owner = owner[i+1:]
	}
	return strings.ToLower(owner + "/" + parts[len(parts)-1]), true
}

// setWatched records the repositories the last cycle's applications read.
func (r *Runner) setWatched(res *plan.CycleResult) {
	repos := map[string]bool{}
	for _, a := range res.Apps {
		if k, ok := repoKey(a.App.RepoURL); ok {
			repos[k] = true
		}
	}
	r.mu.Lock()
	r.watched = repos
	r.setAppRepos(res)
	r.mu.Unlock()
}

// installer is a Git host that names the App installation of a repository.
type installer interface {
	Installation(ctx context.Context, r githost.Repo) (int64, error)
	ForgetInstallations()
}

// Do does one unit of work, under the cycle's lock: a cycle and a unit
// never write the same pull request at once. A dry run does nothing.
func (r *Runner) Do(ctx context.Context, w events.Work) error {
	start := time.Now()
	r.busy.Lock()
	defer r.busy.Unlock()
	r.reload(ctx)
	var err error
	if until := r.ev.limited[w.Installation]; time.Now().Before(until) {
		err = fmt.Errorf("installation %d: GitHub's rate limit is spent until %s; the cycles catch up: %w", w.Installation, until.UTC().Format(time.RFC3339), githost.ErrRateLimited)
	} else if err = r.do(ctx, w); errors.Is(err, githost.ErrRateLimited) {
		if r.ev.limited == nil {
			r.ev.limited = map[int64]time.Time{}
		}
		r.ev.limited[w.Installation] = time.Now().Add(rateLimitPause)
	}
	r.Metrics.work(w, err, time.Since(start))
	if errors.Is(err, publish.ErrNotWatched) {
		r.log().Info("event dropped", "work", w.String(), "delivery", w.Delivery, "why", err.Error())
		return nil
	}
	return err
}

func (r *Runner) do(ctx context.Context, w events.Work) error {
	if w.Kind == events.App {
		// An application turned OutOfSync after a sync: diagnosed at once,
		// alone (a dry run's too: it plans and logs).
		return r.doApp(ctx, w)
	}
	p := r.Publisher
	if p == nil || r.Config.DryRun {
		return nil
	}
	if w.Kind == events.Refresh {
		for _, h := range p.Hosts {
			if in, ok := h.(installer); ok {
				in.ForgetInstallations()
			}
		}
		r.CycleSoon(0)
		return nil
	}
	res := r.ev.last
	if res == nil {
		return ErrNoCycle
	}
	if err := r.sameInstallation(ctx, w); err != nil {
		return err
	}
	now := time.Now()
	log := r.log()
	switch w.Kind {
	case events.Predict:
		if r.ev.predictor == nil {
			r.ev.predictor = NewPredictor(r.Config, r.Instances, res)
			r.ev.predictor.Charts = r.Charts
		}
		out, err := p.PredictPR(ctx, r.ev.predictor, w.RepoURL, w.Number, w.Rerun, now)
		if len(out.Checked) > 0 {
			log.Info("pull request predicted", "pr", out.Checked[0], "reviewed", len(out.Reviewed) > 0, "delivery", w.Delivery)
		}
		return err
	case events.Comment:
		out, err := p.FollowPR(ctx, res, w.RepoURL, w.Number, now)
		r.afterEvent(ctx, w, out)
		return err
	case events.Dashboard:
		out, err := p.DashboardTicks(ctx, res, w.RepoURL, now)
		r.afterEvent(ctx, w, out)
		return err
	case events.Verify:
		if err := p.RecheckHead(ctx, w.RepoURL, w.HeadSHA, now); err != nil {
			return err
		}
		r.CycleSoon(0)
		return nil
	case events.Recheck:
		return r.recheck(ctx, w, now)
	case events.Push:
		if !tracks(res, w) {
			return fmt.Errorf("push to %s %s: no application of the last cycle tracks the branch: %w", w.Repo, w.Branch, publish.ErrNotWatched)
		}
		d := r.ev.pushDelay
		if d <= 0 {
			d = DefaultPushDelay
		}
		r.CycleSoon(d)
		return nil
	}
	return fmt.Errorf("work %q: no such kind", w.Kind)
}

// afterEvent logs what a unit published and asks for a cycle when people
// asked for what only a cycle does.
func (r *Runner) afterEvent(ctx context.Context, w events.Work, out publish.Published) {
	for _, s := range out.Skipped {
		r.log().Info("event work", "work", w.String(), "skipped", s)
	}
	if n := len(out.Closed) + len(out.Rejected) + len(out.Snoozed); n > 0 {
		r.log().Info("event work", "work", w.String(), "closed", n)
	}
	if pending, err := r.Publisher.Pending(ctx); err == nil && pending {
		r.CycleSoon(0)
	}
}

// sameInstallation drops work whose delivery names another App
// installation than the repository's.
func (r *Runner) sameInstallation(ctx context.Context, w events.Work) error {
	if w.Installation == 0 || w.RepoURL == "" {
		return nil
	}
	for _, h := range r.Publisher.Hosts {
		in, ok := h.(installer)
		if !ok {
			continue
		}
		repo, err := h.Repo(w.RepoURL)
		if err != nil {
			continue
		}
		id, err := in.Installation(ctx, repo)
		if err != nil {
			return err
		}
		if id != 0 && id != w.Installation {
			return fmt.Errorf("installation %d is not the App's installation on %s (%d): %w", w.Installation, repo, id, publish.ErrNotWatched)
		}
		return nil
	}
	return nil
}

// tracks reports whether an application of res reads the branch a push moved.
func tracks(res *plan.CycleResult, w events.Work) bool {
	want, ok := repoKey(w.RepoURL)
	if !ok {
		return false
	}
	for _, a := range res.Apps {
		if k, ok := repoKey(a.App.RepoURL); !ok || k != want {
			continue
		}
		rev := a.App.GitRevision
		switch {
		case !a.App.GitSource: // a chart or several sources: any branch may be read
			return true
		case rev == w.Branch, rev == "refs/heads/"+w.Branch:
			return true
		case (rev == "" || rev == "HEAD") && w.Branch == w.DefaultBranch:
			return true
		}
	}
	return false
}

// reload takes the policy's new parts when it changed; a policy that
// cannot be used keeps the old one (Reload logs why and counts it). The
// caller holds busy.
func (r *Runner) reload(ctx context.Context) {
	if r.Reload == nil {
		return
	}
	p, err := r.Reload(ctx)
	if err != nil || p == nil {
		return
	}
	if r.ev.closeOld != nil {
		r.ev.closeOld()
	}
	r.ev.closeOld = p.Close
	r.mu.Lock() // the receiver reads the Publisher's store (FirstDelivery)
	r.Config, r.Instances, r.Publisher, r.MemoSeal = p.Config, p.Instances, p.Publisher, p.MemoSeal
	r.mu.Unlock()
	r.ev.predictor = nil
	r.Metrics.adopt(p.Metrics)
	r.policyChanged() // Serve reads the schedule and jitter again
	r.log().Info("policy changed: the new one is used from now on", "dry_run", r.Publisher == nil || r.Config.DryRun)
}

// CheckPolicy takes a changed policy now, unless a cycle or unit is
// running (it takes it when it starts).
func (r *Runner) CheckPolicy(ctx context.Context) {
	if !r.busy.TryLock() {
		return
	}
	defer r.busy.Unlock()
	r.reload(ctx)
}

// OwnClose hands the runner the release of the parts it was built with:
// a reload calls it when it replaces them, Close when it was not replaced.
func (r *Runner) OwnClose(f func()) {
	r.busy.Lock()
	defer r.busy.Unlock()
	r.ev.closeOld = f
}

// Close releases the runner's parts (see OwnClose).
func (r *Runner) Close() {
	r.busy.Lock()
	defer r.busy.Unlock()
	if r.ev.closeOld != nil {
		r.ev.closeOld()
		r.ev.closeOld = nil
	}
}

// ArgoCD returns the Argo CD instances the runner scans now (a policy
// reload replaces them).
func (r *Runner) ArgoCD() []plan.Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Instances
}
