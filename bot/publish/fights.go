package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/fights"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// fightStore keeps what telling fights needs across cycles: the causes,
// writes and self-heal syncs seen, and the fights already told.
type fightStore interface {
	// Causes are the causes last seen on an application's paths.
	Causes(ctx context.Context, app string) ([]state.PathCause, error)
	// RecordCauses records the causes seen on paths.
	RecordCauses(ctx context.Context, cs []state.PathCause) error
	// PruneCauses forgets causes seen before a time.
	PruneCauses(ctx context.Context, before time.Time) error
	// FightIsReported remembers that a fight was told.
	FightIsReported(ctx context.Context, fight, app string, at time.Time) error
	// FightReported reports whether and when a fight was told.
	FightReported(ctx context.Context, fight string) (time.Time, bool, error)
	// RecordSelfHeal records an application's self-heal count.
	RecordSelfHeal(ctx context.Context, app string, c state.SelfHealCount) error
	// SelfHealSince are an application's self-heal counts since a time.
	SelfHealSince(ctx context.Context, app string, since time.Time) ([]state.SelfHealCount, error)
	// PruneSelfHeal forgets self-heal counts before a time.
	PruneSelfHeal(ctx context.Context, before time.Time) error
	// Writes are the writes seen on an application's paths since a time.
	Writes(ctx context.Context, app string, since time.Time) ([]state.PathWrite, error)
	// RecordWrites records writes seen on paths.
	RecordWrites(ctx context.Context, ws []state.PathWrite) error
	// PruneWrites forgets writes seen before a time.
	PruneWrites(ctx context.Context, before time.Time) error
}

// FightHistory is how long the writes seen at each path are kept to tell a
// fight from.
const FightHistory = 24 * time.Hour

// SelfHealManager is the field manager Argo CD's application controller
// writes with when it syncs, self-heal included: server-side apply uses it
// (common.ArgoCDSSAManager) and gitops-engine sends it as the fieldManager of
// client-side applies too.
const SelfHealManager = "argocd-controller"

// Watch returns, for CycleOptions.Watch, the paths of an application seen in
// the cycles of the last FightHistory: a path self-heal has just written
// back differs no more, and is observed again. A failed read watches none.
func (p *Publisher) Watch(ctx context.Context, now time.Time) func(appKey string) []fights.Key {
	return func(appKey string) []fights.Key {
		ws, err := p.readWrites(ctx, appKey, now)
		if err != nil {
			if p.Log != nil {
				p.Log.Warn("fights: read the paths to watch", "app", appKey, "error", err.Error())
			}
			return nil
		}
		return fights.Watched(ws)
	}
}

// readWrites reads back what the cycles of the last FightHistory saw.
func (p *Publisher) readWrites(ctx context.Context, appKey string, now time.Time) ([]fights.Write, error) {
	ps, err := p.Store.Writes(ctx, appKey, now.Add(-FightHistory))
	if err != nil {
		return nil, err
	}
	out := make([]fights.Write, 0, len(ps))
	for _, w := range ps {
		var ref drift.Ref
		if err := json.Unmarshal([]byte(w.Resource), &ref); err != nil {
			return nil, fmt.Errorf("read path writes of %s: resource %q: %w", appKey, w.Resource, err)
		}
		out = append(out, fights.Write{Resource: ref, Path: w.Path, At: w.At, Value: w.Value, Manager: w.Manager})
	}
	return out, nil
}

func refKey(r drift.Ref) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// fights records what each examined application showed, tells the fights
// from what the state holds, and puts each fight in its digest the first
// time it is told; the Drift Dashboard shows every fight told this cycle.
func (r *run) fights() {
	r.fightLines = map[string][]templates.FightLine{}
	if r.Store == nil {
		return
	}
	for _, aw := range r.res.Writes {
		if a, ok := r.apps[aw.App]; ok && aw.Synced {
			// Synced only because self-heal wrote Git's value back a moment
			// ago: its pull requests are neither fixed nor to be closed.
			a.Failed = true
			r.apps[aw.App] = a
		}
		lines, err := r.fightsOf(aw)
		if err != nil {
			r.fail(err)
			continue
		}
		r.fightLines[aw.App] = lines
		for _, l := range lines {
			key := fightKey(aw.App, l)
			_, reported, err := r.Store.FightReported(r.ctx, key)
			if err != nil {
				r.fail(err)
				continue
			}
			if reported {
				continue
			}
			v := r.digests.forApp(aw.App)
			v.Fights = append(v.Fights, l)
			if err := r.Store.FightIsReported(r.ctx, key, aw.App, r.now); err != nil {
				r.fail(err)
			}
			r.log.Info("fight", "app", aw.App, "resource", l.Resource.String(), "writers", strings.Join(l.Writers[:], ","), "flips", l.Flips, "syncs", l.Syncs)
		}
	}
	for _, prune := range []func(context.Context, time.Time) error{r.Store.PruneWrites, r.Store.PruneCauses, r.Store.PruneSelfHeal} {
		if err := prune(r.ctx, r.now.Add(-FightHistory)); err != nil {
			r.fail(err)
		}
	}
}

// fightKey names a fight across cycles: its application, resource and writers.
func fightKey(app string, l templates.FightLine) string {
	return app + "\x00" + refKey(l.Resource) + "\x00" + l.Writers[0] + "\x00" + l.Writers[1]
}

// fightsOf records one application's writes and causes and tells its fights:
// two writers taking turns at a path (minFlips), or, failing that, self-heal
// syncing one revision more than maxSelfHealSyncsPerHour times (counted
// within the last hour, see collect.SelfHealSyncs) or at more than that rate
// an hour across cycles, against the writers the diagnosis named at its
// differing paths (none named yet: not told yet).
func (r *run) fightsOf(aw cycle.AppWrites) ([]templates.FightLine, error) {
	var ps []state.PathWrite
	for _, w := range aw.Writes {
		ps = append(ps, state.PathWrite{App: aw.App, Resource: refKey(w.Resource), Path: w.Path, At: aw.At, Value: w.Value, Manager: w.Manager})
	}
	if err := r.Store.RecordWrites(r.ctx, ps); err != nil {
		return nil, err
	}
	var cs []state.PathCause
	for _, c := range aw.Causes {
		cs = append(cs, state.PathCause{App: aw.App, Resource: refKey(c.Resource), Path: c.Path, Cause: string(c.Cause), Fix: string(c.Fix), Writer: c.Writer, At: r.now})
	}
	if err := r.Store.RecordCauses(r.ctx, cs); err != nil {
		return nil, err
	}
	perHour, err := r.selfHealRate(aw)
	if err != nil {
		return nil, err
	}
	ws, err := r.readWrites(r.ctx, aw.App, r.now)
	if err != nil {
		return nil, err
	}
	causes, err := r.Store.Causes(r.ctx, aw.App)
	if err != nil {
		return nil, err
	}
	id := cycle.ParseAppKey(aw.App)
	base := templates.FightLine{App: id.Name, Namespace: id.Namespace, Instance: id.Instance, Syncs: aw.SelfHealSyncs, PerHour: perHour}
	var out []templates.FightLine
	for _, f := range fights.Detect(ws, aw.Policy.Flips()) {
		l := base
		l.Resource, l.Paths, l.Writers, l.Last, l.Flips = f.Resource, f.Paths, f.Writers, f.Last, f.Flips
		l.Cause, l.Fix = otherCause(causes, refKey(f.Resource), f.Paths, f.Writers)
		out = append(out, l)
	}
	if len(out) > 0 || (aw.SelfHealSyncs <= aw.Policy.SyncsPerHour() && perHour <= aw.Policy.SyncsPerHour()) {
		return out, nil
	}
	// Told from the syncs alone: one fight per resource and writer the
	// diagnosis named within the last hour (none named: one without).
	type group struct {
		res, writer string
		paths       []string
		c           state.PathCause
	}
	var groups []*group
	for _, c := range causes {
		if r.now.Sub(c.At) > cycle.FightWindow || c.Writer == SelfHealManager {
			continue
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.res == c.Resource && g.writer == c.Writer })
		if i < 0 {
			groups = append(groups, &group{res: c.Resource, writer: c.Writer, c: c})
			i = len(groups) - 1
		}
		groups[i].paths = append(groups[i].paths, c.Path)
	}
	if len(groups) == 0 {
		// Self-heal keeps syncing, but no cycle has caught the application
		// OutOfSync to name what it fights: told once it is named, as one
		// fight, not now as a fight of no resource and then again.
		r.log.Info("self-heal keeps syncing one revision; the writer it fights is not named yet", "app", aw.App, "syncs", aw.SelfHealSyncs, "perHour", perHour)
		return nil, nil
	}
	for _, g := range groups {
		l := base
		if g.res != "" {
			if err := json.Unmarshal([]byte(g.res), &l.Resource); err != nil {
				return nil, fmt.Errorf("fights of %s: resource %q: %w", aw.App, g.res, err)
			}
		}
		l.Paths, l.Cause, l.Fix = g.paths, drift.Cause(g.c.Cause), drift.FixKind(g.c.Fix)
		l.Writers = [2]string{SelfHealManager, g.writer}
		sort.Strings(l.Writers[:])
		for i, w := range l.Writers {
			if w == SelfHealManager {
				l.Last[i] = aw.LastSync
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// otherCause is the cause the diagnosis found at the fought paths for the
// writer that is not Argo CD's self-heal (the first such path that has one).
func otherCause(causes []state.PathCause, res string, paths []string, writers [2]string) (drift.Cause, drift.FixKind) {
	var fallback *state.PathCause
	for i, c := range causes {
		if c.Resource != res || !slices.Contains(paths, c.Path) {
			continue
		}
		if c.Writer != SelfHealManager && (c.Writer == writers[0] || c.Writer == writers[1]) {
			return drift.Cause(c.Cause), drift.FixKind(c.Fix)
		}
		if fallback == nil {
			fallback = &causes[i]
		}
	}
	if fallback != nil {
		return drift.Cause(fallback.Cause), drift.FixKind(fallback.Fix)
	}
	return "", ""
}

// selfHealRate records this cycle's count of self-heal syncs and returns the
// syncs an hour since the oldest count of the same revision within the last
// hour (at least a minute ago); 0 when no such count is kept, or Argo CD's
// count started again.
func (r *run) selfHealRate(aw cycle.AppWrites) (int, error) {
	if aw.SelfHealSyncs == 0 {
		return 0, nil
	}
	before, err := r.Store.SelfHealSince(r.ctx, aw.App, r.now.Add(-cycle.FightWindow))
	if err != nil {
		return 0, err
	}
	if err := r.Store.RecordSelfHeal(r.ctx, aw.App, state.SelfHealCount{At: r.now, Revision: aw.Revision, Syncs: aw.SelfHealSyncs}); err != nil {
		return 0, err
	}
	for _, c := range before {
		elapsed := r.now.Sub(c.At)
		if c.Revision != aw.Revision || elapsed < time.Minute || c.Syncs > aw.SelfHealSyncs {
			continue
		}
		return int(float64(aw.SelfHealSyncs-c.Syncs)/elapsed.Hours() + 0.5), nil
	}
	return 0, nil
}
