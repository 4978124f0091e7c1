package ignores

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
)

// The resource.compareoptions settings the inventory reports.
const (
	keyCompareOptions   = "resource.compareoptions"
	optAggregatedRoles  = "ignoreAggregatedRoles"
	optStatusField      = "ignoreResourceStatusField"
	optUpdatesOnDiff    = "ignoreDifferencesOnResourceUpdates"
	rbacGroup           = "rbac.authorization.k8s.io"
	compareOptionsField = "data." + keyCompareOptions
)

// compareOptions reports each resource.compareoptions setting of argocd-cm
// that hides something from the diff. What it hides is what the diff shows
// once the setting is turned off: the same comparison is run again on a copy
// of the snapshot whose argocd-cm has it off, and the differences only that
// comparison finds are the setting's.
func compareOptions(s *drift.Snapshot, app string, cmp *drift.Comparison, sens drift.Sensitivity, get func(string, Rule) *ruleAcc) error {
	cmIdx := -1
	for i, o := range s.Cluster {
		if drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "apiVersion") == "v1" && drift.Str(o, "metadata", "name") == "argocd-cm" {
			cmIdx = i
			break
		}
	}
	if cmIdx < 0 {
		return nil
	}
	cm := s.Cluster[cmIdx]
	raw := drift.Str(cm, "data", keyCompareOptions)
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	var opts map[string]any
	if err := yaml.Unmarshal([]byte(raw), &opts); err != nil {
		return fmt.Errorf("argocd-cm %s: %w", keyCompareOptions, err)
	}
	holder := drift.RefOf(cm)
	have := map[string]bool{}
	for _, d := range cmp.Diffs {
		have[diffKey(&d)] = true
	}
	newRule := func(opt, value string, scope Scope, effect string) *ruleAcc {
		r := Rule{Kind: KindCompareOption, Declared: Declared{Holder: holder, Key: compareOptionsField},
			Scope: scope, Option: opt, Value: value, Effect: effect, at: drift.Pointer{"data", keyCompareOptions}}
		return get(KindCompareOption+"\x01"+holder.String()+"\x01"+opt+"\x01"+value, r)
	}
	if v, ok := opts[optAggregatedRoles].(bool); ok && v {
		a := newRule(optAggregatedRoles, "true", Scope{Group: rbacGroup, Kind: "ClusterRole"},
			"Argo CD does not compare the rules of a ClusterRole that has an aggregationRule")
		hidden, err := hiddenBy(s, cmIdx, opts, optAggregatedRoles, false, have)
		if err != nil {
			return err
		}
		for i := range s.Resources {
			res := &s.Resources[i]
			ref := res.Ref()
			if ref.Group != rbacGroup || ref.Kind != "ClusterRole" {
				continue
			}
			if drift.Map(res.Target, "aggregationRule") == nil && drift.Map(res.Live, "aggregationRule") == nil {
				continue
			}
			addCovered(a, s, app, i, []drift.Pointer{{"rules"}}, hidden[i], drift.Settings{}, sens)
		}
	}
	if v, ok := opts[optStatusField].(string); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "none", "off", "false":
			// status is compared: the setting hides nothing
		default:
			crdOnly := strings.EqualFold(strings.TrimSpace(v), "crd")
			effect := "Argo CD does not compare status of any resource"
			if crdOnly {
				effect = "Argo CD does not compare status of custom resources"
			}
			a := newRule(optStatusField, v, Scope{Group: "*", Kind: "*"}, effect)
			hidden, err := hiddenBy(s, cmIdx, opts, optStatusField, "none", have)
			if err != nil {
				return err
			}
			for i := range s.Resources {
				ref := s.Resources[i].Ref()
				if crdOnly && isBuiltinGroup(ref.Group) {
					continue
				}
				a.apps[app] = true
				if len(hidden[i]) > 0 {
					addCovered(a, s, app, i, nil, hidden[i], drift.Settings{}, sens)
				}
			}
		}
	}
	if v, ok := opts[optUpdatesOnDiff].(bool); ok && v {
		a := newRule(optUpdatesOnDiff, "true", Scope{Group: "*", Kind: "*"},
			"a change only to paths an ignoreDifferences rule covers does not make Argo CD refresh the application; it hides nothing from the diff")
		if len(s.Resources) > 0 {
			a.apps[app] = true
		}
	}
	return nil
}

// hiddenBy compares the snapshot again with one compareoptions setting
// changed, and returns per resource the differences only that comparison
// finds.
func hiddenBy(s *drift.Snapshot, cmIdx int, opts map[string]any, opt string, off any, have map[string]bool) (map[int][]*drift.Difference, error) {
	changed := make(map[string]any, len(opts))
	for k, v := range opts {
		changed[k] = v
	}
	changed[opt] = off
	raw, err := yaml.Marshal(changed)
	if err != nil {
		return nil, fmt.Errorf("argocd-cm %s: %w", keyCompareOptions, err)
	}
	cm := drift.DeepCopy(s.Cluster[cmIdx]).(map[string]any)
	drift.Map(cm, "data")[keyCompareOptions] = string(raw)
	c := *s
	c.Cluster = append([]drift.Object(nil), s.Cluster...)
	c.Cluster[cmIdx] = cm
	cmp, _, err := diff.Compare(&c)
	if err != nil {
		return nil, fmt.Errorf("compare with %s turned off: %w", opt, err)
	}
	out := map[int][]*drift.Difference{}
	for di := range cmp.Diffs {
		d := &cmp.Diffs[di]
		if !have[diffKey(d)] && !d.Unexplained {
			out[d.Index] = append(out[d.Index], d)
		}
	}
	return out, nil
}

func diffKey(d *drift.Difference) string {
	return fmt.Sprintf("%d\x00%s", d.Index, d.Path)
}
