package remediations

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/templates"
)

// FleetApp is an application's findings as a cycle keeps them: Instance
// and App (namespace/name) name it.
type FleetApp struct {
	Instance, App string
	Findings      []drift.Kept
}

// FleetMin is how many applications one source must drift before the
// digest names it once, with one platform fix, instead of app by app.
const FleetMin = 3

// Fleet groups findings that share one source across applications: a
// mutating webhook, or a controller (field manager) writing the same kind.
// Fleets are per instance: one webhook name on two instances is two webhooks.
func Fleet(apps iter.Seq[FleetApp], min int) []templates.FleetLine {
	type key struct {
		instance, source string
		cause            drift.Cause
		by               classifiers.FleetBy
		kind             string
	}
	byApp := map[key]map[string]bool{}
	paths := map[key]map[string]bool{}
	for r := range apps {
		for _, f := range r.Findings {
			source, ok := classifiers.FleetSource(f.Cause, f.Evidence, f.Writer)
			if !ok {
				continue
			}
			k := key{instance: r.Instance, source: source, cause: f.Cause, by: classifiers.Of(f.Cause).Fleet, kind: f.Resource.Kind}
			if byApp[k] == nil {
				byApp[k], paths[k] = map[string]bool{}, map[string]bool{}
			}
			byApp[k][r.App] = true
			paths[k][f.Path] = true
		}
	}
	var out []templates.FleetLine
	for k, set := range byApp {
		if len(set) < min {
			continue
		}
		ps := slices.Sorted(maps.Keys(paths[k]))
		var sug string
		if k.by == classifiers.FleetWebhook {
			sug = fmt.Sprintf("one argocd-cm entry resource.customizations.ignoreDifferences for %s listing %s (what the webhook sets), or make the webhook leave fields Git declares alone, instead of one fix per application", k.kind, strings.Join(ps, ", "))
		} else {
			mgr := strings.TrimPrefix(k.source, "controller ")
			sug = fmt.Sprintf("one argocd-cm entry resource.customizations.ignoreDifferences for %s with managedFieldsManagers: [%s], instead of one fix per application", k.kind, mgr)
		}
		out = append(out, templates.FleetLine{Instance: k.instance, Cause: k.cause, Source: k.source + " on " + k.kind, Apps: len(set), Suggestion: sug})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Apps != out[j].Apps {
			return out[i].Apps > out[j].Apps
		}
		return out[i].Source < out[j].Source
	})
	return out
}
