package cycle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// PlatformPR is one pull request to a platform repository: one change to
// argocd-cm that ends a finding many applications of one instance share.
type PlatformPR struct {
	Instance string
	// Key names the shared finding (instance, source, cause, kind); it
	// names the branch, so restarts and replicas find the same PR again.
	Key         string
	Fingerprint string // the change's content; a changed change updates the PR
	Source      string // as the digest's fleet line names it
	RepoURL     string
	Base        string // "" or HEAD: the repository's default branch
	Branch      string
	Title, Body string
	Policy      config.Policy // the global policy: labels, reviewers, draft, dry run, quiet hours
	Edit        remediations.PlatformEdit
	Apps        []string // the applications it fixes, by AppKey
	// Held are the per-application fixes (by key) it holds back while open.
	Held []string
}

// PlatformMarker ends a platform PR's body, so it is told apart from a
// per-application fix; it never matches KeyMarkerRE.
func PlatformMarker(key string) string { return "\n<!-- driftfix:platform=" + key + " -->\n" }

// PlatformBranch is the branch of a platform fix.
func PlatformBranch(prefix, instance string, cause drift.Cause, key string) string {
	return Branch(prefix, "platform-"+instance, cause, key)
}

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
		if _, ok := fleetSource(f); ok {
			if res.platformSnaps == nil {
				res.platformSnaps, res.platformReports = map[string]*drift.Snapshot{}, map[string]*drift.Report{}
			}
			key := AppKey(instance, r.App.Namespace, r.App.Name)
			res.platformSnaps[key], res.platformReports[key] = r.Snapshot, r.Report
			return
		}
	}
}

// fleetSource names what a finding's difference comes from, as Fleet
// groups them: a mutating webhook, or a controller (field manager).
func fleetSource(f drift.Finding) (string, bool) {
	writer := ""
	if len(f.Owners) > 0 {
		writer = f.Owners[len(f.Owners)-1].Manager
	}
	return classifiers.FleetSource(f.Cause, f.Evidence, writer)
}

// fleetGroup is one shared finding of an instance: its findings by application.
type fleetGroup struct {
	instance, source, kind string
	cause                  drift.Cause
	findings               map[string][]drift.Finding // by AppKey
}

func (g *fleetGroup) name() string { return g.source + " on " + g.kind }

// key identifies the shared finding: its instance, source, cause and kind.
func (g *fleetGroup) key() string {
	h := sha256.New()
	for _, s := range []string{g.instance, g.source, string(g.cause), g.kind} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// planPlatform proposes one platform pull request per shared finding of an
// instance with a platform repository, verified by re-diagnosing every
// application it fixes with the changed argocd-cm.
func (res *CycleResult) planPlatform(ctx context.Context, cfg *config.Config, instances []Instance) {
	defer func() { res.platformSnaps, res.platformReports = nil, nil }()
	for _, in := range instances {
		repo, ok := cfg.Platform(in.Name)
		if !ok || slices.Contains(res.FailedInstances, in.Name) {
			continue
		}
		min := repo.FleetMin
		if min == 0 {
			min = FleetMin
		}
		for _, g := range res.fleetGroups(in.Name, min) {
			res.PlatformShared = append(res.PlatformShared, g.key())
			pr, why, err := res.planGroup(ctx, cfg, in, repo, g)
			switch {
			case err != nil:
				res.Errors = append(res.Errors, fmt.Errorf("platform fix for %s: %w", g.name(), err))
			case why != "":
				res.Skipped = append(res.Skipped, fmt.Sprintf("platform fix for %s on %s: %s", g.name(), in.Name, why))
			default:
				res.Platform = append(res.Platform, pr)
			}
		}
	}
	slices.SortFunc(res.Platform, func(a, b PlatformPR) int { return strings.Compare(a.Branch, b.Branch) })
}

// fleetGroups are an instance's shared findings of at least min applications.
func (res *CycleResult) fleetGroups(instance string, min int) []*fleetGroup {
	groups := map[string]*fleetGroup{}
	for _, r := range res.Stuck {
		if r.Instance != instance {
			continue
		}
		app := AppKey(instance, r.App.Namespace, r.App.Name)
		rep := res.platformReports[app]
		if rep == nil {
			continue // no finding a platform fix may end
		}
		for _, f := range rep.Findings {
			src, ok := fleetSource(f)
			if !ok {
				continue
			}
			k := string(f.Cause) + "\x00" + src + "\x00" + f.Resource.Kind
			g := groups[k]
			if g == nil {
				g = &fleetGroup{instance: instance, source: src, kind: f.Resource.Kind, cause: f.Cause, findings: map[string][]drift.Finding{}}
				groups[k] = g
			}
			g.findings[app] = append(g.findings[app], f)
		}
	}
	var out []*fleetGroup
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		if g := groups[k]; len(g.findings) >= min {
			out = append(out, g)
		}
	}
	return out
}

// planGroup plans, edits and verifies one shared finding's platform fix; a
// fix that is not proposed comes back with why.
func (res *CycleResult) planGroup(ctx context.Context, cfg *config.Config, in Instance, repo config.PlatformRepo, g *fleetGroup) (PlatformPR, string, error) {
	apps := slices.Sorted(maps.Keys(g.findings))
	var sens drift.Sensitivity
	var pfs []remediations.PlatformFinding
	var resources []drift.Resource
	for _, app := range apps {
		s := res.platformSnaps[app]
		if s == nil {
			return PlatformPR{}, "the snapshot of " + app + " was not kept, so the change cannot be verified", nil
		}
		id := ParseAppKey(app)
		sens.Extra = append(sens.Extra, cfg.For(drift.Str(s.Application, "spec", "project"), id.Name, id.Namespace).Sensitivity().Extra...)
		resources = append(resources, s.Resources...)
		for _, f := range g.findings[app] {
			pf := remediations.PlatformFinding{App: app, Finding: f}
			for i := range s.Resources {
				if s.Resources[i].Ref() == f.Resource {
					pf.Target, pf.Live = s.Resources[i].Target, s.Resources[i].Live
				}
			}
			pfs = append(pfs, pf)
		}
	}
	// every application of the instance the rule reaches, not only those it fixes
	for app, s := range res.platformSnaps {
		if ParseAppKey(app).Instance == in.Name && g.findings[app] == nil {
			resources = append(resources, s.Resources...)
		}
	}
	rule, why := remediations.PlanPlatformRule(pfs, sens)
	if why != "" {
		return PlatformPR{}, why, nil
	}
	covers := func(r drift.IgnoreRule, res *drift.Resource) []drift.Pointer { return diff.RuleCovers(&r, res) }
	if why := remediations.JudgePlatformRule(rule, resources, covers, sens); why != "" {
		return PlatformPR{}, why, nil
	}
	if in.BranchFiles == nil {
		return PlatformPR{}, "the platform repository cannot be read (no Git access configured)", nil
	}
	base := repo.Branch
	if base == "" {
		base = "HEAD"
	}
	files, _, err := in.BranchFiles(ctx, repo.URL, base)
	if err != nil {
		return PlatformPR{}, "", fmt.Errorf("read platform repository %s: %w", repo.URL, err)
	}
	src, ok := files[repo.File]
	if !ok {
		return PlatformPR{}, fmt.Sprintf("%s has no file %s", repo.URL, repo.File), nil
	}
	edit, err := remediations.EditArgoCDCM(repo.File, []byte(src), rule)
	if err != nil {
		return PlatformPR{}, "not proposed: " + err.Error(), nil
	}
	if string(edit.After) == string(edit.Before) {
		return PlatformPR{}, fmt.Sprintf("%s already declares %s; waiting for Argo CD to read it", repo.File, rule.Key()), nil
	}
	verified, why, err := res.verifyPlatform(cfg, g, apps, edit)
	if err != nil || why != "" {
		return PlatformPR{}, why, err
	}
	return res.proposePlatform(cfg, in, repo, g, apps, edit, verified)
}

// verifyPlatform re-diagnoses every application the change fixes with the
// new argocd-cm in its cluster context: each one's shared findings must be
// gone and no difference may be new.
func (res *CycleResult) verifyPlatform(cfg *config.Config, g *fleetGroup, apps []string, e remediations.PlatformEdit) (string, string, error) {
	gone := 0
	for _, app := range apps {
		s := res.platformSnaps[app]
		id := ParseAppKey(app)
		sens := cfg.For(drift.Str(s.Application, "spec", "project"), id.Name, id.Namespace).Sensitivity()
		before, err := pipeline.Diagnose(s, sens)
		if err != nil {
			return "", "", err
		}
		changed := *s
		changed.Cluster = withArgoCDCM(s.Cluster, e.Rule)
		after, err := pipeline.Diagnose(&changed, sens)
		if err != nil {
			return "", fmt.Sprintf("%s: re-diagnosing with the new argocd-cm failed: %v", app, err), nil
		}
		had := map[string]bool{}
		for _, f := range before.Findings {
			had[findingID(f)] = true
		}
		fixed := map[string]bool{}
		for _, f := range g.findings[app] {
			fixed[findingID(f)] = true
		}
		for _, f := range after.Findings {
			switch {
			case fixed[findingID(f)]:
				return "", fmt.Sprintf("%s: %s %s still differs with the new argocd-cm", app, f.Resource, f.Path), nil
			case !had[findingID(f)]:
				return "", fmt.Sprintf("%s: the new argocd-cm makes %s %s differ (%s)", app, f.Resource, f.Path, f.Cause), nil
			}
		}
		gone += len(g.findings[app])
	}
	return fmt.Sprintf("re-diagnosed all %d applications with the new argocd-cm in their cluster context: %d findings gone, no new difference", len(apps), gone), "", nil
}

func findingID(f drift.Finding) string {
	return string(f.Cause) + "\x00" + f.Resource.String() + "\x00" + f.Path.String()
}

// withArgoCDCM is a cluster context with argocd-cm's data holding the rule
// (argocd-cm created when the context has none).
func withArgoCDCM(cluster []drift.Object, r remediations.PlatformRule) []drift.Object {
	out := make([]drift.Object, 0, len(cluster)+1)
	var cm drift.Object
	for _, o := range cluster {
		if drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm" {
			cm = drift.DeepCopy(o).(map[string]any)
			continue
		}
		out = append(out, o)
	}
	if cm == nil {
		cm = drift.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"}}
	}
	data, _ := cm["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
		cm["data"] = data
	}
	data[r.Key()] = r.Value()
	return append(out, cm)
}

// proposePlatform turns a verified change into its pull request and holds
// back the per-application fixes of the same finding.
func (res *CycleResult) proposePlatform(cfg *config.Config, in Instance, repo config.PlatformRepo, g *fleetGroup, apps []string, e remediations.PlatformEdit, verified string) (PlatformPR, string, error) {
	key := g.key()
	h := sha256.New()
	for _, s := range append([]string{key, repo.URL, e.File, string(e.After)}, apps...) { // a new application changes the body
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	fp := hex.EncodeToString(h.Sum(nil))[:12]
	v := templates.PlatformPRView{Instance: in.Name, ArgoCDURL: in.URL, Source: g.name(), Cause: g.cause, Key: e.Rule.Key(),
		File: e.File, Style: string(e.Style), Rule: e.Rule.Value(), Diff: remediations.UnifiedDiff(e.File, e.Before, e.After),
		Verification: verified, Fingerprint: fp}
	fixed := map[string]bool{}
	for _, app := range apps {
		id := ParseAppKey(app)
		av := templates.PlatformAppView{App: id.Name, Namespace: id.Namespace}
		for _, f := range g.findings[app] {
			av.Paths = append(av.Paths, f.Resource.String()+" "+f.Path.String())
			fixed[app+"\x00"+f.Resource.String()+"\x00"+f.Path.String()] = true
		}
		v.Apps = append(v.Apps, av)
	}
	body, err := templates.PlatformPRBody(v)
	if err != nil {
		return PlatformPR{}, "", err
	}
	pr := PlatformPR{Instance: in.Name, Key: key, Fingerprint: fp, Source: g.name(), RepoURL: repo.URL, Base: repo.Branch,
		Branch: PlatformBranch(cfg.Policy.BranchPrefix, in.Name, g.cause, key), Title: templates.PlatformPRTitle(v),
		Body: body + PlatformMarker(key), Policy: cfg.Policy, Edit: e, Apps: apps}
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
