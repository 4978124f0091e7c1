// Package publish turns a cycle's result into pull requests and digests
// through two ports, a Git host and a notifier, remembering what it did in the
// state store. It decides no cause: it publishes what the cycle planned,
// under the policy. Each output has its file: pull requests opened or
// updated (pulls.go), their checks and the cooldown (checks.go), pull
// requests followed up (reconcile.go, adopt.go, commands.go, merged.go), the
// Drift Dashboard (dashboard.go), digests (digest.go, quiet.go), and the
// ignore-rule pull requests and the inventory's digest section (ignores.go).
package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// Publisher publishes cycles' results. It is used by one cycle at a time.
type Publisher struct {
	Config *config.Config
	// Store is where what was published is remembered across cycles
	// (bot/state's Store in the bot).
	Store Store
	// Hosts are the Git hosts pull requests are published to; an
	// application's repository goes to the first host that reads its URL.
	// None: pull requests are only reported.
	Hosts []GitHost
	// Notifier receives the digests; nil: digests are only reported.
	Notifier Notifier
	Log      *slog.Logger // nil: discard
	// IgnoreLabel on a pull request stops its fix for good (default "driftfix/ignore").
	IgnoreLabel string
	// PerPR bounds the publishing of one pull request; it runs to the end
	// even when the cycle is asked to stop, so no half-made PR is left (default 2m).
	PerPR time.Duration

	adopted bool // driftfix's open PRs were looked up on the hosts since start
	// noRepoFile are the repositories found without their own driftfix
	// file, and when: asked again after repoFileRecheck (repopolicy.go).
	noRepoFile map[string]time.Time
	forks      forkWork // forks' pull requests, predicted apart (predict.go)
}

// Store is what the publisher remembers across cycles: one small
// interface per feature, each declared beside the feature that uses it.
// bot/state's Store keeps them all in one database.
type Store interface {
	prStore
	checkStore
	requestStore
	dashboardStore
	digestStore
	heldStore
	snoozeStore
	fightStore
	ignoreStore
	predictStore
	listStore
}

var _ Store = (*state.Store)(nil)

// Published is what one publishing step did.
type Published struct {
	Opened, Updated, Unchanged, Closed, Merged, Rejected, Fixed []string // "owner/name#number"
	// Snoozed are pull requests closed by /driftfix snooze; Checked those
	// whose head got a new or changed check; StillDrifts merged ones whose
	// revision Argo CD synced while the application stayed OutOfSync.
	Snoozed, Checked, StillDrifts []string
	// Skipped are proposals not published, with why.
	Skipped []string
	// RepoFiles are the repositories' own .github/driftfix.yaml files not
	// used, each with its problems by line: the central policy applies there.
	RepoFiles []string
	// Digests are the messages posted, by channel, as the notifier laid
	// them out.
	Digests map[string][]string
	Errors  []error
}

// run is one Publish call: the cycle's result and what publishing it did so far.
type run struct {
	*Publisher
	ctx context.Context
	res *cycle.CycleResult
	now time.Time
	log *slog.Logger
	out *Published

	apps     map[string]cycle.AppState   // by AppKey
	proposed map[string]cycle.ProposedPR // by fix key
	digests  *digests
	mayClose map[string]bool // unlisted applications whose PRs may close
	// limited says a host's rate limit is used up: the rest waits for the next cycle.
	limited bool
	open    openCount
	writers map[string]bool // "repo login" → may steer driftfix, asked this cycle
	// polled are the open pull requests followUp read this cycle and left
	// open, by repository key and branch: publishing the same fix uses that
	// read, so each PR's head is polled once a cycle (a conditional request).
	polled map[string]*githost.PullRequest
	// released are the cursors of digests quiet hours held, sent this cycle.
	released []string
	// fightLines are the fights told this cycle, by AppKey (fights.go).
	fightLines map[string][]templates.FightLine
	// platformHold are the per-application fixes an open platform pull
	// request holds back, by fix key, with that PR (platform.go).
	platformHold map[string]string
	// ignoreHold are the per-application narrow-ignore fixes an open
	// ignore-rule pull request carries, by fix key, with that PR (ignores.go).
	ignoreHold map[string]string
	// writerPRs are driftfix's open writers pull requests in the policy's
	// repository, by manager key, once looked up (boxes.go).
	writerPRs map[string]string
	// sides are what each repository's own file and history say, read
	// once a cycle, by repository key (repopolicy.go).
	sides map[string]*repoSide
	// eventRepo, for an event's work, is the one repository whose
	// dashboard's ticks are acted on (events.go); "" in a cycle.
	eventRepo string
}

// openCount counts driftfix's open pull requests against the policy's limits.
type openCount struct {
	opened, open int
	perRepo      map[string]int // by repository key
}

// Publish reconciles the pull requests driftfix opened before, publishes
// the cycle's proposals and posts the digests.
func (p *Publisher) Publish(ctx context.Context, res *cycle.CycleResult, now time.Time) Published {
	r := p.start(ctx, res, now)
	r.platforms()
	r.fights()
	r.ignoreRules()
	r.stuckNews()
	r.followUp()
	r.proposeAll()
	r.dashboards()
	r.sendDigests()
	return *r.out
}

func (p *Publisher) start(ctx context.Context, res *cycle.CycleResult, now time.Time) *run {
	if p.IgnoreLabel == "" {
		p.IgnoreLabel = "driftfix/ignore"
	}
	if p.PerPR == 0 {
		p.PerPR = 2 * time.Minute
	}
	r := &run{Publisher: p, ctx: ctx, res: res, now: now, log: p.Log, out: &Published{Digests: map[string][]string{}},
		apps: map[string]cycle.AppState{}, proposed: map[string]cycle.ProposedPR{}, open: openCount{perRepo: map[string]int{}}, writers: map[string]bool{},
		polled: map[string]*githost.PullRequest{}, sides: map[string]*repoSide{}}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, a := range res.Apps {
		// Nothing about the pull requests of an application Argo CD cannot
		// compare can be concluded this cycle (it is not Synced again).
		a.Failed = a.Failed || a.App.CannotCompare
		r.apps[cycle.AppKey(a.Instance, a.App.Namespace, a.App.Name)] = a
	}
	for _, pr := range res.PRs {
		r.proposed[pr.Key] = pr
	}
	r.digests = &digests{run: r, views: map[string]*templates.DigestView{}}
	return r
}

func (r *run) fail(err error) {
	r.log.Error("publish", "error", err.Error())
	r.out.Errors = append(r.out.Errors, err)
}

// rateLimited notes an error that used up a host's rate limit.
func (r *run) rateLimited(err error) {
	if errors.Is(err, githost.ErrRateLimited) {
		r.limited = true
	}
}

// perPR is the context one pull request is published in: it outlives a
// stopped cycle, within PerPR.
func (r *run) perPR() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.ctx), r.PerPR)
}

// hostFor finds the host of an application's repository URL.
func (p *Publisher) hostFor(url string) (GitHost, githost.Repo, error) {
	var errs []error
	for _, h := range p.Hosts {
		repo, err := h.Repo(url)
		if err == nil {
			return h, repo, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, githost.Repo{}, fmt.Errorf("repository %s: no Git host is configured", url)
	}
	return nil, githost.Repo{}, errors.Join(errs...)
}

// hostOf finds the host of a repository the state store remembers by key;
// a key that names no host belongs to the first host.
func (p *Publisher) hostOf(key string) (GitHost, githost.Repo, error) {
	repo, err := githost.ParseKey(key)
	if err != nil {
		return nil, repo, err
	}
	for _, h := range p.Hosts {
		if repo.Host == "" || h.Host() == repo.Host {
			repo.Host = h.Host()
			return h, repo, nil
		}
	}
	return nil, repo, fmt.Errorf("repository %s: no Git host %q is configured", repo, repo.Host)
}

// ref names a pull request as people do: owner/name#number.
func ref(repo githost.Repo, number int) string { return fmt.Sprintf("%s#%d", repo, number) }
