package publish

import (
	"context"
	"fmt"
	"time"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// snoozeStore reads the applications snoozed from the digest.
type snoozeStore interface {
	// AppSnoozes are the applications snoozed at now, by key.
	AppSnoozes(ctx context.Context, now time.Time) (map[string]state.AppSnooze, error)
	// AppSnoozed reports whether an application is snoozed at now.
	AppSnoozed(ctx context.Context, app string, now time.Time) (state.AppSnooze, bool, error)
}

// buttons reports whether digests carry Open, Snooze and Recheck buttons:
// when the policy names someone who may press them.
func (d *digests) buttons() bool {
	return len(d.Config.Slack.People)+len(d.Config.Slack.ActorGroups) > 0
}

// dropSnoozed takes the lines of applications snoozed from the digest
// (state.Store.SnoozeApp) out of this cycle's digests: newly stuck,
// left for people, cannot compare, and fix pull requests opened or
// updated. What ends a story (merged, closed, synced again) is still told.
func (r *run) dropSnoozed() {
	snoozed, err := r.Store.AppSnoozes(r.ctx, r.now)
	if err != nil {
		r.fail(err)
		return
	}
	if len(snoozed) == 0 {
		return
	}
	off := func(instance, namespace, app string) bool {
		_, ok := snoozed[cycle.AppKey(instance, namespace, app)]
		return ok
	}
	apps := func(lines []templates.AppLine) []templates.AppLine {
		kept := lines[:0]
		for _, l := range lines {
			if !off(l.Instance, l.Namespace, l.App) {
				kept = append(kept, l)
			}
		}
		return kept
	}
	prs := func(lines []templates.PRLine) []templates.PRLine {
		kept := lines[:0]
		for _, l := range lines {
			if !off(l.Instance, l.Namespace, l.App) {
				kept = append(kept, l)
			}
		}
		return kept
	}
	for _, v := range r.digests.views {
		v.NewStuck, v.CannotCompare = apps(v.NewStuck), apps(v.CannotCompare)
		v.Opened, v.Updated = prs(v.Opened), prs(v.Updated)
		people := v.ForPeople[:0]
		for _, l := range v.ForPeople {
			if !off(l.Instance, l.Namespace, l.App) {
				people = append(people, l)
			}
		}
		v.ForPeople = people
	}
}

// appSnoozed says why the proposal's application is snoozed from the
// digest, or "" when it is not: while it is, its fix pull request is
// neither opened nor updated (an open one stays open).
func (p *proposal) appSnoozed() (string, error) {
	s, on, err := p.Store.AppSnoozed(p.ctx, cycle.AppKey(p.pr.Instance, p.pr.Namespace, p.pr.App), p.now)
	if err != nil || !on {
		return "", err
	}
	return fmt.Sprintf("snoozed from the Slack digest by %s, until %s", s.By, s.Until.UTC().Format(time.RFC3339)), nil
}
