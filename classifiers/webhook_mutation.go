package classifiers

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// WebhookMutation finds fields a mutating admission webhook added or changed
// when the object was admitted.
var WebhookMutation = Classifier{
	Name:     drift.CauseWebhookMutation,
	Doc:      "a mutating admission webhook added or changed it when the object was admitted",
	Classify: classifyWebhookMutation,
}

// webhookMatch is one webhook of a MutatingWebhookConfiguration that admits an object.
type webhookMatch struct {
	config   string
	webhook  string
	evidence []string
}

func classifyWebhookMutation(c *Case) (Verdict, bool) {
	d := c.Diff
	if d == nil || !d.InLive || len(d.Path) == 0 {
		return Verdict{}, false
	}
	if len(d.NonArgoOwners()) > 0 {
		return Verdict{}, false // another manager wrote it through the API, not at admission
	}
	matches := c.matchingWebhooks(d.Resource, c.Resource())
	if len(matches) == 0 {
		return Verdict{}, false
	}
	m := matches[0]
	ev := append([]string{}, m.evidence...)
	if len(d.Owners) == 0 {
		ev = append(ev, fmt.Sprintf("no field manager owns %s: the API server records managedFields before mutating admission, so a field a webhook adds has no owner", d.Path))
	} else {
		ev = append(ev, fmt.Sprintf("%s is recorded under %s, the requesting manager: the API server records managedFields before mutating admission, so a webhook's change is attributed to the request", d.Path, ownersText(d.Owners)))
	}
	if len(matches) > 1 {
		ev = append(ev, fmt.Sprintf("%d other mutating webhooks also admit this object", len(matches)-1))
	}
	ev = append(ev, c.dryRunNote()...)
	if d.InGit && drift.EditedText(d.Git, d.Live) {
		ev = append(ev, fmt.Sprintf("the webhook rewrote part of the text Git declares at %s and kept the rest: what it substituted is its own content, not a form of Git's value, so it is not written into Git", d.Path))
		return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference}, true
	}
	if d.InGit {
		ev = append(ev, fmt.Sprintf("Git declares %s, the webhook stores %s", c.show(d.Git), c.show(d.Live)))
		return Verdict{Evidence: ev, Fix: drift.FixSetValue}, true
	}
	ev = append(ev, fmt.Sprintf("Git does not declare %s; the webhook adds %s on every apply", d.Path, c.show(d.Live)))
	return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference}, true
}

// matchingWebhooks returns the mutating webhooks whose rules, namespaceSelector
// and objectSelector admit the resource on create or update.
func (in *Input) matchingWebhooks(ref drift.Ref, res *drift.Resource) []webhookMatch {
	obj := res.Live
	if obj == nil {
		obj = res.Target
	}
	_, version := drift.SplitAPIVersion(drift.Str(obj, "apiVersion"))
	resource := plural(ref.Kind)
	if crd := in.CRD(ref); crd != nil {
		if p := drift.Str(crd, "spec", "names", "plural"); p != "" {
			resource = p
		}
	}
	nsLabels := map[string]string{}
	nsKnown := false
	if ref.Namespace != "" {
		nsLabels["kubernetes.io/metadata.name"] = ref.Namespace
		if ns := in.namespaces[ref.Namespace]; ns != nil {
			nsKnown = true
			for k, v := range drift.Labels(ns) {
				nsLabels[k] = v
			}
		}
	}
	objLabels := drift.Labels(obj)
	var out []webhookMatch
	for _, cfg := range in.webhooks {
		for _, w := range drift.List(cfg, "webhooks") {
			wm, ok := w.(map[string]any)
			if !ok {
				continue
			}
			rule, ok := matchRule(wm, ref.Group, version, resource, ref.Namespace != "")
			if !ok {
				continue
			}
			nsSel := drift.Map(wm, "namespaceSelector")
			if ref.Namespace != "" {
				if ok, err := selectorMatches(nsSel, nsLabels); err != nil || !ok {
					continue
				}
			}
			objSel := drift.Map(wm, "objectSelector")
			if ok, err := selectorMatches(objSel, objLabels); err != nil || !ok {
				continue
			}
			name := drift.Str(cfg, "metadata", "name")
			ev := []string{fmt.Sprintf("MutatingWebhookConfiguration %s (webhook %s) admits this object: rule %s", name, drift.Str(wm, "name"), rule)}
			if ref.Namespace != "" && len(nsSel) > 0 {
				where := fmt.Sprintf("Namespace %s (%s)", ref.Namespace, labelsText(nsLabels))
				if !nsKnown {
					where = fmt.Sprintf("Namespace %s (labels not collected; only kubernetes.io/metadata.name known)", ref.Namespace)
				}
				ev = append(ev, fmt.Sprintf("its namespaceSelector %s matches %s", selectorText(nsSel), where))
			}
			if len(objSel) > 0 {
				ev = append(ev, fmt.Sprintf("its objectSelector %s matches the object's labels", selectorText(objSel)))
			}
			out = append(out, webhookMatch{config: name, webhook: drift.Str(wm, "name"), evidence: ev})
		}
	}
	return out
}

// matchRule finds a rule that admits group/version/resource on CREATE or UPDATE.
func matchRule(webhook map[string]any, group, version, resource string, namespaced bool) (string, bool) {
	for _, r := range drift.List(webhook, "rules") {
		rm, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if !listHas(rm, "apiGroups", group) || !listHas(rm, "apiVersions", version) || !listHas(rm, "resources", resource) {
			continue
		}
		if !listHas(rm, "operations", "CREATE") && !listHas(rm, "operations", "UPDATE") {
			continue
		}
		switch drift.Str(rm, "scope") {
		case "Namespaced":
			if !namespaced {
				continue
			}
		case "Cluster":
			if namespaced {
				continue
			}
		}
		g := group
		if g == "" {
			g = "core"
		}
		var ops []string
		for _, o := range drift.List(rm, "operations") {
			ops = append(ops, fmt.Sprint(o))
		}
		return fmt.Sprintf("%s/%s %s on %s", g, version, resource, strings.Join(ops, ", ")), true
	}
	return "", false
}

func listHas(m map[string]any, key, want string) bool {
	for _, v := range drift.List(m, key) {
		if s, ok := v.(string); ok && (s == want || s == "*") {
			return true
		}
	}
	return false
}
