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
	Name:     drift.CauseNondeterministicRender,
	Doc:      "the desired state itself changes between renders (random or time-based template values)",
	Classify: classifyNondeterministic,
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
	if len(c.Snapshot.Renders) > 0 {
		ev, varies := c.renderEvidence()
		if !varies {
			return Verdict{}, false // independent renders agree: the render is deterministic here
		}
		ev = append(ev, c.templateEvidence()...)
		return Verdict{Evidence: ev, Fix: fix, Reason: reason}, true
	}
	ev := c.templateEvidence()
	if len(ev) == 0 {
		return Verdict{}, false
	}
	return Verdict{Evidence: ev, Fix: fix, Reason: reason}, true
}

// renderEvidence compares the value at the difference's path in the target and
// in every further render of the same revision.
func (c *Case) renderEvidence() ([]string, bool) {
	d := c.Diff
	target := c.Resource().Target
	tv, tok := d.Path.Get(target)
	var ev []string
	varies := false
	for i, r := range c.Snapshot.Renders {
		obj := findRendered(r, d.Resource)
		if obj == nil {
			if target != nil {
				varies = true
				ev = append(ev, fmt.Sprintf("render %d of the same revision has no %s", i+1, d.Resource))
			}
			continue
		}
		rv, rok := d.Path.Get(obj)
		if rok == tok && (!tok || drift.Equal(tv, rv)) {
			continue
		}
		varies = true
		if isSecretData(d.Resource, d.Path) {
			ev = append(ev, fmt.Sprintf("render %d of the same revision has a different %s (secret, not shown)", i+1, d.Path))
		} else {
			ev = append(ev, fmt.Sprintf("render %d of the same revision has %s %s where the compared render has %s", i+1, d.Path, drift.Brief(rv, 40), drift.Brief(tv, 40)))
		}
	}
	if varies {
		ev = append([]string{fmt.Sprintf("%d independent renders of the same revision and inputs disagree at %s", len(c.Snapshot.Renders)+1, d.Path)}, ev...)
	}
	return ev, varies
}

func findRendered(objs []drift.Object, ref drift.Ref) drift.Object {
	for _, o := range objs {
		r := drift.RefOf(o)
		if r.Group == ref.Group && r.Kind == ref.Kind && r.Name == ref.Name && (r.Namespace == "" || r.Namespace == ref.Namespace) {
			return o
		}
	}
	return nil
}

// templateEvidence finds the chart template line that writes the difference's
// field with a random or time-based function, directly or through a checksum of
// another template that does.
func (c *Case) templateEvidence() []string {
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
	var ev []string
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
				ev = append(ev, fmt.Sprintf("%s:%d writes %s with %s (%s)", f, i+1, key, m, what))
				continue
			}
			if inc := includeFile.FindStringSubmatch(line); inc != nil {
				dir := path.Dir(f)
				if why, ok := random[path.Join(dir, strings.TrimPrefix(inc[1], "/"))]; ok {
					ev = append(ev, fmt.Sprintf("%s:%d writes %s as a checksum of %s, which changes every render: %s", f, i+1, key, strings.TrimPrefix(inc[1], "/"), why))
				}
			}
		}
	}
	return ev
}
