package remediations

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// Planning a platform pull request from a cycle's applications: group the
// findings many applications of one instance share (FleetGroups), plan the
// argocd-cm rule that ends one group (FleetGroup.Rule), edit the platform
// repository's file with it and verify the change by re-diagnosing every
// application it fixes (FleetGroup.Edit). Reading the file is the caller's.

// Diagnose diagnoses a snapshot under a sensitivity: the caller's pipeline,
// handed in so that a plan is verified by the diagnosis itself.
type Diagnose func(*drift.Snapshot, drift.Sensitivity) (*drift.Report, error)

// PlatformApp is an application a platform fix may change: its snapshot,
// its whole report and its policy's sensitivity.
type PlatformApp struct {
	Snapshot    *drift.Snapshot
	Report      *drift.Report
	Sensitivity drift.Sensitivity
}

// PlatformSource names what a finding's difference comes from, as fleets
// group them: a mutating webhook, or a controller (field manager).
func PlatformSource(f drift.Finding) (string, bool) {
	writer := ""
	if len(f.Owners) > 0 {
		writer = f.Owners[len(f.Owners)-1].Manager
	}
	return classifiers.FleetSource(f.Cause, f.Evidence, writer)
}

// FeedsPlatform says some of an application's findings (as kept) may feed
// a platform fix, which needs its snapshot.
func FeedsPlatform(kept []drift.Kept) bool {
	for _, f := range kept {
		if classifiers.Of(f.Cause).Fleet != classifiers.FleetNone {
			return true
		}
	}
	return false
}

// FleetGroup is one shared finding of an instance: its findings by
// application.
type FleetGroup struct {
	Instance, Source, Kind string
	Cause                  drift.Cause
	Findings               map[string][]drift.Finding // by application
}

// Name is the shared finding as the digest's fleet line names it.
func (g *FleetGroup) Name() string { return g.Source + " on " + g.Kind }

// Key identifies the shared finding: its instance, source, cause and kind.
func (g *FleetGroup) Key() string {
	h := sha256.New()
	for _, s := range []string{g.Instance, g.Source, string(g.Cause), g.Kind} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// FleetGroups are an instance's shared findings of at least min
// applications, from the applications of order (by name) kept in apps.
func FleetGroups(instance string, order []string, apps map[string]PlatformApp, min int) []*FleetGroup {
	groups := map[string]*FleetGroup{}
	for _, app := range order {
		a, ok := apps[app]
		if !ok || a.Report == nil {
			continue // no finding a platform fix may end
		}
		for _, f := range a.Report.Findings {
			src, ok := PlatformSource(f)
			if !ok {
				continue
			}
			k := string(f.Cause) + "\x00" + src + "\x00" + f.Resource.Kind
			g := groups[k]
			if g == nil {
				g = &FleetGroup{Instance: instance, Source: src, Kind: f.Resource.Kind, Cause: f.Cause, Findings: map[string][]drift.Finding{}}
				groups[k] = g
			}
			g.Findings[app] = append(g.Findings[app], f)
		}
	}
	var out []*FleetGroup
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		if g := groups[k]; len(g.Findings) >= min {
			out = append(out, g)
		}
	}
	return out
}

// Apps are the applications the group's fix fixes, sorted.
func (g *FleetGroup) Apps() []string { return slices.Sorted(maps.Keys(g.Findings)) }

// Rule plans the argocd-cm rule that ends the group's findings and judges
// it against every resource of the instance's applications (apps: those
// kept, the group's among them), not only those it fixes. A rule that is
// not planned comes back with why.
func (g *FleetGroup) Rule(apps map[string]PlatformApp) (PlatformRule, string) {
	pfs, why := g.platformFindings(apps)
	if why != "" {
		return PlatformRule{}, why
	}
	var sens drift.Sensitivity
	var resources []drift.Resource
	for _, app := range g.Apps() {
		a := apps[app]
		sens.Extra = append(sens.Extra, a.Sensitivity.Extra...)
		resources = append(resources, a.Snapshot.Resources...)
	}
	for app, a := range apps {
		if g.Findings[app] == nil && a.Snapshot != nil {
			resources = append(resources, a.Snapshot.Resources...)
		}
	}
	rule, why := PlanPlatformRule(pfs, sens)
	if why != "" {
		return PlatformRule{}, why
	}
	covers := func(r drift.IgnoreRule, res *drift.Resource) []drift.Pointer { return diff.RuleCovers(&r, res) }
	if why := JudgePlatformRule(rule, resources, covers, sens); why != "" {
		return PlatformRule{}, why
	}
	return rule, ""
}

// Edit writes the rule into the platform repository's argocd-cm file (its
// path file, its content src) and verifies the change: every application
// the group fixes is diagnosed again with the new argocd-cm in its cluster
// context; each one's shared findings must be gone and no difference may be
// new. It returns the edit and what it was verified with; a change that is
// not proposed comes back with why.
func (g *FleetGroup) Edit(file string, src []byte, rule PlatformRule, apps map[string]PlatformApp, diagnose Diagnose) (PlatformEdit, string, string, error) {
	edit, err := EditArgoCDCM(file, src, rule)
	if err != nil {
		return PlatformEdit{}, "", "not proposed: " + err.Error(), nil
	}
	if string(edit.After) == string(edit.Before) {
		return PlatformEdit{}, "", fmt.Sprintf("%s already declares %s; waiting for Argo CD to read it", file, rule.Key()), nil
	}
	verified, why, err := g.verify(apps, edit, diagnose)
	if err != nil || why != "" {
		return PlatformEdit{}, "", why, err
	}
	return edit, verified, "", nil
}

func (g *FleetGroup) verify(apps map[string]PlatformApp, e PlatformEdit, diagnose Diagnose) (string, string, error) {
	gone := 0
	names := g.Apps()
	for _, app := range names {
		a := apps[app]
		before, err := diagnose(a.Snapshot, a.Sensitivity)
		if err != nil {
			return "", "", err
		}
		changed := *a.Snapshot
		changed.Cluster = withArgoCDCM(a.Snapshot.Cluster, e.Rule)
		after, err := diagnose(&changed, a.Sensitivity)
		if err != nil {
			return "", fmt.Sprintf("%s: re-diagnosing with the new argocd-cm failed: %v", app, err), nil
		}
		had := map[string]bool{}
		for _, f := range before.Findings {
			had[findingID(f)] = true
		}
		fixed := map[string]bool{}
		for _, f := range g.Findings[app] {
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
		gone += len(g.Findings[app])
	}
	return fmt.Sprintf("re-diagnosed all %d applications with the new argocd-cm in their cluster context: %d findings gone, no new difference", len(names), gone), "", nil
}

// findingID names a finding across two diagnoses of one application.
func findingID(f drift.Finding) string {
	return string(f.Cause) + "\x00" + f.Resource.String() + "\x00" + f.Path.String()
}

// withArgoCDCM is a cluster context with argocd-cm's data holding the rule
// (argocd-cm created when the context has none).
func withArgoCDCM(cluster []drift.Object, r PlatformRule) []drift.Object {
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
