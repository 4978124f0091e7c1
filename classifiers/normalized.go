package classifiers

import (
	"fmt"

	"github.com/driftfix/driftfix/bot/drift"
)

// Normalized finds values the API server stores in another form, fills by
// default, drops when empty, or prunes as unknown.
var Normalized = Classifier{
	Name:      drift.CauseNormalized,
	Doc:       "the API server stores the value in another form, fills a default, drops an empty value, or a CRD schema prunes it",
	Classify:  classifyNormalized,
	Predicted: true,
	Suggest:   []drift.FixKind{drift.FixRemoveField, drift.FixSetValue},
	Risk:      "none: the API server already drops this value",
}

// Its evidence shows live values as they are: what it names is the API
// server's own form of Git's value, a default or an allocation, which no
// other writer put there (drift.Finding.ShownLive shows them too).
func classifyNormalized(c *Case) (Verdict, bool) {
	d := c.Diff
	if d == nil || len(d.Path) == 0 {
		return Verdict{}, false
	}
	if v, ok := c.gatedFieldDropped(); ok { // a feature gate that is off (graph.go)
		return v, true
	}
	res := c.Resource()
	crd := c.CRD(d.Resource)
	version := ""
	if res.Target != nil {
		_, version = drift.SplitAPIVersion(drift.Str(res.Target, "apiVersion"))
	}
	if v, ok := c.allocatedByServer(); ok {
		return v, true
	}
	var schema map[string]any
	var storage string
	var ver map[string]any
	if crd != nil {
		ver, storage = crdVersion(crd, version)
		schema = drift.Map(ver, "schema", "openAPIV3Schema")
	}

	// What the API server stores, derived by decoding Git's manifest into
	// its compiled-in type and encoding it again.
	if stored, inStored, derived := d.Stored(); d.InGit && derived && inStored == d.InLive && (!inStored || drift.Equal(stored, d.Live)) {
		why := "Argo CD's scheme does not know this kind, so it compares it as written"
		if d.Builtin {
			why = "the manifest does not decode strictly into its type (an unknown or mistyped field), so Argo CD compares it as written"
		}
		if !inStored {
			what := "the API server drops it"
			if d.Undeclared {
				what = d.Path.Last() + " is not a field of the type, so the API server drops it"
			}
			return Verdict{Evidence: append([]drift.Evidence{
				drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("Git declares %s = %s; decoded into its type (%s) and encoded again, as the API server does before it stores the object, the manifest has no %s: %s", d.Path, c.show(d.Git), d.StoredBy, d.Path.Last(), what)),
				drift.Say(drift.EvidenceAPIServer, "the live object has none either; "+why),
			}, c.dryRunNote()...), Fix: drift.FixRemoveField}, true
		}
		return Verdict{Evidence: append([]drift.Evidence{
			drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("Git writes %s; decoded into its type (%s) and encoded again, as the API server does before it stores the object, it is %s, which is what the live object holds", c.show(d.Git), d.StoredBy, c.show(stored))),
			drift.Say(drift.EvidenceAPIServer, why+"; writing the stored form in Git makes both sides equal"),
		}, c.dryRunNote()...), Fix: drift.FixSetValue}, true
	}

	// The API server's own answer: a dry-run apply of Git's manifest stores
	// what live holds, and no webhook or other writer could have made it.
	if d.InGit && d.HasDryRun && d.InDryRun == d.InLive && (!d.InDryRun || drift.Equal(d.DryRun, d.Live)) &&
		len(d.NonArgoOwners()) == 0 && len(c.matchingWebhooks(d.Resource, res)) == 0 {
		stored := "stores no " + d.Path.Last()
		fix := drift.FixRemoveField
		if d.InDryRun {
			stored, fix = "stores "+c.show(d.DryRun), drift.FixSetValue
		}
		return Verdict{Evidence: []drift.Evidence{
			drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("Git declares %s; a server-side dry-run apply of Git's manifest shows the API server %s, as the live object does (dryRun in the snapshot)", c.show(d.Git), stored)),
			drift.Say(drift.EvidenceAPIServer, "no mutating webhook in the snapshot admits the object and no other field manager owns the path: the API server (defaulting, canonical forms, a CRD schema or conversion) stores it so"),
		}, Fix: fix}, true
	}

	// The same items in another order, written by nobody else.
	if d.Reordered != nil && len(d.NonArgoOwners()) == 0 && len(c.matchingWebhooks(d.Resource, res)) == 0 {
		items, _ := d.Reordered.Get(res.Live)
		n, _ := items.([]any)
		return Verdict{Evidence: []drift.Evidence{
			drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("the live %s holds the same %d items as Git in another order", d.Reordered, len(n))),
			drift.Say(drift.EvidenceAPIServer, "no other field manager wrote it and no mutating webhook admits the object: the order is the one the API server stored"),
			drift.Say(drift.EvidenceAPIServer, "listing the items in the stored order in Git makes both sides equal"),
		}, Fix: drift.FixSetValue}, true
	}

	// Same value, another spelling.
	if d.InGit && d.InLive {
		if how, ok := drift.SemanticallyEqual(d.Git, d.Live); ok {
			ev := []drift.Evidence{drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("Git writes %s, the API server stores %s: the same %s", c.show(d.Git), c.show(d.Live), how))}
			switch {
			case d.Builtin:
				ev = append(ev, drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("Argo CD only compares %s values of a built-in kind in canonical form when the whole object decodes into its type; this one does not (an unknown or mistyped field), so the spelling shows as drift", how)))
			case crd != nil && drift.Str(crd, "spec", "conversion", "strategy") == "Webhook" && storage != "" && storage != version:
				ev = append(ev, drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("CustomResourceDefinition %s stores %s as %s through its conversion webhook, which re-serialises the object in canonical form", drift.Str(crd, "metadata", "name"), version, storage)))
			default:
				if w := c.matchingWebhooks(d.Resource, res); len(w) > 0 && len(d.NonArgoOwners()) == 0 {
					return Verdict{}, false // a mutating webhook, not the API server, rewrote it
				}
				ev = append(ev, drift.Say(drift.EvidenceAPIServer, "no mutating webhook or other field manager explains the rewrite"))
			}
			ev = append(ev, drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("writing %s in Git makes both sides equal", c.show(d.Live))))
			return Verdict{Evidence: ev, Fix: drift.FixSetValue}, true
		}
	}

	// Git declares an empty value the API server drops.
	if d.InGit && !d.InLive && drift.IsEmpty(d.Git) {
		return Verdict{Evidence: []drift.Evidence{
			drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("Git declares %s = %s; the API server does not store empty values, so the live object has no %s", d.Path, drift.Brief(d.Git, 20), d.Path.Last())),
			drift.Say(drift.EvidenceAPIServer, "no field manager owns the path in the live object"),
		}, Fix: drift.FixRemoveField}, true
	}

	// A field the schema does not declare: the API server prunes or drops it.
	if d.InGit && !d.InLive {
		if d.Builtin && d.Undeclared {
			return Verdict{Evidence: []drift.Evidence{
				drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("%s is not a field of %s %s, so the API server drops it", d.Path, drift.Str(res.Target, "apiVersion"), d.Resource.Kind)),
			}, Fix: drift.FixRemoveField}, true
		}
		if schema != nil {
			if node, preserve := schemaAt(schema, d.Path); node == nil && !preserve {
				return Verdict{Evidence: []drift.Evidence{
					drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("CustomResourceDefinition %s (version %s) does not declare %s, so the API server prunes it", drift.Str(crd, "metadata", "name"), version, d.Path)),
				}, Fix: drift.FixRemoveField}, true
			}
		}
	}

	// CRD schema defaults.
	if schema != nil && d.InLive {
		node, _ := schemaAt(schema, d.Path)
		if d.InGit {
			if filled := withDefaults(node, d.Git, 0); drift.Equal(filled, d.Live) {
				return Verdict{Evidence: []drift.Evidence{
					drift.Say(drift.EvidenceDefault, fmt.Sprintf("CustomResourceDefinition %s fills schema defaults into %s: with them, Git's value equals the live one", drift.Str(crd, "metadata", "name"), d.Path)),
				}, Fix: drift.FixSetValue}, true
			}
		} else if def, ok := node["default"]; ok && drift.Equal(def, d.Live) && len(d.NonArgoOwners()) == 0 {
			return Verdict{Evidence: []drift.Evidence{
				drift.Say(drift.EvidenceDefault, fmt.Sprintf("CustomResourceDefinition %s defaults %s to %s", drift.Str(crd, "metadata", "name"), d.Path, drift.Brief(def, 40))),
			}, Fix: drift.FixSetValue}, true
		}
	}
	return Verdict{}, false
}

// allocatedByServer explains a value the API server allocated at creation
// where Git declares none, or an empty one: removing Git's empty value
// changes nothing; a value Git does not declare is the server's to keep.
func (c *Case) allocatedByServer() (Verdict, bool) {
	d := c.Diff
	if !d.InLive || (d.InGit && !drift.IsEmpty(d.Git)) || len(d.NonArgoOwners()) > 0 {
		return Verdict{}, false
	}
	// The fields the API server (or, for a Route, OpenShift's) allocates
	// are the allocation entries of the allow-list of hand-overs, each with
	// where it is documented.
	a, ok := drift.HandOverAt(drift.GrantAllocation, d.Resource, d.Path)
	if !ok {
		return Verdict{}, false
	}
	ev := []drift.Evidence{drift.Say(drift.EvidenceAllocation, fmt.Sprintf("%s allocates %s when the object is created and Git leaves it empty (%s); the live object has %s", a.Writer, d.Path, a.Source, c.show(d.Live))),
		drift.Say(drift.EvidenceManager, "no field manager other than Argo CD's own request owns it: no one edited the object")}
	if d.InGit {
		ev = append(ev, drift.Say(drift.EvidenceAPIServer, fmt.Sprintf("Git declares %s = %s, which asks for nothing: removing it changes nothing in the cluster", d.Path, drift.Brief(d.Git, 20))))
		return Verdict{Evidence: ev, Fix: drift.FixRemoveField}, true
	}
	return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference, Grant: a.Writer + " allocates it"}, true
}
