package classifiers

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// definedTwice explains a difference on an Argo CD Application that this
// application renders from Git (an app-of-apps parent) while an
// ApplicationSet owns the live one (its ownerReferences), or while its live
// tracking id names another parent: two definitions of one Application, each
// written over the other by its own controller. It is a conflict for a person
// to settle: no ignore rule, no field removal and no writers entry, any of
// which would hide one definition losing to the other.
func (c *Case) definedTwice() (Verdict, bool) {
	d := c.Diff
	if d == nil {
		return Verdict{}, false
	}
	res := c.Resource()
	if res.Target == nil || res.Live == nil || d.Resource.Kind != "Application" || d.Resource.Group != "argoproj.io" {
		return Verdict{}, false
	}
	for _, o := range d.NonArgoOwners() {
		if c.isPerson(o.Manager) {
			return Verdict{}, false // a person's change is the person's
		}
	}
	set := ""
	for _, ref := range drift.List(res.Live, "metadata", "ownerReferences") {
		g, _ := drift.SplitAPIVersion(drift.Str(ref, "apiVersion"))
		if drift.Str(ref, "kind") == "ApplicationSet" && g == "argoproj.io" {
			set = drift.Str(ref, "name")
			break
		}
	}
	parent := c.Snapshot.AppName()
	here := fmt.Sprintf("Application %s renders it from Git (%s)", parent, c.gitPlace(d.Resource))
	var other, owner string // the other definition, and its name alone
	switch id := drift.Annotations(res.Live)[trackingAnnotation]; {
	case set != "":
		owner = "ApplicationSet " + set
		other = fmt.Sprintf("%s owns the live one (its ownerReferences)", owner)
		if f := c.filesDefining(drift.Ref{Group: "argoproj.io", Kind: "ApplicationSet", Name: set, Namespace: d.Resource.Namespace}); len(f) > 0 {
			other += ", defined in " + strings.Join(f, ", ")
		}
	case id != "":
		named, _, _ := strings.Cut(id, ":")
		if named == "" || named == instanceName(c.Snapshot.Application) {
			return Verdict{}, false
		}
		owner = "parent Application " + named
		other = fmt.Sprintf("%s applied the live one (its tracking id %s)", owner, id)
	default:
		return Verdict{}, false
	}
	ev := []drift.Evidence{
		drift.Say(drift.EvidenceTracking, fmt.Sprintf("Application %s has two definitions: %s, and %s", d.Resource.Name, here, other)),
		drift.Say(drift.EvidenceTracking, fmt.Sprintf("%s was last written by %s: each definition's controller writes its own version over the other's", d.Path, ownersText(d.Owners))),
		drift.Say(drift.EvidenceTracking, "an ignore rule, a field removal or a writers entry would hide one definition losing to the other; remove the Application from one of them"),
	}
	return Verdict{Evidence: ev, Fix: drift.FixNone,
		Reason: fmt.Sprintf("conflict: Application %s is defined by Application %s's Git and by %s; a person decides which one stays", d.Resource.Name, parent, owner)}, true
}

// gitPlace names where this application's Git holds a resource: the
// repository files with its manifest, else the application's source.
func (c *Case) gitPlace(ref drift.Ref) string {
	if f := c.filesDefining(ref); len(f) > 0 {
		return strings.Join(f, ", ")
	}
	var parts []string
	for _, src := range drift.Sources(c.Snapshot.Application) {
		parts = append(parts, src.String())
	}
	if len(parts) == 0 {
		return "its source"
	}
	return strings.Join(parts, "; ")
}

// filesDefining returns the snapshot's repository files that hold a manifest
// of ref (kind, group and name; a namespace only when the manifest sets one),
// sorted. A file that is not YAML is not a manifest and is passed over.
func (c *Case) filesDefining(ref drift.Ref) []string {
	var out []string
	for name, text := range c.Snapshot.Repo.Files {
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") {
			continue
		}
		if !strings.Contains(text, `\`) && (!strings.Contains(text, ref.Name) || !strings.Contains(text, ref.Kind)) {
			continue // cheap: no manifest of it can be here (YAML spells a string without its text only with an escape)
		}
		dec := yaml.NewDecoder(bytes.NewReader([]byte(text)))
		for {
			var m map[string]any
			err := dec.Decode(&m)
			if err != nil { // the end of the file, or a document this reader cannot read
				break
			}
			g, _ := drift.SplitAPIVersion(drift.Str(m, "apiVersion"))
			ns := drift.Str(m, "metadata", "namespace")
			if drift.Str(m, "kind") == ref.Kind && g == ref.Group && drift.Str(m, "metadata", "name") == ref.Name &&
				(ns == "" || ref.Namespace == "" || ns == ref.Namespace) {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
