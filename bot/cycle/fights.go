package cycle

import (
	"fmt"
	"sort"
	"time"

	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/fights"
)

// FightWindow is how far back self-heal syncs are counted (collect's).
const FightWindow = collect.FightWindow

// AppWrites is what one cycle saw of an examined application, to tell a
// fight from: the value fingerprint and writer at each differing or watched
// path, the causes the diagnosis found there, and the self-heal syncs in
// Argo CD's history. The cycle keeps nothing; the publisher records it.
type AppWrites struct {
	App    string // AppKey
	Writes []fights.Write
	Causes []PathCause
	// SelfHealSyncs counts the automated syncs of Revision within
	// collect.FightWindow before the cycle; LastSync is the last of them.
	SelfHealSyncs int
	Revision      string
	LastSync      time.Time
	// Synced says the application was Synced (self-heal had just written
	// Git's value back) when it was read.
	Synced bool
	Policy config.Fights
}

// PathCause is a finding at one path: its cause, the fix the diagnosis
// names for it, and the field manager that wrote the live value.
type PathCause struct {
	Resource drift.Ref
	Path     string
	Cause    drift.Cause
	Fix      drift.FixKind
	Writer   string
}

// observeWrites turns a diagnosed application into what fight detection
// keeps; ok is false when nothing was read (no snapshot).
func observeWrites(cfg *config.Config, in Instance, r *collect.ScanResult, now time.Time, opts CycleOptions) (AppWrites, bool, error) {
	if r.Snapshot == nil || r.Report == nil {
		return AppWrites{}, false, nil
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
			return AppWrites{}, false, fmt.Errorf("application %s/%s: read who writes its differing paths: %w", r.App.Namespace, r.App.Name, err)
		}
	}
	aw := AppWrites{App: key, Writes: ws, Synced: r.Fight, Policy: cfg.For(r.App.Project, r.App.Name, r.App.Namespace).Fights}
	aw.SelfHealSyncs, aw.Revision, aw.LastSync = collect.SelfHealSyncs(r.Snapshot.Application, now, collect.FightWindow)
	if len(r.Report.Findings) > 0 {
		aw.Causes = make([]PathCause, 0, len(r.Report.Findings))
	}
	// A finding's path is most often one of the writes' paths: the cycle
	// keeps both, so they share the string.
	var written map[fights.Key]string
	if len(ws) > 0 && len(r.Report.Findings) > 0 {
		written = make(map[fights.Key]string, len(ws))
		for _, w := range ws {
			written[fights.Key{Resource: w.Resource, Path: w.Path}] = w.Path
		}
	}
	for _, f := range r.Report.Findings {
		path := f.Path.String()
		if p, ok := written[fights.Key{Resource: f.Resource, Path: path}]; ok {
			path = p
		}
		pc := PathCause{Resource: f.Resource, Path: path, Cause: f.Cause, Fix: f.Remediation.Kind}
		if len(f.Owners) > 0 {
			pc.Writer = f.Owners[len(f.Owners)-1].Manager
		}
		aw.Causes = append(aw.Causes, pc)
	}
	return aw, true, nil
}

// sortWrites orders the applications' writes by application, so that what
// is recorded does not depend on the order workers finished in.
func (res *CycleResult) sortWrites() {
	sort.Slice(res.Writes, func(i, j int) bool { return res.Writes[i].App < res.Writes[j].App })
}
