package plan

import (
	"fmt"
	"sort"
	"time"

	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/fights"
	"github.com/driftfix/driftfix/bot/proposals"
)

// FightWindow is how far back self-heal syncs are counted (collect's).
const FightWindow = collect.FightWindow

// observeWrites turns a diagnosed application into what fight detection
// keeps; ok is false when nothing was read (no snapshot).
func observeWrites(cfg *config.Config, in Instance, r *collect.ScanResult, now time.Time, opts CycleOptions) (proposals.AppWrites, bool, error) {
	if r.Snapshot == nil || r.Report == nil {
		return proposals.AppWrites{}, false, nil
	}
	key := AppKey(in.Name, r.App.Namespace, r.App.Name)
	var watch []fights.Key
	if opts.Watch != nil {
		watch = opts.Watch(key)
	}
	var ws []fights.Write
	if r.Comparison != nil {
		// The diagnosis compared this snapshot already.
		ws = fights.ObserveCompared(r.Snapshot, r.Comparison, now, watch)
	} else {
		var err error
		if ws, err = fights.Observe(r.Snapshot, now, watch); err != nil {
			return proposals.AppWrites{}, false, fmt.Errorf("application %s/%s: read who writes its differing paths: %w", r.App.Namespace, r.App.Name, err)
		}
	}
	aw := proposals.AppWrites{App: key, At: now, Writes: ws, Synced: r.Fight, Policy: cfg.For(r.App.Project, r.App.Name, r.App.Namespace).Fights}
	aw.SelfHealSyncs, aw.Revision, aw.LastSync = collect.SelfHealSyncs(r.Snapshot.Application, now, collect.FightWindow)
	aw.Causes = keepFindings(r.Report.Findings, ws)
	return aw, true, nil
}

// keepFindings returns the findings as the cycle keeps them; a finding's
// path shares its text with the write at the same path, when there is one.
func keepFindings(fs []drift.Finding, ws []fights.Write) []drift.Kept {
	if len(fs) == 0 {
		return nil
	}
	var written map[fights.Key]string
	if len(ws) > 0 {
		written = make(map[fights.Key]string, len(ws))
		for _, w := range ws {
			written[fights.Key{Resource: w.Resource, Path: w.Path}] = w.Path
		}
	}
	out := make([]drift.Kept, len(fs))
	for i := range fs {
		f := &fs[i]
		path := f.Path.String()
		if p, ok := written[fights.Key{Resource: f.Resource, Path: path}]; ok {
			path = p
		}
		out[i] = f.Keep(path)
	}
	return out
}

// sortWrites orders the applications' writes by application, so that what
// is recorded does not depend on the order workers finished in.
func (res *CycleResult) sortWrites() {
	sort.Slice(res.Writes, func(i, j int) bool { return res.Writes[i].App < res.Writes[j].App })
}
