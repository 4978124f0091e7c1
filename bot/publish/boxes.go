package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// The Drift Dashboard's boxes that are not about one fix's pull request:
// "run again now" for the dashboard's applications, "propose this fix
// again" for a rejected fix, and, for each field manager driftfix could not
// place, "a controller" and "a person", which propose a writers entry in the
// policy file (config.PolicyRepo). Who may tick them is ticked's rule; a
// writers entry also needs the account to write to the policy's repository.

// maxWriters bounds the writers one dashboard lists; the others show once
// these are placed.
const maxWriters = 20

// maxManager is the longest field manager name Kubernetes accepts; a
// longer one (a snapshot no API server wrote) is not listed.
const maxManager = 128

// writersMarkerRE reads the marker a writers pull request's body ends with.
var writersMarkerRE = regexp.MustCompile(`<!-- driftfix:writers=([0-9a-f]+) -->`)

// RunNow returns, for CycleOptions.RunNow, whether a person asked on a
// dashboard to diagnose an application (by AppKey) now. It reads the state
// store once; a failed read asks for nothing.
func (p *Publisher) RunNow(ctx context.Context) func(appKey string) bool {
	asked, err := p.Store.Requests(ctx, state.ActionRunNow)
	if err != nil {
		if p.Log != nil {
			p.Log.Warn("run again now: read what the dashboards asked", "error", err.Error())
		}
		return nil
	}
	if len(asked) == 0 {
		return nil
	}
	return func(appKey string) bool {
		_, ok := asked[appKey]
		return ok
	}
}

// clearRunNow forgets the "run again now" requests this cycle honoured:
// those asked before it began, of applications it listed.
func (r *run) clearRunNow() {
	asked, err := r.Store.Requests(r.ctx, state.ActionRunNow)
	if err != nil {
		r.fail(err)
		return
	}
	for _, key := range slices.Sorted(maps.Keys(asked)) {
		if a, ok := r.apps[key]; ok && !a.Failed && asked[key].Before(r.now) {
			if err := r.Store.ClearRequest(r.ctx, key, state.ActionRunNow); err != nil {
				r.fail(err)
			}
		}
	}
}

// runKey is the key of the dashboard's "run again now" box.
func (d *dashboard) runKey() string {
	sum := sha256.Sum256([]byte("run-now\x00" + d.repo.String() + "\x00" + d.scope))
	return hex.EncodeToString(sum[:6])
}

// actBox follows a ticked box that is not about one fix's pull request; it
// reports whether the box was one.
func (d *dashboard) actBox(t templates.Tick, editor string) (bool, error) {
	switch t.Action {
	case templates.ActionRunNow:
		return true, d.runNow(t.Key, editor)
	case templates.ActionUnreject:
		return true, d.unreject(t.Key, editor)
	case templates.ActionController:
		return true, d.placeWriter(t.Key, drift.WriterController, editor)
	case templates.ActionPerson:
		return true, d.placeWriter(t.Key, drift.WriterPerson, editor)
	}
	return false, nil
}

// runNow asks the next cycle to diagnose every application of the dashboard at once.
func (d *dashboard) runNow(key, editor string) error {
	if key != d.runKey() {
		return nil
	}
	d.log.Info("dashboard request", "action", templates.ActionRunNow, "by", editor, "dashboard", ref(d.repo, d.issue.Number), "apps", len(d.apps))
	for _, a := range d.apps {
		if err := d.Store.Request(d.ctx, plan.AppKey(a.Instance, a.App.Namespace, a.App.Name), state.ActionRunNow, d.now); err != nil {
			return err
		}
	}
	return nil
}

// unreject forgets that a fix of one of the dashboard's applications was
// turned down, and asks for it to be proposed again: the pull request that
// was closed when it was turned down no longer counts (see proposeAgain).
func (d *dashboard) unreject(key, editor string) error {
	rejections, err := d.Store.Rejections(d.ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(rejections, func(rj state.Rejection) bool { return rj.Fix == key && d.has(rj.App) })
	if i < 0 {
		return nil
	}
	d.log.Info("dashboard request", "action", templates.ActionUnreject, "fix", key, "by", editor, "dashboard", ref(d.repo, d.issue.Number))
	if err := d.Store.Request(d.ctx, key, state.ActionUnreject, d.now); err != nil {
		return err
	}
	_, err = d.Store.Unreject(d.ctx, key)
	return err
}

// proposeAgain reports whether a person asked to propose the fix again
// since the pull request number was closed turning it down. If so, it says
// so on that pull request, in a comment that ends with closedMarker: from
// then on it reads as a pull request driftfix closed, which a new one
// replaces, even when the state database is lost.
func (p *proposal) proposeAgain(number int) (bool, error) {
	asked, err := p.Store.Requested(p.ctx, p.pr.Key, state.ActionUnreject)
	if err != nil || !asked {
		return false, err
	}
	msg := "As asked on the Drift Dashboard, driftfix proposes this fix again in a new pull request.\n\n<!-- driftfix:proposed-again -->\n" + closedMarker
	if err := p.host.Comment(p.ctx, p.repo, number, msg); err != nil {
		return false, err
	}
	return true, p.Store.ClearRequest(p.ctx, p.pr.Key, state.ActionUnreject)
}

// bothWriterBoxes drops the writer boxes of a manager ticked both "a
// controller" and "a person": the edit says two things, and neither is
// followed.
func (d *dashboard) bothWriterBoxes(ticks []templates.Tick) []templates.Tick {
	kinds := map[string]int{}
	for _, t := range ticks {
		if t.Action == templates.ActionController || t.Action == templates.ActionPerson {
			kinds[t.Key]++
		}
	}
	var out []templates.Tick
	for _, t := range ticks {
		if kinds[t.Key] > 1 {
			if t.Action == templates.ActionController {
				d.out.Skipped = append(d.out.Skipped, fmt.Sprintf("%s: both \"a controller\" and \"a person\" are ticked for one writer; neither is followed", ref(d.repo, d.issue.Number)))
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

// unplacedWriters are the field managers of the dashboard's applications' findings
// that nothing placed, sorted, with some of the fields each wrote.
func (d *dashboard) unplacedWriters() []templates.DashboardWriter {
	byManager := map[string]*templates.DashboardWriter{}
	for _, s := range d.res.Stuck {
		if !d.has(plan.AppKey(s.Instance, s.App.Namespace, s.App.Name)) {
			continue
		}
		for _, f := range s.Findings {
			for _, m := range f.Unplaced {
				if len(m) > maxManager {
					continue
				}
				w := byManager[m]
				if w == nil {
					w = &templates.DashboardWriter{Manager: m, Key: plan.WriterKey(m)}
					byManager[m] = w
				}
				if len(w.Fields) < 3 {
					w.Fields = append(w.Fields, templates.DashboardFinding{Resource: f.Resource, Path: f.Path})
				} else {
					w.More++
				}
			}
		}
	}
	var out []templates.DashboardWriter
	for _, m := range slices.Sorted(maps.Keys(byManager)) {
		if len(out) == maxWriters {
			break
		}
		out = append(out, *byManager[m])
	}
	return out
}

// boxesView fills in the dashboard's run-again box and its writers.
func (d *dashboard) boxesView(v *templates.DashboardView) error {
	v.RunKey = d.runKey()
	asked, err := d.Store.Requests(d.ctx, state.ActionRunNow)
	if err != nil {
		return err
	}
	for _, a := range d.apps {
		if _, ok := asked[plan.AppKey(a.Instance, a.App.Namespace, a.App.Name)]; ok {
			v.RunAsked = true
		}
	}
	v.Writers = d.unplacedWriters()
	pr := d.Config.PolicyRepo
	if len(v.Writers) == 0 || !pr.Set() {
		return nil
	}
	_, repo, err := d.hostFor(pr.URL)
	if err != nil {
		return nil // not a repository of a configured host: no boxes
	}
	v.PolicyFile = pr.File + " in " + repo.String()
	open := d.openWriterPRs()
	for i := range v.Writers {
		v.Writers[i].Proposed = open[v.Writers[i].Key]
	}
	return nil
}

// openWriterPRs are driftfix's open writers pull requests in the policy's
// repository, by manager key, looked up once per cycle; a failed lookup is
// logged and shows none.
func (r *run) openWriterPRs() map[string]string {
	if r.writerPRs != nil {
		return r.writerPRs
	}
	r.writerPRs = map[string]string{}
	fr := &fileRun{run: r, ctx: r.ctx}
	if err := fr.connect(r.Config.PolicyRepo.URL); err != nil {
		r.log.Warn("writers pull requests: reach the policy's repository", "error", err.Error())
		return r.writerPRs
	}
	prs, err := fr.host.OpenPRs(r.ctx, fr.repo, plan.WriterBranchPrefix(r.Config.Policy.BranchPrefix))
	if err != nil {
		r.log.Warn("writers pull requests: list the open ones", "repo", fr.repo.String(), "error", err.Error())
		return r.writerPRs
	}
	for _, gpr := range prs {
		if m := lastMarker(writersMarkerRE, gpr.Body); m != nil && gpr.Own(fr.repo, fr.login) {
			r.writerPRs[m[1]] = ref(fr.repo, gpr.Number)
		}
	}
	return r.writerPRs
}

// placeWriter proposes, in a pull request to the policy's repository, a
// writers entry that places the dashboard's writer of this key as is. Its
// branch comes from the manager and the kind: ticking the same box again
// finds the same pull request, and an entry the policy file has already
// proposes nothing. While one is open the writer's boxes are not shown.
func (d *dashboard) placeWriter(key string, is drift.WriterKind, editor string) error {
	pr := d.Config.PolicyRepo
	i := slices.IndexFunc(d.unplacedWriters(), func(w templates.DashboardWriter) bool { return w.Key == key })
	if !pr.Set() || i < 0 {
		return nil // no policy to propose to, or the writer is no longer here
	}
	manager := d.unplacedWriters()[i].Manager
	where := ref(d.repo, d.issue.Number)
	fr := &fileRun{run: d.run, ctx: d.ctx}
	if err := fr.connect(pr.URL); err != nil {
		return fmt.Errorf("the policy's repository %s: %w", pr.URL, err)
	}
	skip := func(why string) {
		d.out.Skipped = append(d.out.Skipped, fmt.Sprintf("%s: the writer %q ticked as a %s: %s", where, manager, is, why))
	}
	ok, err := d.run.canWrite(d.ctx, fr.host, fr.repo, editor)
	if err != nil {
		return err
	}
	if !ok {
		skip(fmt.Sprintf("not followed: %q cannot write to %s, where the policy is kept; only such accounts change it", editor, fr.repo))
		return nil
	}
	fh, ok := fr.host.(FileHost)
	if !ok {
		skip(fr.host.Host() + " cannot read the policy file")
		return nil
	}
	base := pr.Branch
	if base == "" {
		if base, err = fr.host.DefaultBranch(d.ctx, fr.repo); err != nil {
			return err
		}
	}
	src, err := fh.File(d.ctx, fr.repo, base, pr.File)
	if err != nil {
		return err
	}
	if src == nil {
		skip(fmt.Sprintf("there is no %s on %s of %s (policyRepo)", pr.File, base, fr.repo))
		return nil
	}
	w, err := plan.PlanWriterPR(d.Config.Policy.BranchPrefix, pr.File, src, manager, is, where, editor)
	if errors.Is(err, plan.ErrWriterPlaced) {
		skip(fmt.Sprintf("%s on %s of %s places it already: %v", pr.File, base, fr.repo, err))
		return nil
	}
	if err != nil {
		d.log.Warn("writers pull request not proposed", "dashboard", where, "error", err.Error())
		skip(fmt.Sprintf("no pull request: %v", err))
		return nil
	}
	d.log.Info("dashboard request", "action", "writer-"+string(is), "writer", w.Key, "by", editor, "dashboard", where)
	open := d.openWriterPRs()
	c := fileChange{Branch: w.Branch, Base: base, Title: w.Title, Body: w.Body, Policy: d.Config.Policy,
		File: pr.File, Before: w.Before, After: w.After, Marker: plan.WriterMarker(w.Key), Fingerprint: w.Fingerprint,
		Message: w.Title + "\n\nAs placed on the Drift Dashboard " + where + ".\n\ndriftfix-writers: " + w.Key,
		What:    "writers pull request", Waits: "driftfix reads the merged policy when it is deployed again", Dropped: "not proposed again"}
	return fr.propose(c, func(number int, _ string, merged bool) {
		if !merged {
			open[w.Key] = ref(fr.repo, number)
		}
	})
}
