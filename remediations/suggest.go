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
// resource is written (the kind's Remedy.Locate), or "" when it cannot be
// located with certainty.
func Locate(s *drift.Snapshot, repo Repo, ref drift.Ref, kind drift.FixKind) string {
	r, ok := Lookup(kind)
	if len(s.Repo.Files) == 0 || !ok {
		return ""
	}
	if r.Locate != nil {
		return r.Locate(s, repo, ref)
	}
	return resourceSource(s, repo, ref)
}

// resourceSource is where a field of the resource itself is written: in a
// chart, the template that renders its kind, else the values file; else the
// one manifest of it under a source path.
func resourceSource(s *drift.Snapshot, repo Repo, ref drift.Ref) string {
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

// applicationManifest is where an ignore rule is written: the Application's
// own manifest (app-of-apps repositories).
func applicationManifest(s *drift.Snapshot, repo Repo, _ drift.Ref) string {
	return manifest(repo, "", drift.Ref{Group: "argoproj.io", Kind: "Application", Name: s.AppName()})
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
