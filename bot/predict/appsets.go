package predict

import (
	"github.com/driftfix/driftfix/bot/appset"
	"github.com/driftfix/driftfix/bot/drift"
)

// resolveSet is the Applications an ApplicationSet generates at the
// revision (bot/appset resolves its generators as Argo CD's controller
// does; a git generator of this repository reads the revision's files,
// whatever revision it names, so the change is what is predicted), and
// what it could not resolve, with what that needs.
func resolveSet(s application, rev Revision, opt Options) ([]application, []NotPredicted) {
	name := drift.Str(s.obj, "metadata", "name")
	files := func(repoURL, _ string) (map[string]string, bool) {
		if len(opt.Repositories) == 0 || SameRepository(repoURL, opt.Repositories...) {
			return rev.Files, true
		}
		return nil, false
	}
	res, err := appset.Resolve(s.obj, appset.Options{Files: files, Cluster: opt.Cluster})
	if err != nil {
		return nil, []NotPredicted{{Application: name, Kind: "ApplicationSet", File: s.manifest, Reason: err.Error()}}
	}
	var not []NotPredicted
	for _, u := range res.Unresolved {
		not = append(not, NotPredicted{Application: name, Kind: "ApplicationSet", File: s.manifest,
			Reason: "generator " + u.Generator + " is not resolved: " + u.Reason, Needs: u.Needs})
	}
	out := make([]application, 0, len(res.Applications))
	for _, g := range res.Applications {
		out = append(out, application{obj: g.Application, manifest: s.manifest, from: "ApplicationSet " + name + " (" + g.Generator + ")", parent: idOf(s.obj)})
	}
	return out, not
}
