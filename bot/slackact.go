package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/state"
)

// SlackActions does what the Slack digest's buttons ask (slack.Actions):
// Snooze in the state store, Recheck through the work queue, and who may
// press them from GitHub's collaborator permission.
type SlackActions struct {
	Runner *Runner
	Queue  *events.Queue
	// Leading, when set, reports whether this replica holds the Lease: a
	// standby neither snoozes nor queues (its state is not the leader's).
	Leading func() bool
}

// ErrStandby says a button was pressed on a replica that does not run cycles.
var ErrStandby = errors.New("this driftfix replica is a standby (it does not hold the Lease): press again, the next press may reach the leader")

// standby reports whether this replica must leave changes to the leader.
func (a SlackActions) standby() bool { return a.Leading != nil && !a.Leading() }

// ErrDryRun says a button asked for a change in a dry run, which keeps no state.
var ErrDryRun = errors.New("driftfix runs in dry run: it keeps no state and publishes nothing")

// Known reports whether the last cycle saw the application.
func (a SlackActions) Known(app string) bool {
	_, ok := a.Runner.appRepo(app)
	return ok
}

// WriteAccess returns login's permission on the repository the
// application reads and whether it may push there.
func (a SlackActions) WriteAccess(ctx context.Context, app, login string) (string, bool, error) {
	repoURL, ok := a.Runner.appRepo(app)
	if !ok {
		return "", false, fmt.Errorf("application %s: the last cycle did not see it", app)
	}
	a.Runner.mu.Lock()
	p := a.Runner.Publisher
	a.Runner.mu.Unlock()
	if p == nil {
		return "", false, ErrDryRun
	}
	for _, h := range p.Hosts {
		repo, err := h.Repo(repoURL)
		if err != nil {
			continue
		}
		perm, err := h.Permission(ctx, repo, login)
		if err != nil {
			return "", false, err
		}
		return perm, githost.CanWrite(perm), nil
	}
	return "", false, fmt.Errorf("repository %s of %s: no Git host driftfix publishes to holds it", repoURL, app)
}

// Snooze holds the application's digest lines back until a time.
func (a SlackActions) Snooze(ctx context.Context, app string, until time.Time, by string) error {
	if a.standby() {
		return ErrStandby
	}
	st := a.Runner.store()
	if st == nil {
		return ErrDryRun
	}
	return st.SnoozeApp(ctx, app, until, by)
}

// Recheck queues the application to be diagnosed again now.
func (a SlackActions) Recheck(_ context.Context, app string) error {
	if a.standby() {
		return ErrStandby
	}
	if a.Runner.store() == nil {
		return ErrDryRun
	}
	_, err := a.Queue.Add(events.Work{Kind: events.Recheck, App: app})
	return err
}

// SlackActors is who may press the digest's buttons under the policy in
// use (slack.Actors): slack.people and slack.actors.userGroups.
func (r *Runner) SlackActors() (map[string]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Config.Slack.People, r.Config.Slack.ActorGroups
}

// appRepo is the repository (its URL) an application of the last cycle reads.
func (r *Runner) appRepo(app string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u, ok := r.appRepos[app]
	return u, ok
}

// recheck asks the next cycle to diagnose an application at once (as the
// dashboard's "run again now" box does) and asks for that cycle now. The
// caller holds busy.
func (r *Runner) recheck(ctx context.Context, w events.Work, now time.Time) error {
	if _, ok := r.appRepo(w.App); !ok {
		return fmt.Errorf("recheck %s: the last cycle did not see it: %w", w.App, publish.ErrNotWatched)
	}
	if err := r.Publisher.Store.Request(ctx, w.App, state.ActionRunNow, now); err != nil {
		return fmt.Errorf("recheck %s: %w", w.App, err)
	}
	r.CycleSoon(0)
	return nil
}

// setAppRepos records the repository each application of the last cycle
// reads. The caller holds mu.
func (r *Runner) setAppRepos(res *plan.CycleResult) {
	r.appRepos = make(map[string]string, len(res.Apps))
	for _, a := range res.Apps {
		r.appRepos[plan.AppKey(a.Instance, a.App.Namespace, a.App.Name)] = a.App.RepoURL
	}
}
