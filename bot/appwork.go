package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/publish"
)

// DiagnoseApp diagnoses one application (by plan.AppKey) now, as a cycle
// would (the policy's stuckAfter decides whether it is stuck), reading
// only that application: its instance's client lists it alone, from the
// watch stream or the last list. The result publishes nothing: pull
// requests and the digest come from whole cycles.
func DiagnoseApp(ctx context.Context, cfg *config.Config, instances []plan.Instance, appKey string, now time.Time) (plan.CycleResult, error) {
	id := plan.ParseAppKey(appKey)
	for _, in := range instances {
		if in.Name != id.Instance {
			continue
		}
		view, ok := in.Client.Only(id.Namespace, id.Name)
		if !ok {
			return plan.CycleResult{}, fmt.Errorf("application %s: its instance does not show it (yet): %w", appKey, publish.ErrNotWatched)
		}
		in.Client = view
		res := plan.Cycle(ctx, cfg, []plan.Instance{in}, now, plan.CycleOptions{})
		err := errors.Join(res.Errors...)
		if errors.Is(err, argocd.ErrNotFound) && len(res.Stuck) == 0 {
			// Read afresh (no stream open), argocd-server does not show it.
			return res, fmt.Errorf("application %s: Argo CD does not show it: %w", appKey, publish.ErrNotWatched)
		}
		return res, err
	}
	return plan.CycleResult{}, fmt.Errorf("application %s: no instance %q in the policy: %w", appKey, id.Instance, publish.ErrNotWatched)
}

// doApp diagnoses the application an App unit names; a stuck one with a
// fix to propose asks for the cycle that publishes it, one not stuck yet
// for the cycle after its stuckAfter. The caller holds busy.
func (r *Runner) doApp(ctx context.Context, w events.Work) error {
	now := time.Now()
	res, err := DiagnoseApp(ctx, r.Config, r.Instances, w.App, now)
	if err != nil {
		return err
	}
	log := r.log()
	if len(res.Stuck) == 0 {
		if d := w.At.Add(r.Config.Policy.StuckAfter).Sub(now); d > 0 {
			log.Info("application re-checked: not stuck yet", "app", w.App, "cycle_in", d.Round(time.Second).String(), "delivery", w.Delivery)
			r.CycleSoon(d)
			return nil
		}
		log.Info("application re-checked: not stuck (Argo CD shows it Synced, or its last sync did not succeed)", "app", w.App, "delivery", w.Delivery)
		return nil
	}
	s := res.Stuck[0]
	log.Info("application diagnosed", "app", w.App, "why", s.Why, "diagnosed", s.Diagnosed, "findings", len(s.Findings), "fixes", len(res.PRs), "delivery", w.Delivery)
	if len(res.PRs) > 0 {
		r.CycleSoon(0) // the cycle publishes the fix
	}
	return nil
}
