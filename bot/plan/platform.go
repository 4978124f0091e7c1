package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// keepForPlatform keeps the snapshot and the whole report of an application
// whose findings a platform fix may end, when the instance has a platform
// repository: the fix is planned from its findings and verified by
// re-diagnosing it.
func (res *CycleResult) keepForPlatform(cfg *config.Config, instance string, r *collect.ScanResult) {
	if r.Snapshot == nil || r.Report == nil {
		return
	}
	if _, ok := cfg.Platform(instance); !ok {
		return
	}
	for _, f := range r.Report.Findings {
		if _, ok := remediations.PlatformSource(f); ok {
			if res.platform == nil {
				res.platform = map[string]remediations.PlatformApp{}
			}
			res.platform[AppKey(instance, r.App.Namespace, r.App.Name)] = remediations.PlatformApp{Snapshot: r.Snapshot, Report: r.Report,
				Sensitivity: cfg.For(drift.Str(r.Snapshot.Application, "spec", "project"), r.App.Name, r.App.Namespace).Sensitivity()}
			return
		}
	}
}

// planPlatform proposes one platform pull request per shared finding of an
// instance with a platform repository, verified by re-diagnosing every
// application it fixes with the changed argocd-cm.
func (res *CycleResult) planPlatform(ctx context.Context, cfg *config.Config, instances []Instance) {
	defer func() { res.platform = nil }()
	for _, in := range instances {
		repo, ok := cfg.Platform(in.Name)
		if !ok || slices.Contains(res.FailedInstances, in.Name) {
			continue
		}
		min := repo.FleetMin
		if min == 0 {
			min = FleetMin
		}
		apps := map[string]remediations.PlatformApp{}
		for k, a := range res.platform {
			if ParseAppKey(k).Instance == in.Name {
				apps[k] = a
			}
		}
		var order []string
		for _, r := range res.Stuck {
			if r.Instance == in.Name {
				order = append(order, AppKey(in.Name, r.App.Namespace, r.App.Name))
			}
		}
		for _, g := range remediations.FleetGroups(in.Name, order, apps, min) {
			res.PlatformShared = append(res.PlatformShared, g.Key())
			pr, why, err := res.planGroup(ctx, cfg, in, repo, g, apps)
			switch {
			case err != nil:
				res.Errors = append(res.Errors, fmt.Errorf("platform fix for %s: %w", g.Name(), err))
			case why != "":
				res.Skipped = append(res.Skipped, fmt.Sprintf("platform fix for %s on %s: %s", g.Name(), in.Name, why))
			default:
				res.Platform = append(res.Platform, pr)
			}
		}
	}
	slices.SortFunc(res.Platform, func(a, b proposals.PlatformPR) int { return strings.Compare(a.Branch, b.Branch) })
}

// planGroup plans, edits and verifies one shared finding's platform fix
// (remediations.FleetGroup), reading the platform repository's file; a fix
// that is not proposed comes back with why.
func (res *CycleResult) planGroup(ctx context.Context, cfg *config.Config, in Instance, repo config.PlatformRepo, g *remediations.FleetGroup, apps map[string]remediations.PlatformApp) (proposals.PlatformPR, string, error) {
	rule, why := g.Rule(apps)
	if why != "" {
		return proposals.PlatformPR{}, why, nil
	}
	if in.BranchFiles == nil {
		return proposals.PlatformPR{}, "the platform repository cannot be read (no Git access configured)", nil
	}
	base := repo.Branch
	if base == "" {
		base = "HEAD"
	}
	files, _, err := in.BranchFiles(ctx, repo.URL, base)
	if err != nil {
		return proposals.PlatformPR{}, "", fmt.Errorf("read platform repository %s: %w", repo.URL, err)
	}
	src, ok := files[repo.File]
	if !ok {
		return proposals.PlatformPR{}, fmt.Sprintf("%s has no file %s", repo.URL, repo.File), nil
	}
	edit, verified, why, err := g.Edit(repo.File, []byte(src), rule, apps, pipeline.Diagnose)
	if err != nil || why != "" {
		return proposals.PlatformPR{}, why, err
	}
	proofs, why := g.Proofs(apps)
	if why != "" {
		return proposals.PlatformPR{}, why, nil
	}
	return res.proposePlatform(cfg, in, repo, g, edit, verified, proofs)
}

// proposePlatform turns a verified change into its pull request, listing
// each application's proof (remediations.FleetGroup.Proofs), and holds
// back the per-application fixes of the same finding.
func (res *CycleResult) proposePlatform(cfg *config.Config, in Instance, repo config.PlatformRepo, g *remediations.FleetGroup, e remediations.PlatformEdit, verified string, proofs map[string][]templates.PlatformProofView) (proposals.PlatformPR, string, error) {
	key, apps := g.Key(), g.Apps()
	h := sha256.New()
	for _, s := range append([]string{key, repo.URL, e.File, string(e.After)}, apps...) { // a new application changes the body
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	fp := hex.EncodeToString(h.Sum(nil))[:12]
	v := templates.PlatformPRView{Instance: in.Name, ArgoCDURL: in.URL, Source: g.Name(), Cause: g.Cause, Key: e.Rule.Key(),
		File: e.File, Style: string(e.Style), Rule: e.Rule.Value(), Diff: remediations.UnifiedDiff(e.File, e.Before, e.After),
		Verification: verified, Fingerprint: fp}
	fixed := map[string]bool{}
	for _, app := range apps {
		id := ParseAppKey(app)
		av := templates.PlatformAppView{App: id.Name, Namespace: id.Namespace, Proofs: proofs[app]}
		for _, f := range g.Findings[app] {
			av.Paths = append(av.Paths, f.Resource.String()+" "+f.Path.String())
			fixed[app+"\x00"+f.Resource.String()+"\x00"+f.Path.String()] = true
		}
		v.Apps = append(v.Apps, av)
	}
	body, err := templates.PlatformPRBody(v)
	if err != nil {
		return proposals.PlatformPR{}, "", err
	}
	pr := proposals.PlatformPR{Instance: in.Name, Key: key, Fingerprint: fp, Source: g.Name(), RepoURL: repo.URL, Base: repo.Branch,
		Branch: templates.PlatformBranch(cfg.Policy.BranchPrefix, in.Name, g.Cause, key), Title: templates.PlatformPRTitle(v),
		Body: body + templates.PlatformMarker(key), Policy: cfg.Policy, Edit: e, Apps: apps}
	for _, p := range res.PRs {
		app := AppKey(p.Instance, p.Namespace, p.App)
		for _, f := range p.Plan.Findings {
			if fixed[app+"\x00"+f.Resource.String()+"\x00"+f.Path.String()] {
				pr.Held = append(pr.Held, p.Key)
				break
			}
		}
	}
	return pr, "", nil
}
