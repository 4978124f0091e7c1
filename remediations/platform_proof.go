package remediations

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/templates"
)

// dryRunManager is the field manager the collector's server-side dry run
// applies Git's manifest under, as Argo CD's sync does.
const dryRunManager = "argocd-controller"

// PlatformProof returns what one application's grant of a finding's path
// rests on, read from the finding's typed evidence and re-checked against
// the application's snapshot (pf's Live and DryRun), never from
// evidence text; without a proof it says why. A webhook's grant needs a
// recorded dry run that holds the live value at the path, which the
// snapshot's dry-run answer must still show, and an allow-list entry for
// the path; a controller's needs its field manager and a catalog or policy
// writers entry that owns the path.
func PlatformProof(pf PlatformFinding) (templates.PlatformProofView, string) {
	f := pf.Finding
	v := templates.PlatformProofView{Resource: f.Resource.String(), Path: f.Path.String()}
	switch classifiers.Of(f.Cause).Fleet {
	case classifiers.FleetWebhook:
		wh, ok := drift.FirstOf(f.Evidence, drift.EvidenceWebhook)
		if !ok || wh.Object == nil {
			return v, pf.App + ": no mutating webhook recorded as admitting " + f.Resource.String()
		}
		v.WebhookConfig, v.Webhook = wh.Object.Kind+" "+wh.Object.Name, wh.Webhook
		held := false
		for _, e := range f.Evidence {
			held = held || (e.Kind == drift.EvidenceDryRun && e.Proof == drift.ProofDryRunHolds && e.Path == v.Path)
		}
		if !held {
			return v, pf.App + ": no server-side dry run of Git's manifest is recorded as storing the live value at " + v.Path + ", so nothing proves the webhook wrote it"
		}
		dry, inDry := f.Path.Get(map[string]any(pf.DryRun))
		live, inLive := f.Path.Get(map[string]any(pf.Live))
		if pf.DryRun == nil || inDry != inLive || !drift.Equal(dry, live) {
			return v, pf.App + ": the snapshot's server-side dry run of Git's manifest does not store the live value at " + v.Path + ": the recorded proof does not hold"
		}
		v.DryRunManager = dryRunManager
		h, ok := drift.HandOverAt(drift.GrantWebhook, f.Resource, f.Path)
		if !ok {
			return v, pf.App + ": no entry of the allow-list of hand-overs lets a webhook keep " + v.Path
		}
		v.EntryFrom, v.EntryWriter, v.EntryPattern, v.EntryWhy, v.EntrySource = "the allow-list of hand-overs", h.Writer, h.Pattern().String(), h.Why, h.Source
	case classifiers.FleetWriter:
		if len(f.Owners) == 0 {
			return v, pf.App + ": no field manager owns " + v.Path
		}
		m := f.Owners[len(f.Owners)-1].Manager
		named := false
		for _, e := range f.Evidence {
			named = named || (e.Kind == drift.EvidenceManager && e.Manager == m)
		}
		if !named {
			return v, pf.App + ": no evidence records " + m + " writing " + v.Path
		}
		v.Manager = m
		w := writerEntry(pf.Writers, m)
		if w == nil {
			return v, pf.App + ": neither the writer catalog nor the policy's writers name " + m
		}
		op, owns := w.OwnsPath(f.Resource, f.Path)
		if !owns || w.Is != drift.WriterController {
			return v, fmt.Sprintf("%s: no writer entry lets %s keep %s", pf.App, m, v.Path)
		}
		v.EntryFrom, v.EntryWriter, v.EntryPattern, v.EntrySource = "the writer catalog", w.Component, op.Text, w.Source
		if w.Policy {
			v.EntryFrom, v.EntryWriter = "the policy's writers", m
		}
		if v.EntryWriter == "" {
			v.EntryWriter = m
		}
	default:
		return v, fmt.Sprintf("%s is not a cause one platform rule ends", f.Cause)
	}
	return v, ""
}

// writerEntry is the policy's writer entry for a field manager, or the
// catalog's.
func writerEntry(policy []drift.Writer, m string) *drift.Writer {
	for i := range policy {
		if policy[i].MatchesManager(m) {
			return &policy[i]
		}
	}
	return drift.CatalogWriter(m)
}

// platformFindings are the group's findings with their resources' objects
// from each application's snapshot; it says why not when a snapshot was
// not kept.
func (g *FleetGroup) platformFindings(apps map[string]PlatformApp) ([]PlatformFinding, string) {
	var pfs []PlatformFinding
	for _, app := range g.Apps() {
		a, ok := apps[app]
		if !ok || a.Snapshot == nil {
			return nil, "the snapshot of " + app + " was not kept, so the change cannot be verified"
		}
		s := a.Snapshot
		for _, f := range g.Findings[app] {
			pf := PlatformFinding{App: app, Finding: f}
			for i := range s.Resources {
				if s.Resources[i].Ref() == f.Resource {
					pf.Target, pf.Live, pf.DryRun = s.Resources[i].Target, s.Resources[i].Live, s.Resources[i].DryRun
					pf.Writers = a.Sensitivity.Writers
				}
			}
			pfs = append(pfs, pf)
		}
	}
	return pfs, ""
}

// Proofs are, by application, the proofs of the group's findings
// (PlatformProof), for the platform pull request to list; a finding
// without one comes back with why.
func (g *FleetGroup) Proofs(apps map[string]PlatformApp) (map[string][]templates.PlatformProofView, string) {
	pfs, why := g.platformFindings(apps)
	if why != "" {
		return nil, why
	}
	out := map[string][]templates.PlatformProofView{}
	for _, pf := range pfs {
		v, why := PlatformProof(pf)
		if why != "" {
			return nil, why
		}
		out[pf.App] = append(out[pf.App], v)
	}
	for _, app := range slices.Collect(maps.Keys(out)) {
		slices.SortFunc(out[app], func(a, b templates.PlatformProofView) int {
			return cmp.Or(strings.Compare(a.Resource, b.Resource), strings.Compare(a.Path, b.Path))
		})
	}
	return out, ""
}
