package remediations

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/templates"
)

// Fingerprint identifies a fix with its content: what FixKey covers plus the
// files and the content it writes. The same fix always has the same
// fingerprint, across cycles, restarts and replicas; a changed fix has a new one.
func Fingerprint(app string, p Plan) string {
	h, write := identity(app, p)
	edits := append([]Edit(nil), p.Edits...)
	sort.Slice(edits, func(i, j int) bool { return edits[i].File < edits[j].File })
	for _, e := range edits {
		write(e.File)
		write(string(e.After))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// FixKey identifies a fix by what it fixes, not by what it writes: the
// application (an AppKey), the fix kind, the resource and the paths. It
// names the fix's branch, so a fix whose content changes keeps its branch
// and pull request; a fix for other paths gets another.
func FixKey(appKey string, p Plan) string {
	h, _ := identity(appKey, p)
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// identity hashes the application, kind, resource and fixed paths of a plan;
// an Application's ignore rule counts by what it says, not its index, so a
// rule that moved after another was narrowed keeps its fix's branch.
func identity(app string, p Plan) (hash.Hash, func(string)) {
	h := sha256.New()
	write := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	write(app)
	write(string(p.Kind))
	write(p.Resource.String())
	var paths []string
	for _, f := range p.Findings {
		paths = append(paths, drift.FindingKey(f))
	}
	sort.Strings(paths)
	for _, s := range paths {
		write(s)
	}
	return h, write
}

// PRView fills the view of a verified plan's pull request (templates
// renders it): its remedy's title, its cause's doc, each finding's values
// as a reviewer reads them and each edit's diff. Only a verified plan (one
// that edits a file) says what it was verified with.
func PRView(app, appNamespace, argoURL string, p Plan) templates.PRView {
	v := templates.PRView{
		App: app, AppNamespace: appNamespace, ArgoCDURL: argoURL,
		Kind: p.Kind, Cause: p.Rationale.Cause, Resource: p.Resource,
		Why: p.Rationale.Why, Risk: p.Rationale.Risk, Undo: p.Rationale.Undo,
		Instructions: p.Instructions, Fingerprint: Fingerprint(app, p),
	}
	if p.Verified() {
		v.Verification = p.Verification
	}
	if remedy, ok := Lookup(p.Kind); ok {
		v.Action = remedy.Title
	}
	for _, c := range classifiers.Registry {
		if c.Name == p.Rationale.Cause {
			v.CauseDoc = c.Doc
		}
	}
	for _, f := range p.Findings {
		fv := templates.FindingView{Resource: f.Resource, Path: f.Path.String(), Git: templates.Shown(f.Git, f.InGit),
			Live: templates.Shown(f.ShownLive(), f.InLive), Evidence: drift.EvidenceTexts(f.Evidence)}
		if len(f.Owners) > 0 {
			o := f.Owners[len(f.Owners)-1]
			fv.Owner = o.Manager
			if o.Subresource != "" {
				fv.Owner += " (" + o.Subresource + ")"
			}
		}
		v.Findings = append(v.Findings, fv)
	}
	for _, e := range p.Edits {
		v.Diffs = append(v.Diffs, templates.FileDiff{File: e.File, Diff: UnifiedDiff(e.File, e.Before, e.After)})
	}
	return v
}

// ByHand are the digest and dashboard lines of a plan that is an instruction
// (it edits no file, so it is never verified and opens no pull request): one
// per finding, saying where the change is to be made. Any other plan gives
// none.
func ByHand(p Plan, instance, namespace, app string) []templates.PersonLine {
	if p.Dropped != "" || len(p.Edits) > 0 || p.Instructions == "" {
		return nil
	}
	where, _, more := strings.Cut(strings.TrimSpace(p.Instructions), "\n")
	why := "to do by hand, not verified (driftfix edits no file for it): " + where
	if more {
		why += " (the whole change: driftfix fix)"
	}
	out := make([]templates.PersonLine, 0, len(p.Findings))
	for _, f := range p.Findings {
		out = append(out, templates.PersonLine{App: app, Namespace: namespace, Instance: instance,
			Resource: f.Resource, Path: f.Path.String(), Cause: f.Cause, Why: why})
	}
	return out
}
