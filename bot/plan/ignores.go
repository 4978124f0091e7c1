package plan

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// IgnoreInventory is the ignore-rule inventory of one instance this cycle,
// taken when the policy sets ignoreRules.
type IgnoreInventory struct {
	Instance string
	// Lines are the rules it flags: covering a sensitive path, hiding
	// nothing, or broader than what they hide.
	Lines []templates.IgnoreLine
	// Keys are the ignore-rule pull requests (by key) still wanted: every
	// file with a rule that hides nothing or is broad. An open one whose key
	// is not among them is no longer needed.
	Keys []string
	// Complete says every application a rule can apply to was read, so
	// what hides nothing is known.
	Complete bool
}

// inventorySnap is an application read for the inventory.
type inventorySnap struct {
	s      *drift.Snapshot
	report *drift.Report // its diagnosis, when the cycle made one
}

// wantsInventory reports whether an application's snapshot is needed for
// the inventory: it declares rules, or argocd-cm does.
func wantsInventory(a argocd.AppSummary, system bool) bool { return system || a.IgnoreRules > 0 }

// inventoryReaders bound the snapshots the inventory reads at once, as the
// scan's workers do.
const inventoryReaders = 8

// inventory takes the ignore-rule inventory of an instance: the snapshots
// the cycle diagnosed, and one more snapshot (no refresh) per listed
// application a rule can apply to. It records since when each rule hid
// nothing, and plans the pull requests that remove the rules stale for the
// policy's staleAfter and narrow the broad ones.
func (res *CycleResult) inventory(ctx context.Context, cfg *config.Config, in Instance, cluster func(*drift.Snapshot) []drift.Object,
	listed []argocd.AppSummary, kept map[string]inventorySnap, failed int, now time.Time, opts CycleOptions) {
	settings, err := in.Client.Settings(ctx)
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("ignore-rule inventory of %s: %w", in.Name, err))
		return
	}
	clusters := [][]drift.Object{{settings.ConfigMap()}}
	for _, k := range kept {
		clusters = append(clusters, k.s.Cluster)
	}
	system := remediations.SystemRules(clusters...)
	// The applications not diagnosed this cycle are read in inventoryReaders
	// at once; the snapshots keep the list's order.
	type read struct {
		app  argocd.AppSummary
		snap inventorySnap
		err  error
	}
	var reads []read
	for _, a := range listed {
		if !inShard(in.Shard, a.Name) || a.CannotCompare {
			continue
		}
		if k, ok := kept[a.Namespace+"/"+a.Name]; ok {
			reads = append(reads, read{app: a, snap: k})
		} else if wantsInventory(a, system) {
			reads = append(reads, read{app: a})
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < inventoryReaders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				a := reads[i].app
				s, err := in.Client.Snapshot(ctx, a.Namespace, a.Name, argocd.SnapshotOptions{Settings: &settings})
				if err == nil && cluster != nil {
					collect.AddClusterContext(s, cluster(s))
				}
				if err == nil && in.RepoFiles != nil {
					s.Repo.Files, err = in.RepoFiles(ctx, s)
				}
				reads[i].snap, reads[i].err = inventorySnap{s: s}, err
			}
		}()
	}
	for i := range reads {
		if reads[i].snap.s == nil {
			jobs <- i
		}
	}
	close(jobs)
	wg.Wait()
	var snaps []inventorySnap
	for _, r := range reads {
		if r.err != nil {
			failed++
			res.Errors = append(res.Errors, fmt.Errorf("ignore-rule inventory: application %s/%s: %w", r.app.Namespace, r.app.Name, r.err))
			continue
		}
		snaps = append(snaps, r.snap)
	}
	if len(snaps) == 0 {
		res.Ignores = append(res.Ignores, IgnoreInventory{Instance: in.Name, Complete: failed == 0})
		return
	}
	if err := res.judgeRules(ctx, cfg, in, snaps, now, opts, failed == 0, system); err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("ignore-rule inventory of %s: %w", in.Name, err))
	}
}

// judgeRules judges an instance's rules (remediations.RuleInventory) over
// the applications read, then reads each file to change and plans its
// pull request.
func (res *CycleResult) judgeRules(ctx context.Context, cfg *config.Config, in Instance, snaps []inventorySnap, now time.Time, opts CycleOptions, complete, allApps bool) error {
	inv := &remediations.RuleInventory{Instance: in.Name, Sensitivity: cfg.Policy.Sensitivity(), Now: now, Stale: cfg.Policy.IgnoreRules.Stale(),
		Complete: complete, AllApps: allApps, Diagnose: pipeline.Diagnose}
	for _, k := range snaps {
		inv.Snaps = append(inv.Snaps, remediations.RuleSnap{Snapshot: k.s, Report: k.report, Sensitivity: policyOf(cfg, k.s).Sensitivity()})
	}
	if repo, ok := cfg.Platform(in.Name); ok {
		inv.Platform = &remediations.PlatformFile{URL: repo.URL, File: repo.File, Branch: repo.Branch}
	}
	if opts.RuleIdle != nil {
		inv.RuleIdle = func(rule string, idle bool) time.Time { return opts.RuleIdle(in.Name, rule, idle) }
	}
	if in.RepoFiles != nil {
		inv.Fix = func(s *drift.Snapshot) ([]remediations.Plan, error) {
			pol := policyOf(cfg, s)
			fo := pipeline.FixOptions{Sensitivity: pol.Sensitivity(), Now: now, Render: proposals.RenderLimits(cfg.Limits), Decide: pol.Decide}
			_, plans, err := pipeline.FixWith(s, remediations.RepoFromSnapshot(s), fo)
			return plans, err
		}
	}
	rep, err := inv.Judge()
	if err != nil {
		return err
	}
	res.Ignores = append(res.Ignores, IgnoreInventory{Instance: in.Name, Lines: rep.Lines, Keys: rep.Keys, Complete: complete})
	res.Skipped = append(res.Skipped, rep.Skipped...)
	res.Errors = append(res.Errors, rep.Errors...)
	for _, f := range rep.Files {
		pr, why, err := planRules(ctx, cfg, in, inv, f)
		switch {
		case err != nil:
			res.Errors = append(res.Errors, fmt.Errorf("ignore rules in %s of %s: %w", f.File, f.Repo, err))
		case why != "":
			res.Skipped = append(res.Skipped, fmt.Sprintf("ignore rules in %s of %s: %s", f.File, f.Repo, why))
		default:
			res.IgnorePRs = append(res.IgnorePRs, pr)
		}
	}
	return nil
}

// planRules reads one file that declares rules and plans its pull request;
// a change that is not proposed comes back with why.
func planRules(ctx context.Context, cfg *config.Config, in Instance, inv *remediations.RuleInventory, f *remediations.RuleFile) (proposals.IgnorePR, string, error) {
	if in.BranchFiles == nil {
		return proposals.IgnorePR{}, "the repository cannot be read (no Git access configured)", nil
	}
	base := f.Base
	if base == "" {
		base = "HEAD"
	}
	files, _, err := in.BranchFiles(ctx, f.Repo, base)
	if err != nil {
		return proposals.IgnorePR{}, "", fmt.Errorf("read %s: %w", f.Repo, err)
	}
	src, ok := files[f.File]
	if !ok {
		return proposals.IgnorePR{}, fmt.Sprintf("%s has no file %s", f.Repo, f.File), nil
	}
	c, why, err := inv.Change(f, src)
	if err != nil || why != "" {
		return proposals.IgnorePR{}, why, err
	}
	pol := cfg.Policy
	return proposals.IgnorePR{Instance: in.Name, Key: c.Key, Fingerprint: c.Fingerprint, RepoURL: f.Repo, Base: f.Base,
		Branch: templates.IgnoreBranch(pol.BranchPrefix, in.Name, c.Key), Title: templates.IgnorePRTitle(c.View),
		Body: templates.IgnorePRBody(c.View) + templates.IgnoreMarker(c.Key), Policy: pol, File: f.File, Before: c.Before, After: c.After, Rules: c.Rules, Holds: c.Holds}, "", nil
}

// policyOf is the policy of a snapshot's application.
func policyOf(cfg *config.Config, s *drift.Snapshot) config.Policy {
	app := s.Application
	return cfg.For(drift.Str(app, "spec", "project"), drift.Str(app, "metadata", "name"), drift.Str(app, "metadata", "namespace"))
}
