// Package remediations turns a finding into the narrowest fix: which kind, in
// which file of the application's repository, and never one that would hide a
// manual change or a sensitive field. It does no I/O.
package remediations

import (
	"path"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// Suggest completes a finding's remediation: it applies the safety policy and
// locates the file the fix belongs in.
func Suggest(s *drift.Snapshot, repo Repo, sens drift.Sensitivity, f *drift.Finding) {
	r := &f.Remediation
	if r.Kind == "" {
		r.Kind = drift.FixNone
	}
	if f.Cause == drift.CauseManualChange && r.Kind != drift.FixNone {
		r.Kind, r.Reason = drift.FixNone, "a manual change is real drift and is never fixed by driftfix"
	}
	// classifiers.Run has guarded every finding of a diagnosis; an ignore is
	// checked again here (and every fix once more by the planner).
	if r.Kind == drift.FixIgnoreDifference {
		var target, live drift.Object
		if i := resourceIndex(s, f.Resource); i >= 0 {
			target, live = s.Resources[i].Target, s.Resources[i].Live
		}
		sens.Guard(f, target, live)
	}
	r.File = Locate(s, repo, f.Resource, r.Kind)
}

// Locate finds the file in the repository where a fix of the given kind for the
// resource is written, or "" when it cannot be located with certainty.
func Locate(s *drift.Snapshot, repo Repo, ref drift.Ref, kind drift.FixKind) string {
	if len(s.Repo.Files) == 0 {
		return ""
	}
	switch kind {
	case drift.FixNone, "":
		return ""
	case drift.FixIgnoreDifference, drift.FixNarrowIgnore:
		return manifest(repo, "", drift.Ref{Group: "argoproj.io", Kind: "Application", Name: s.AppName()})
	case drift.FixTrackingMethod:
		return manifest(repo, "", drift.Ref{Kind: "ConfigMap", Name: "argocd-cm"})
	case drift.FixPinHelmValue:
		if src, ok := s.HelmSource(); ok {
			return valuesFile(s, src)
		}
		return ""
	}
	if src, ok := s.HelmSource(); ok {
		// In a chart the field is written by a template; the value may come from values.
		for _, f := range s.TemplateFiles() {
			if strings.Contains(s.Repo.Files[f], "kind: "+ref.Kind) {
				return f
			}
		}
		return valuesFile(s, src)
	}
	for _, src := range drift.Sources(s.Application) {
		if f := manifest(repo, src.Path, ref); f != "" {
			return f
		}
	}
	return ""
}

func valuesFile(s *drift.Snapshot, src drift.Source) string {
	for _, vf := range src.ValueFiles {
		p := path.Join(src.Path, vf)
		if _, ok := s.Repo.Files[p]; ok {
			return p
		}
	}
	p := path.Join(src.Path, "values.yaml")
	if _, ok := s.Repo.Files[p]; ok {
		return p
	}
	return ""
}

// manifest returns the file holding the one document of the resource under
// dir, or "" when there is none or more than one.
func manifest(repo Repo, dir string, ref drift.Ref) string {
	loc, err := locateDoc(repo, dir, ref)
	if err != nil {
		return ""
	}
	return loc.file
}
