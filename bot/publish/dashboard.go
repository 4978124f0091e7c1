package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// dashboardStore remembers each repository's Drift Dashboard issue.
type dashboardStore interface {
	// Dashboard is the dashboard issue of a repository and scope (0: none yet).
	Dashboard(ctx context.Context, repo, scope string) (int, error)
	// SetDashboard remembers the dashboard issue of a repository and scope.
	SetDashboard(ctx context.Context, repo, scope string, number int) error
}

// The Drift Dashboard is one issue per repository that driftfix reads,
// for the applications whose policy enables it: what is stuck and since
// when, the open fix PRs with their check, the fixes not opened yet, what
// is left for people, broad ignore rules and rejected fixes, with boxes a
// person ticks. It is found by the marker that starts its body, only in
// issues driftfix's own account opened, so a restart, a lost database or a
// second replica never makes another; it is written only when its text
// changes.

// dashboardNone is the state store's note that a repository was searched
// and has no dashboard yet.
const dashboardNone = -1

// dashboard is one repository's dashboard being published.
type dashboard struct {
	*run
	ctx    context.Context
	host   IssueHost
	repo   githost.Repo
	title  string
	apps   []cycle.AppState // of this repository, dashboard enabled, sorted
	marker string
	scope  string
	issue  *githost.Issue
}

// dashboards publishes every repository's dashboard, each in its own context.
func (r *run) dashboards() {
	if len(r.Hosts) == 0 || r.Config.DryRun {
		return
	}
	if len(r.res.FailedInstances) > 0 {
		// The applications of an instance that did not answer are not
		// listed, and which repositories they read is not known: every
		// dashboard stays as it was rather than say they are fine.
		r.log.Warn("drift dashboards left as they were: an Argo CD instance did not answer", "instances", strings.Join(r.res.FailedInstances, ","))
		return
	}
	if r.eventRepo == "" { // an event's ticks leave the requests to the cycle (events.go)
		r.clearRunNow()
	}
	scope := r.dashboardScope()
	groups := map[string]*dashboard{}
	for _, a := range r.res.Apps {
		key := cycle.AppKey(a.Instance, a.App.Namespace, a.App.Name)
		pol := r.Config.For(a.App.Project, a.App.Name, a.App.Namespace)
		if !pol.Dashboard.On() || (pol.DryRun != nil && *pol.DryRun) || !r.res.Owns(key) {
			continue
		}
		host, repo, err := r.hostFor(a.App.RepoURL)
		if err != nil || (r.eventRepo != "" && repo.Key() != r.eventRepo) {
			continue // not a repository of a configured host: nowhere to show it
		}
		d := groups[repo.Key()]
		if d == nil {
			d = &dashboard{run: r, host: host, repo: repo, scope: scope, marker: "<!-- driftfix:dashboard=" + scope + " -->"}
			groups[repo.Key()] = d
		}
		d.apps = append(d.apps, a)
	}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		if r.limited || r.ctx.Err() != nil {
			return
		}
		d := groups[k]
		slices.SortFunc(d.apps, func(a, b cycle.AppState) int {
			return strings.Compare(cycle.AppKey(a.Instance, a.App.Namespace, a.App.Name), cycle.AppKey(b.Instance, b.App.Namespace, b.App.Name))
		})
		d.title = r.Config.For(d.apps[0].App.Project, d.apps[0].App.Name, d.apps[0].App.Namespace).Dashboard.IssueTitle()
		ctx, cancel := r.perPR()
		d.ctx = ctx
		err := d.publish()
		cancel()
		if err != nil {
			r.fail(fmt.Errorf("the Drift Dashboard of %s: %w", d.repo, err))
			r.rateLimited(err)
		}
	}
}

// dashboardScope names which applications this driftfix reads, so bots
// that split instances by shard keep a dashboard each: "all" without shards.
func (r *run) dashboardScope() string {
	var parts []string
	for _, inst := range slices.Sorted(maps.Keys(r.res.Shards)) {
		if s := r.res.Shards[inst]; s != "" {
			parts = append(parts, inst+"="+s)
		}
	}
	if len(parts) == 0 {
		return "all"
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:6])
}

// publish finds the dashboard, acts on the boxes ticked since the last
// cycle, and writes the dashboard when its text changed; a repository
// with nothing to show gets no new issue.
func (d *dashboard) publish() error {
	found, err := d.find()
	if err != nil || (d.issue != nil && d.issue.State == "closed") {
		return err // a person closed it: the dashboard of this repository pauses until it is reopened
	}
	if d.issue != nil {
		if err := d.ticked(); err != nil {
			return err
		}
	}
	if d.eventRepo != "" {
		return nil // an event acts on the ticks; the next cycle writes the dashboard
	}
	view, err := d.view()
	if err != nil {
		return err
	}
	if d.issue == nil && len(view.Apps) == 0 && len(view.Ignores) == 0 {
		if !found {
			return d.Store.SetDashboard(d.ctx, d.repo.Key(), d.scope, dashboardNone)
		}
		return nil
	}
	body, err := templates.Dashboard(view)
	if err != nil {
		return err
	}
	if d.issue == nil {
		if err := d.open(body); err != nil {
			return err
		}
	}
	if d.issue.Body == body && d.issue.Title == d.title {
		return nil
	}
	if err := d.host.EditIssue(d.ctx, d.repo, d.issue.Number, d.title, body); err != nil {
		return err
	}
	d.log.Info("drift dashboard updated", "repo", d.repo.String(), "issue", d.issue.Number)
	return nil
}

// find reads the dashboard the state store remembers, checking that
// driftfix's own account opened it, or looks it up on the host. It reports whether the
// lookup was done (or is known to have found none before).
func (d *dashboard) find() (bool, error) {
	n, err := d.Store.Dashboard(d.ctx, d.repo.Key(), d.scope)
	if err != nil {
		return false, err
	}
	login, err := d.host.Login(d.ctx)
	if err != nil {
		return false, err
	}
	if n > 0 {
		is, err := d.host.Issue(d.ctx, d.repo, n)
		if err != nil {
			return false, err
		}
		// driftfix's own issue by the number it remembers, even when a
		// person's edit dropped the marker: the next write restores it.
		if is != nil && strings.EqualFold(is.Author, login) {
			d.issue = is
			return true, nil
		}
	}
	if n == dashboardNone && !d.anything() {
		return true, nil // searched before, and still nothing to show
	}
	if d.issue, err = d.host.FindIssue(d.ctx, d.repo, d.marker); err != nil {
		return false, err
	}
	if d.issue != nil {
		return true, d.Store.SetDashboard(d.ctx, d.repo.Key(), d.scope, d.issue.Number)
	}
	return false, nil
}

// anything reports whether the repository has something to show: a stuck
// application or an open fix PR.
func (d *dashboard) anything() bool {
	if len(d.ignoreLines()) > 0 {
		return true
	}
	for _, a := range d.apps {
		if a.Stuck || len(d.fightLines[cycle.AppKey(a.Instance, a.App.Namespace, a.App.Name)]) > 0 {
			return true
		}
	}
	prs, _ := d.Store.PRs(d.ctx, state.PROpen)
	for _, k := range prs {
		if d.has(k.App) {
			return true
		}
	}
	return false
}

// ignoreLines are the flagged ignore rules that apply to this
// repository's applications.
func (d *dashboard) ignoreLines() []templates.IgnoreLine {
	apps := map[string]bool{}
	for _, a := range d.apps {
		apps[cycle.AppKey(a.Instance, a.App.Namespace, a.App.Name)] = true
	}
	return d.ignoreLinesFor(apps)
}

// has reports whether an application (by AppKey) is on this dashboard.
func (d *dashboard) has(appKey string) bool {
	for _, a := range d.apps {
		if cycle.AppKey(a.Instance, a.App.Namespace, a.App.Name) == appKey {
			return true
		}
	}
	return false
}

// open opens the dashboard; when another replica opened one at the same
// time, the older is kept and the new one closed.
func (d *dashboard) open(body string) error {
	is, err := d.host.OpenIssue(d.ctx, d.repo, d.title, body)
	if err != nil {
		return err
	}
	oldest, err := d.host.FindIssue(d.ctx, d.repo, d.marker)
	if err != nil {
		return err
	}
	d.issue = is
	if oldest != nil && oldest.Number != is.Number {
		if err := d.host.CloseIssue(d.ctx, d.repo, is.Number); err != nil {
			return err
		}
		d.issue = oldest
	}
	d.log.Info("drift dashboard opened", "repo", d.repo.String(), "issue", d.issue.Number)
	return d.Store.SetDashboard(d.ctx, d.repo.Key(), d.scope, d.issue.Number)
}

// ticked acts once on each box ticked since driftfix last wrote the
// dashboard, when the account that last edited the issue can write to the
// repository. GitHub does not say who ticked a box: ticking one edits the
// body, and GraphQL's Issue.lastEditedBy names whoever made the last edit
// (read with the body, so the two agree). A person without write access
// cannot edit driftfix's issue on GitHub at all; this is the second check.
// Boxes ticked before someone else's later edit count as that editor's.
func (d *dashboard) ticked() error {
	if len(templates.Ticks(d.issue.Body)) == 0 {
		return nil
	}
	body, editor, err := d.host.IssueLastEditor(d.ctx, d.repo, d.issue.Number)
	if err != nil {
		return err
	}
	ticks := templates.Ticks(body)
	if len(ticks) == 0 {
		return nil
	}
	ticks = d.bothWriterBoxes(ticks)
	ok := editor != ""
	if ok {
		if ok, err = d.canWrite(editor); err != nil {
			return err
		}
	}
	if !ok {
		d.out.Skipped = append(d.out.Skipped, fmt.Sprintf("%s: %d ticked dashboard box(es) not followed: the issue was last edited by %q, who cannot write to %s; only such accounts steer driftfix", ref(d.repo, d.issue.Number), len(ticks), editor, d.repo))
		return nil
	}
	var errs []error
	for _, t := range ticks {
		errs = append(errs, d.act(t, editor))
	}
	return errors.Join(errs...)
}

// canWrite asks the host, once per account and cycle, whether login can
// write to the repository (see steers).
func (d *dashboard) canWrite(login string) (bool, error) {
	key := d.repo.Key() + " " + strings.ToLower(login)
	if ok, seen := d.writers[key]; seen {
		return ok, nil
	}
	perm, err := d.host.Permission(d.ctx, d.repo, login)
	if err != nil {
		return false, err
	}
	d.writers[key] = githost.CanWrite(perm)
	return d.writers[key], nil
}

// act follows one ticked box of a fix on this dashboard; a box of a fix
// that is not (or no longer) here does nothing.
func (d *dashboard) act(t templates.Tick, editor string) error {
	if box, err := d.actBox(t, editor); box {
		return err
	}
	open, hasPR, err := d.Store.PRFor(d.ctx, t.Key)
	if err != nil {
		return err
	}
	hasPR = hasPR && open.State == state.PROpen && d.has(open.App)
	prop, proposed := d.proposed[t.Key]
	proposed = proposed && d.has(cycle.AppKey(prop.Instance, prop.Namespace, prop.App))
	where := ref(d.repo, d.issue.Number)
	switch {
	case t.Action == state.ActionRecheck && hasPR, t.Action == state.ActionOpenNow && proposed && !hasPR:
		d.log.Info("dashboard request", "action", t.Action, "fix", t.Key, "by", editor, "dashboard", where)
		return d.Store.Request(d.ctx, t.Key, t.Action, d.now)
	case t.Action == "stop" && hasPR:
		host, repo, err := d.hostOf(open.Repo)
		if err != nil {
			return err
		}
		f := &followed{run: d.run, ctx: d.ctx, host: host, repo: repo, k: open}
		if f.pr, err = host.GetPR(d.ctx, repo, open.Number); err != nil {
			return err
		}
		return f.stopFromDashboard(where)
	case t.Action == "stop" && proposed:
		return d.Store.Reject(d.ctx, t.Key, cycle.AppKey(prop.Instance, prop.Namespace, prop.App), "asked to stop on the Drift Dashboard "+where, d.now)
	}
	return nil
}

// stopFromDashboard stops a fix for good and closes its open pull request,
// as a /driftfix ignore does.
func (c *followed) stopFromDashboard(where string) error {
	if err := c.Store.Reject(c.ctx, c.k.Fingerprint, c.k.App, "asked to stop on the Drift Dashboard "+where, c.now); err != nil {
		return err
	}
	msg := "driftfix will not propose this fix again, as asked on the Drift Dashboard (" + where + ").\n\n" + stoppedMarker + "\n" + closedMarker
	if err := c.host.ClosePR(c.ctx, c.repo, c.k.Number, c.k.Branch, msg); err != nil {
		return err
	}
	c.report("closed", " (asked to stop on the dashboard)")
	c.out.Rejected = append(c.out.Rejected, c.ref())
	return c.save(state.PRClosed)
}

// checkConclusion is the conclusion of the driftfix/verify check last
// published on an open fix pull request, for the dashboard's check column
// ("" while none is: pending).
func (r *run) checkConclusion(k state.PR) string {
	c, ok, err := r.Store.CheckFor(r.ctx, k.Fingerprint)
	switch {
	case err != nil || !ok:
		return ""
	case c.Success:
		return "success"
	}
	return "failure"
}

// view is what the dashboard says now.
func (d *dashboard) view() (templates.DashboardView, error) {
	v := templates.DashboardView{Marker: d.marker}
	if s := d.side(d.ctx, d.host, d.repo); s.problem != "" {
		v.RepoFile = strings.Split(s.problem, "\n")
	}
	openPRs, err := d.Store.PRs(d.ctx, state.PROpen)
	if err != nil {
		return v, err
	}
	rejections, err := d.Store.Rejections(d.ctx)
	if err != nil {
		return v, err
	}
	stillDrifts, err := d.Store.PRs(d.ctx, state.PRStillDrifts)
	if err != nil {
		return v, err
	}
	findings := d.findings()
	v.Ignores = d.ignoreLines()
	if err := d.boxesView(&v); err != nil {
		return v, err
	}
	for _, a := range d.apps {
		key := cycle.AppKey(a.Instance, a.App.Namespace, a.App.Name)
		av := templates.DashboardApp{App: a.App.Name, Namespace: a.App.Namespace, Instance: a.Instance, ArgoCDURL: d.res.URLs[a.Instance], Stuck: a.Stuck}
		if a.Stuck {
			if av.Since = a.FirstSeen; av.Since.IsZero() {
				if av.Since, err = d.Store.FirstSeen(d.ctx, key, d.now); err != nil {
					return v, err
				}
			}
			for _, l := range d.res.Digest.NewStuck {
				if cycle.AppKey(l.Instance, l.Namespace, l.App) == key {
					av.Causes, av.Note = l.Causes, l.Note
				}
			}
		}
		opened := map[string]bool{}
		for _, k := range openPRs {
			if k.App != key {
				continue
			}
			opened[k.Fingerprint] = true
			asked, err := d.Store.Requested(d.ctx, k.Fingerprint, state.ActionRecheck)
			if err != nil {
				return v, err
			}
			title := k.Branch
			if p, ok := d.proposed[k.Fingerprint]; ok {
				title = p.Title
			}
			av.PRs = append(av.PRs, templates.DashboardPR{Number: k.Number, Key: k.Fingerprint, Title: title, Check: d.checkConclusion(k), RecheckAsked: asked})
		}
		slices.SortFunc(av.PRs, func(a, b templates.DashboardPR) int { return a.Number - b.Number })
		if a.Stuck {
			for _, k := range stillDrifts {
				if k.App == key {
					opened[k.Fingerprint] = true // listed here, not as a fix waiting to be opened
					av.StillDiffers = append(av.StillDiffers, d.stillDiffers(k, key))
				}
			}
		}
		rejected := map[string]bool{}
		for _, rj := range rejections {
			if rj.App != key {
				continue
			}
			rejected[rj.Fix] = true
			av.Rejected = append(av.Rejected, templates.DashboardRejection{Key: rj.Fix, Title: d.proposed[rj.Fix].Title, Reason: rj.Reason, At: rj.At})
		}
		for _, p := range d.res.PRs {
			if cycle.AppKey(p.Instance, p.Namespace, p.App) != key || opened[p.Key] || rejected[p.Key] {
				continue
			}
			if rec, ok, err := d.Store.PRFor(d.ctx, p.Key); err != nil {
				return v, err
			} else if ok && rec.State == state.PRMerged {
				continue // merged: waiting for Argo CD to sync it
			}
			asked, err := d.Store.Requested(d.ctx, p.Key, state.ActionOpenNow)
			if err != nil {
				return v, err
			}
			why := d.skipped(p.Branch)
			if again, err := d.Store.Requested(d.ctx, p.Key, state.ActionUnreject); err != nil {
				return v, err
			} else if again {
				why = "proposed again in the next cycle, as asked here"
			}
			av.Waiting = append(av.Waiting, templates.DashboardFix{Key: p.Key, Title: p.Title, Why: why, OpenNowAsked: asked})
		}
		for _, l := range d.res.Digest.ForPeople {
			if cycle.AppKey(l.Instance, l.Namespace, l.App) == key {
				f := findings[key+"\x00"+l.Resource.String()+"\x00"+l.Path]
				av.ForPeople = append(av.ForPeople, templates.DashboardFinding{Resource: l.Resource, Path: l.Path, Cause: l.Cause, Why: l.Why, Evidence: drift.EvidenceTexts(f.Evidence)})
			}
		}
		for _, f := range d.broadIgnores(key) {
			av.BroadIgnores = append(av.BroadIgnores, templates.DashboardFinding{Resource: f.Resource, Path: f.Path, Cause: f.Cause, Evidence: drift.EvidenceTexts(f.Evidence)})
		}
		av.Fights = d.fightLines[key]
		if a.Stuck || len(av.PRs) > 0 || len(av.Fights) > 0 {
			v.Apps = append(v.Apps, av)
		}
	}
	return v, nil
}

// stillDiffers is a merged fix whose revision Argo CD synced while the
// application stayed OutOfSync, with what differs this cycle.
func (d *dashboard) stillDiffers(k state.PR, appKey string) templates.DashboardMerged {
	m := templates.DashboardMerged{Number: k.Number, Title: k.Branch, Revision: k.MergeSHA}
	if p, ok := d.proposed[k.Fingerprint]; ok {
		m.Title = p.Title
	}
	if len(m.Revision) > 12 {
		m.Revision = m.Revision[:12]
	}
	for _, s := range d.res.Stuck {
		if cycle.AppKey(s.Instance, s.App.Namespace, s.App.Name) != appKey {
			continue
		}
		for _, f := range s.Findings {
			m.Findings = append(m.Findings, templates.DashboardFinding{Resource: f.Resource, Path: f.Path, Cause: f.Cause})
		}
	}
	return m
}

// findings indexes this cycle's findings by application, resource and path.
func (d *dashboard) findings() map[string]drift.Kept {
	out := map[string]drift.Kept{}
	for _, s := range d.res.Stuck {
		key := cycle.AppKey(s.Instance, s.App.Namespace, s.App.Name)
		for _, f := range s.Findings {
			out[key+"\x00"+f.Resource.String()+"\x00"+f.Path] = f
		}
	}
	return out
}

// broadIgnores are an application's findings of broad ignore rules.
func (d *dashboard) broadIgnores(appKey string) []drift.Kept {
	var out []drift.Kept
	for _, s := range d.res.Stuck {
		if cycle.AppKey(s.Instance, s.App.Namespace, s.App.Name) != appKey {
			continue
		}
		for _, f := range s.Findings {
			if f.OnIgnoreRule() {
				out = append(out, f)
			}
		}
	}
	return out
}

// skipped is why this cycle did not publish a proposal's branch, if it said.
func (d *dashboard) skipped(branch string) string {
	for _, s := range d.out.Skipped {
		if why, ok := strings.CutPrefix(s, branch+": "); ok {
			return why
		}
	}
	return ""
}
