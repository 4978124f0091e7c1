package classifiers

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// NondeterministicRender finds values the desired state itself changes on
// every render: random or time-based template functions.
var NondeterministicRender = Classifier{
	Name:           drift.CauseNondeterministicRender,
	Doc:            "the desired state itself changes between renders (random or time-based template values)",
	Classify:       classifyNondeterministic,
	Predicted:      true,
	MayStayIgnored: true,
}

// randomFuncs are template functions whose output differs on every render;
// lookup is empty under `helm template`, so its fallback runs every time.
var randomFuncs = regexp.MustCompile(`\b(randAlphaNum|randAlpha|randNumeric|randAscii|randBytes|randInt|uuidv4|now|genPrivateKey|genCA|genCAWithKey|genSelfSignedCert|genSelfSignedCertWithKey|genSignedCert|genSignedCertWithKey|lookup)\b`)

var includeFile = regexp.MustCompile(`\$\.Template\.BasePath\s*"(/[^"]+)"`)

func classifyNondeterministic(c *Case) (Verdict, bool) {
	d := c.Diff
	if d == nil || d.Unexplained {
		return Verdict{}, false
	}
	fix := drift.FixNone
	reason := "the value is generated at render time; make the generator stable where it runs"
	if _, ok := c.Snapshot.HelmSource(); ok {
		fix, reason = drift.FixPinHelmValue, ""
	}
	var notes []drift.Evidence // why further renders are not evidence
	if len(c.Snapshot.Renders) > 0 {
		ev, varies, usable, why := c.renderEvidence()
		if varies {
			ev = append(ev, c.templateEvidence()...)
			return Verdict{Evidence: ev, Fix: fix, Reason: reason}, true
		}
		if usable {
			return Verdict{}, false // independent renders of the compared revision agree: the render is deterministic here
		}
		notes = why
	}
	ev := c.templateEvidence()
	if len(ev) == 0 {
		return Verdict{}, false
	}
	return Verdict{Evidence: append(ev, notes...), Fix: fix, Reason: reason}, true
}

// Render information: the object driftfix's collector (bot/argocd's
// RenderInfoAPIVersion and RenderInfoKind) adds to each further render,
// naming the revision argocd-server rendered in its field revision (one
// source) or revisions (one per source). A render without one is of the
// compared revision, as the snapshot format defines renders.
const (
	renderInfoAPIVersion = "driftfix.io/v1"
	renderInfoKind       = "RenderInfo"
)

func isRenderInfo(o drift.Object) bool {
	return drift.Str(o, "apiVersion") == renderInfoAPIVersion && drift.Str(o, "kind") == renderInfoKind
}

// renderRevision returns the revision a render records (several sources'
// joined by commas, "" when it records none) and whether it records one at
// all.
func renderRevision(objs []drift.Object) (string, bool) {
	for _, o := range objs {
		if !isRenderInfo(o) {
			continue
		}
		if revs := drift.List(o, "revisions"); len(revs) > 0 {
			return joinRevisions(revs), true
		}
		return drift.Str(o, "revision"), true
	}
	return "", false
}

// comparedRevision returns the revision Argo CD compared the application
// with: status.sync.revision, or status.sync.revisions joined by commas for
// an application with several sources; "" when not known (not compared, a
// revision missing for a source, or a source hydrator, whose manifests are
// rendered from the dry source).
func comparedRevision(app drift.Object) string {
	if drift.Map(app, "spec", "sourceHydrator") != nil {
		return ""
	}
	if n := len(drift.List(app, "spec", "sources")); n > 0 {
		revs := drift.List(app, "status", "sync", "revisions")
		if len(revs) != n {
			return ""
		}
		return joinRevisions(revs)
	}
	return drift.Str(app, "status", "sync", "revision")
}

// joinRevisions joins revisions with commas; "" when one is not a
// non-empty string.
func joinRevisions(revs []any) string {
	parts := make([]string, len(revs))
	for i, v := range revs {
		s, _ := v.(string)
		if s == "" {
			return ""
		}
		parts[i] = s
	}
	return strings.Join(parts, ",")
}

// renderEvidence compares the value at the difference's path in the target
// and in every further render of the compared revision, each object placed
// in its namespace as Argo CD places it before comparing. A render of
// another revision, or of one not known, is no evidence: why says which.
// usable says at least one render was compared.
func (c *Case) renderEvidence() (ev []drift.Evidence, varies, usable bool, why []drift.Evidence) {
	d := c.Diff
	compared := comparedRevision(c.Snapshot.Application)
	namespaced, dest := c.namespaced(), drift.Str(c.Snapshot.Application, "spec", "destination", "namespace")
	target := asCompared(c.Resource().Target, namespaced, dest)
	tv, tok := d.Path.Get(target)
	n := 0
	same := "the same revision" // a render without RenderInfo is of it by definition
	for _, r := range c.Snapshot.Renders {
		if rev, recorded := renderRevision(r); recorded && rev != "" && rev == compared {
			same = "revision " + compared
		}
	}
	for i, r := range c.Snapshot.Renders {
		if rev, recorded := renderRevision(r); recorded {
			switch {
			case rev == "":
				why = append(why, drift.Say(drift.EvidenceRender, fmt.Sprintf("render %d records no revision, so it is no evidence that the render changes", i+1)))
				continue
			case compared == "":
				why = append(why, drift.Say(drift.EvidenceRender, fmt.Sprintf("render %d is of revision %s, but the revision Argo CD compared is not known, so it is no evidence that the render changes", i+1, rev)))
				continue
			case rev != compared:
				why = append(why, drift.Say(drift.EvidenceRender, fmt.Sprintf("render %d is of revision %s, not %s, the revision Argo CD compared, so it is no evidence that the render changes", i+1, rev, compared)))
				continue
			}
		}
		n++
		obj := asCompared(findRendered(r, d.Resource, namespaced), namespaced, dest)
		if obj == nil {
			if target != nil {
				varies = true
				ev = append(ev, drift.Say(drift.EvidenceRender, fmt.Sprintf("render %d of %s has no %s", i+1, same, d.Resource)))
			}
			continue
		}
		rv, rok := d.Path.Get(obj)
		if rok == tok && (!tok || drift.Equal(tv, rv)) {
			continue
		}
		varies = true
		if isSecretData(d.Resource, d.Path) {
			ev = append(ev, drift.Say(drift.EvidenceRender, fmt.Sprintf("render %d of %s has a different %s (secret, not shown)", i+1, same, d.Path)))
		} else {
			ev = append(ev, drift.Say(drift.EvidenceRender, fmt.Sprintf("render %d of %s has %s %s where the compared render has %s", i+1, same, d.Path, drift.Brief(rv, 40), drift.Brief(tv, 40))))
		}
	}
	if varies {
		ev = append([]drift.Evidence{drift.Say(drift.EvidenceRender, fmt.Sprintf("%d independent renders of %s and inputs disagree at %s", n+1, same, d.Path))}, ev...)
		ev = append(ev, why...)
	}
	return ev, varies, n > 0, why
}

// namespaced reports whether the case's resource is namespaced: as its
// CRD's scope says when the snapshot has the CRD, else as the resource
// itself shows it: Argo CD gives every namespaced target a namespace and
// clears it on cluster-scoped ones, and the API server does the same for
// live objects.
func (c *Case) namespaced() bool {
	if crd := c.CRD(c.Diff.Resource); crd != nil {
		if scope := drift.Str(crd, "spec", "scope"); scope != "" {
			return scope == "Namespaced"
		}
	}
	return c.Diff.Resource.Namespace != ""
}

// asCompared returns obj with the namespace Argo CD compares it in
// (controller/state.go, NormalizeTargetObjects): a namespaced object
// without one is placed in the destination namespace, a cluster-scoped one
// has none. obj itself is not changed.
func asCompared(obj drift.Object, namespaced bool, dest string) drift.Object {
	ns := drift.Str(obj, "metadata", "namespace")
	if obj == nil || (namespaced && ns != "") || (!namespaced && ns == "") {
		return obj
	}
	out := make(drift.Object, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	md := map[string]any{}
	for k, v := range drift.Map(obj, "metadata") {
		md[k] = v
	}
	if namespaced {
		md["namespace"] = dest
	} else {
		delete(md, "namespace")
	}
	out["metadata"] = md
	return out
}

// findRendered finds the resource in a render: by group, kind and name, and
// by namespace unless the render gives it none or the kind is
// cluster-scoped (Argo CD clears the namespace of those).
func findRendered(objs []drift.Object, ref drift.Ref, namespaced bool) drift.Object {
	for _, o := range objs {
		r := drift.RefOf(o)
		if r.Group == ref.Group && r.Kind == ref.Kind && r.Name == ref.Name && (r.Namespace == "" || r.Namespace == ref.Namespace || !namespaced) {
			return o
		}
	}
	return nil
}

// templateEvidence finds the chart template line that writes the difference's
// field with a random or time-based function, directly or through a checksum of
// another template that does.
func (c *Case) templateEvidence() []drift.Evidence {
	d := c.Diff
	key := d.Path.Last()
	if key == "" {
		return nil
	}
	files := c.Snapshot.TemplateFiles()
	random := map[string]string{} // template base path → first random line
	for _, f := range files {
		for i, line := range strings.Split(c.Snapshot.Repo.Files[f], "\n") {
			if m := randomFuncs.FindString(line); m != "" {
				if _, seen := random[f]; !seen {
					random[f] = fmt.Sprintf("%s:%d calls %s", f, i+1, m)
				}
			}
		}
	}
	if len(random) == 0 {
		return nil
	}
	kindLine := regexp.MustCompile(`(?m)^kind:\s*` + regexp.QuoteMeta(d.Resource.Kind) + `\s*$`)
	keyLine := regexp.MustCompile(`^\s*["']?` + regexp.QuoteMeta(key) + `["']?\s*:`)
	var ev []drift.Evidence
	for _, f := range files {
		content := c.Snapshot.Repo.Files[f]
		if !kindLine.MatchString(content) {
			continue
		}
		for i, line := range strings.Split(content, "\n") {
			if !keyLine.MatchString(line) {
				continue
			}
			if m := randomFuncs.FindString(line); m != "" {
				what := "a value generated on every render"
				if m == "lookup" {
					what = "lookup, which finds nothing under `helm template` (as Argo CD renders), so its fallback runs every render"
				}
				ev = append(ev, drift.Say(drift.EvidenceRender, fmt.Sprintf("%s:%d writes %s with %s (%s)", f, i+1, key, m, what)))
				continue
			}
			if inc := includeFile.FindStringSubmatch(line); inc != nil {
				dir := path.Dir(f)
				if why, ok := random[path.Join(dir, strings.TrimPrefix(inc[1], "/"))]; ok {
					ev = append(ev, drift.Say(drift.EvidenceRender, fmt.Sprintf("%s:%d writes %s as a checksum of %s, which changes every render: %s", f, i+1, key, strings.TrimPrefix(inc[1], "/"), why)))
				}
			}
		}
	}
	return ev
}
