package publish

import (
	"context"
	"fmt"
	"time"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// checkStore remembers the check published on each fix pull request's head.
type checkStore interface {
	// CheckFor is the check last published on a fix's pull request head.
	CheckFor(ctx context.Context, fingerprint string) (state.Checked, bool, error)
	// SaveCheck remembers the check published on a fix's pull request head.
	SaveCheck(ctx context.Context, fingerprint string, c state.Checked, now time.Time) error
}

// publishCheck publishes the check of the pull request's head commit: the
// cycle's check when it read that very commit, or the plan's own check when
// driftfix has just made the branch hold the plan's files (pushed). A head
// the cycle did not read (a person pushed since) is checked next cycle. A
// check is published again only when the commit or what it says changed, or
// a /driftfix recheck asked.
func (p *proposal) publishCheck(head string, pushed bool) error {
	if head == "" {
		return nil
	}
	hc, planned := p.pr.Check, false
	if hc == nil || hc.SHA != head {
		if !pushed {
			return nil
		}
		c := p.pr.Planned
		hc, planned = &c, true
	}
	old, ok, err := p.Store.CheckFor(p.ctx, p.pr.Key)
	if err != nil {
		return err
	}
	asked, err := p.Store.Requested(p.ctx, p.pr.Key, state.ActionRecheck) // /driftfix recheck, or a box ticked on the dashboard
	if err != nil {
		return err
	}
	if ok && old.SHA == head && old.Digest == hc.Digest && !asked {
		return nil
	}
	ck := githost.Check{Name: templates.CheckName, Success: hc.Success, Title: hc.Title, Summary: hc.Summary, Text: hc.Text, DetailsURL: hc.DetailsURL}
	if err := p.host.SetCheck(p.ctx, p.repo, head, ck); err != nil {
		return err
	}
	p.out.Checked = append(p.out.Checked, ref(p.repo, p.rec.Number))
	if asked {
		if err := p.Store.ClearRequest(p.ctx, p.pr.Key, state.ActionRecheck); err != nil {
			return err
		}
	}
	return p.Store.SaveCheck(p.ctx, p.pr.Key, state.Checked{SHA: head, Digest: hc.Digest, Planned: planned, Success: hc.Success}, p.now)
}

// OpenPRs says whether a fix (by key) has an open pull request driftfix
// knows of, for cycle.CycleOptions.Open: the cycle reads and checks its head.
func (p *Publisher) OpenPRs(ctx context.Context) func(key string) bool {
	return func(key string) bool {
		if p.Store == nil || len(p.Hosts) == 0 {
			return false
		}
		pr, ok, err := p.Store.PRFor(ctx, key)
		return err == nil && ok && pr.State == state.PROpen
	}
}

// coolingDown says why a fix's first pull request waits: its application
// has not been OutOfSync for the policy's minStuckFor since its last sync
// (or since driftfix first proposed the fix, when that is earlier), or
// driftfix has proposed the fix in fewer than minCycles cycles. A fix with
// a pull request already does not wait.
func (p *proposal) coolingDown(seen state.Sighting) (string, error) {
	if old, ok, err := p.Store.PRFor(p.ctx, p.pr.Key); err != nil || (ok && old.State != state.PRClosed) {
		return "", err
	}
	if now, err := p.Store.Requested(p.ctx, p.pr.Key, state.ActionOpenNow); err != nil || now {
		return "", err // a person ticked "open the fix PR now" on the dashboard
	}
	if now, err := p.Store.Requested(p.ctx, cycle.AppKey(p.pr.Instance, p.pr.Namespace, p.pr.App), state.ActionRunNow); err != nil || now {
		return "", err // a person ticked "run again now" on the dashboard
	}
	wait, cycles := p.pr.Policy.Cooldown()
	since := seen.First
	if a, ok := p.apps[cycle.AppKey(p.pr.Instance, p.pr.Namespace, p.pr.App)]; ok && !a.App.OperationFinished.IsZero() && a.App.OperationFinished.Before(since) {
		since = a.App.OperationFinished
	}
	if stuck := p.now.Sub(since); stuck < wait || seen.Cycles < cycles {
		return fmt.Sprintf("cooling down: OutOfSync for %s and proposed in %d %s; the first pull request waits for %s and %d %s (policy minStuckFor, minCycles)",
			stuck.Round(time.Second), seen.Cycles, plural(seen.Cycles, "cycle", "cycles"), wait, cycles, plural(cycles, "cycle", "cycles")), nil
	}
	return "", nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
