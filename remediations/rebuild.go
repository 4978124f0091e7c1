package remediations

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// Rebuild returns the snapshot as it stands once the application's
// repository holds head instead of base (the files of the synced revision):
// the Application's spec when its own manifest in the repository changed,
// and the desired state of every resource whose source changed, re-rendered
// for Helm and Kustomize sources. What did not change keeps the desired state
// Argo CD computed. It also returns the files that differ. A head that adds a
// resource, drops one, or no longer renders is an error that says so.
func Rebuild(s *drift.Snapshot, base, head Repo, lim render.Limits) (*drift.Snapshot, []string, error) {
	changed := changedFiles(base, head)
	if len(changed) == 0 {
		return s, nil, nil
	}
	out, appChanged, generated, err := rebuildGenerated(s, base, head, changed, lim)
	if err == nil && !generated {
		out, appChanged, err = rebuildApplication(s, base, head)
	}
	if err != nil {
		return nil, changed, err
	}
	c := &Context{Snapshot: out, Repo: base, Options: Options{Render: lim}}
	switch sourceType(out, base) {
	case "helm", "kustomize":
		if appChanged || touchesSource(out, changed) {
			if out, err = c.rebuild(head); err != nil {
				return nil, changed, err
			}
		}
	default:
		if err := addsResource(out, base, head, changed); err != nil {
			return nil, changed, err
		}
		if out, err = rebuildDirectory(c, head); err != nil {
			return nil, changed, err
		}
	}
	return out, changed, nil
}

// changedFiles lists the files that differ between two repositories, added
// and removed ones included, in order.
func changedFiles(base, head Repo) []string {
	var out []string
	for f, b := range base {
		if h, ok := head[f]; !ok || !bytes.Equal(b, h) {
			out = append(out, f)
		}
	}
	for f := range head {
		if _, ok := base[f]; !ok {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// touchesSource says whether a changed file is under one of the
// application's source paths (or is the source, for a path-less one).
func touchesSource(s *drift.Snapshot, changed []string) bool {
	for _, src := range drift.Sources(s.Application) {
		for _, f := range changed {
			if inDir(f, src.Path) {
				return true
			}
		}
	}
	return false
}

// addsResource refuses a head whose changed manifests under a source path
// declare a resource the application does not have: the check is of the
// resources Argo CD compares.
func addsResource(s *drift.Snapshot, base, head Repo, changed []string) error {
	ns := drift.Str(s.Application, "spec", "destination", "namespace")
	known := map[drift.Ref]bool{}
	for i := range s.Resources {
		known[s.Resources[i].Ref()] = true
	}
	for f, b := range base { // resources the synced revision declares but the snapshot does not list
		if docs, err := yamledit.Documents(b); err == nil && (strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml")) {
			for _, d := range docs {
				if m, _ := d.(map[string]any); drift.Str(m, "kind") != "" {
					r := drift.RefOf(m)
					known[r] = true
					r.Namespace = ns
					known[r] = true
				}
			}
		}
	}
	app := drift.RefOf(s.Application)
	for _, f := range changed {
		if !touchesSource(s, []string{f}) || !(strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml")) {
			continue
		}
		docs, err := yamledit.Documents(head[f])
		if err != nil {
			continue // not a manifest file; Argo CD would refuse it, and so does the render
		}
		for _, d := range docs {
			m, _ := d.(map[string]any)
			if drift.Str(m, "kind") == "" {
				continue
			}
			r := drift.RefOf(m)
			if r.Namespace == "" && !known[r] {
				r.Namespace = ns
			}
			if !known[r] && !(r.Kind == app.Kind && r.Name == app.Name) {
				return fmt.Errorf("the change adds %s to the application (%s)", r, f)
			}
		}
	}
	return nil
}

// rebuildApplication takes the Application's spec from head when its
// manifest is in the repository and changed; status and metadata stay as
// Argo CD reports them.
func rebuildApplication(s *drift.Snapshot, base, head Repo) (*drift.Snapshot, bool, error) {
	ref := drift.RefOf(s.Application)
	ref.Namespace = ""
	was, err := docAt(base, "", ref)
	if err != nil {
		return s, false, nil // the Application is defined elsewhere: a change here cannot touch it
	}
	now, err := docAt(head, "", ref)
	if err != nil {
		return nil, false, fmt.Errorf("the Application's own manifest: %w", err)
	}
	if reflect.DeepEqual(was, now) {
		return s, false, nil
	}
	app := drift.DeepCopy(s.Application).(map[string]any)
	spec, _ := drift.DeepCopy(now["spec"]).(map[string]any)
	if spec == nil {
		return nil, false, fmt.Errorf("the Application's own manifest has no spec")
	}
	app["spec"] = spec
	return withApplication(s, app), true, nil
}

// rebuildDirectory gives every resource of a plain-directory application
// whose manifest changed the manifest in head, with the metadata Argo CD adds.
func rebuildDirectory(c *Context, head Repo) (*drift.Snapshot, error) {
	hc := &Context{Snapshot: c.Snapshot, Repo: head}
	out := c.Snapshot
	for i := range c.Snapshot.Resources {
		res := c.Snapshot.Resources[i]
		if res.Target == nil {
			continue
		}
		was, wErr := docOf(c, res.Ref())
		now, nErr := docOf(hc, res.Ref())
		switch {
		case nErr != nil && wErr == nil:
			return nil, fmt.Errorf("%s: %w", res.Ref(), nErr)
		case nErr != nil || reflect.DeepEqual(was, now):
			continue
		}
		out = withTarget(out, i, withArgoMetadata(drift.DeepCopy(now).(map[string]any), res.Target, c.instanceLabel()))
	}
	return out, nil
}

// docOf reads the one manifest of a resource in a plain-directory application.
func docOf(c *Context, ref drift.Ref) (map[string]any, error) {
	loc, why := c.locateResource(ref)
	if why != "" {
		return nil, fmt.Errorf("%s", why)
	}
	return docIn(c.Repo, loc)
}

// docAt reads the one manifest of ref in the repository (under dir).
func docAt(repo Repo, dir string, ref drift.Ref) (map[string]any, error) {
	loc, err := locateDoc(repo, dir, ref)
	if err != nil {
		return nil, err
	}
	return docIn(repo, loc)
}

func docIn(repo Repo, loc located) (map[string]any, error) {
	docs, err := yamledit.Documents(repo[loc.file])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc.file, err)
	}
	m, _ := docs[loc.doc].(map[string]any)
	return m, nil
}
