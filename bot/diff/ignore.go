package diff

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gobwas/glob"
	"github.com/itchyny/gojq"
	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/drift"
)

const (
	cmName            = "argocd-cm"
	keyTracking       = "application.resourceTrackingMethod"
	keyInstanceLabel  = "application.instanceLabelKey"
	keyCompareOptions = "resource.compareoptions"
	keyIgnorePrefix   = "resource.customizations.ignoreDifferences."
	keyLegacyCustom   = "resource.customizations"
	keyKnownPrefix    = "resource.customizations.knownTypeFields."
	jqTimeout         = time.Second
)

// ReadSettings reads tracking, compare options and system-level ignore rules
// from the argocd-cm ConfigMap among the cluster objects. Without one, Argo CD
// 3.x defaults apply.
func ReadSettings(cluster []drift.Object) (drift.Settings, []drift.IgnoreRule, error) {
	s := drift.Settings{TrackingMethod: "annotation", InstanceLabelKey: "app.kubernetes.io/instance", StatusIgnore: "all"}
	var cm drift.Object
	for _, o := range cluster {
		if drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "apiVersion") == "v1" && drift.Str(o, "metadata", "name") == cmName {
			cm = o
			break
		}
	}
	if cm == nil {
		return s, nil, nil
	}
	s.FromConfigMap = true
	data := drift.Map(cm, "data")
	if v := strings.TrimSpace(drift.Str(data, keyTracking)); v != "" {
		switch v {
		case "annotation", "label", "annotation+label":
			s.TrackingMethod, s.TrackingSet = v, true
		default:
			return s, nil, fmt.Errorf("argocd-cm %s: unknown tracking method %q (want annotation, label or annotation+label)", keyTracking, v)
		}
	}
	if v := strings.TrimSpace(drift.Str(data, keyInstanceLabel)); v != "" {
		s.InstanceLabelKey = v
	}
	if v := drift.Str(data, keyCompareOptions); v != "" {
		var co struct {
			IgnoreAggregatedRoles     bool   `yaml:"ignoreAggregatedRoles"`
			IgnoreResourceStatusField string `yaml:"ignoreResourceStatusField"`
		}
		if err := yaml.Unmarshal([]byte(v), &co); err != nil {
			return s, nil, fmt.Errorf("argocd-cm %s: %w", keyCompareOptions, err)
		}
		s.IgnoreAggregatedRoles = co.IgnoreAggregatedRoles
		switch strings.ToLower(co.IgnoreResourceStatusField) {
		case "", "all":
		case "crd":
			s.StatusIgnore = "crd"
		case "none", "off", "false":
			s.StatusIgnore = "none"
		}
	}
	holder := drift.RefOf(cm)
	var rules []drift.IgnoreRule
	for _, k := range drift.SortedKeys(data) {
		raw, _ := data[k].(string)
		switch {
		case strings.HasPrefix(k, keyIgnorePrefix):
			group, kind := splitOverrideKey(strings.TrimPrefix(k, keyIgnorePrefix))
			r, err := parseSystemRule(raw, holder, drift.Pointer{"data", k}, group, kind)
			if err != nil {
				return s, nil, fmt.Errorf("argocd-cm %s: %w", k, err)
			}
			if statusOnly(r) {
				continue // Argo CD's own ignoreResourceStatusField rule; status is never compared here
			}
			rules = append(rules, r)
		case strings.HasPrefix(k, keyKnownPrefix):
			group, kind := splitOverrideKey(strings.TrimPrefix(k, keyKnownPrefix))
			var fields []drift.KnownTypeField
			if err := yaml.Unmarshal([]byte(raw), &fields); err != nil {
				return s, nil, fmt.Errorf("argocd-cm %s: %w", k, err)
			}
			s.AddKnownTypeFields(group, kind, fields)
		case k == keyLegacyCustom:
			var legacy map[string]struct {
				IgnoreDifferences string                 `yaml:"ignoreDifferences"`
				KnownTypeFields   []drift.KnownTypeField `yaml:"knownTypeFields"`
			}
			if err := yaml.Unmarshal([]byte(raw), &legacy); err != nil {
				return s, nil, fmt.Errorf("argocd-cm %s: %w", k, err)
			}
			for gk, c := range legacy {
				group, kind := splitLegacyKey(gk)
				s.AddKnownTypeFields(group, kind, c.KnownTypeFields)
			}
			gks := make([]string, 0, len(legacy))
			for gk := range legacy {
				gks = append(gks, gk)
			}
			sort.Strings(gks)
			for _, gk := range gks {
				if legacy[gk].IgnoreDifferences == "" {
					continue
				}
				group, kind := splitLegacyKey(gk)
				r, err := parseSystemRule(legacy[gk].IgnoreDifferences, holder, drift.Pointer{"data", k}, group, kind)
				if err != nil {
					return s, nil, fmt.Errorf("argocd-cm %s (%s): %w", k, gk, err)
				}
				rules = append(rules, r)
			}
		}
	}
	return s, rules, nil
}

// statusOnly reports whether a rule ignores nothing but /status, as the rule
// Argo CD derives from ignoreResourceStatusField does.
func statusOnly(r drift.IgnoreRule) bool {
	return len(r.JSONPointers) == 1 && r.JSONPointers[0] == "/status" && len(r.JQPathExpressions) == 0 && len(r.ManagedFieldsManagers) == 0
}

// splitLegacyKey turns a resource.customizations key, "apps/Deployment" or
// "Service", into its group and kind.
func splitLegacyKey(gk string) (group, kind string) {
	if i := strings.LastIndexByte(gk, '/'); i >= 0 {
		return gk[:i], gk[i+1:]
	}
	return "", gk
}

// splitOverrideKey turns "apps_Deployment" into (apps, Deployment), "Service"
// into ("", Service) and "all" into (*, *).
func splitOverrideKey(k string) (group, kind string) {
	if k == "all" {
		return "*", "*"
	}
	if i := strings.LastIndexByte(k, '_'); i >= 0 {
		return k[:i], k[i+1:]
	}
	return "", k
}

func parseSystemRule(raw string, holder drift.Ref, at drift.Pointer, group, kind string) (drift.IgnoreRule, error) {
	var spec struct {
		JSONPointers          []string `yaml:"jsonPointers"`
		JQPathExpressions     []string `yaml:"jqPathExpressions"`
		ManagedFieldsManagers []string `yaml:"managedFieldsManagers"`
	}
	if err := yaml.Unmarshal([]byte(raw), &spec); err != nil {
		return drift.IgnoreRule{}, fmt.Errorf("read ignore rule: %w", err)
	}
	return drift.IgnoreRule{
		Holder: holder, Path: at, System: true, Group: group, Kind: kind,
		JSONPointers: spec.JSONPointers, JQPathExpressions: spec.JQPathExpressions,
		ManagedFieldsManagers: spec.ManagedFieldsManagers,
	}, nil
}

// applicationRules reads spec.ignoreDifferences of the Application.
func applicationRules(app drift.Object) ([]drift.IgnoreRule, error) {
	holder := drift.RefOf(app)
	var rules []drift.IgnoreRule
	for i, e := range drift.List(app, "spec", "ignoreDifferences") {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("application %s: spec.ignoreDifferences[%d] is not an object", holder.Name, i)
		}
		r := drift.IgnoreRule{
			Holder: holder, Path: drift.Pointer{"spec", "ignoreDifferences", fmt.Sprint(i)},
			Group: drift.Str(m, "group"), Kind: drift.Str(m, "kind"),
			Name: drift.Str(m, "name"), Namespace: drift.Str(m, "namespace"),
		}
		var err error
		if r.JSONPointers, err = stringList(m, "jsonPointers"); err == nil {
			if r.JQPathExpressions, err = stringList(m, "jqPathExpressions"); err == nil {
				r.ManagedFieldsManagers, err = stringList(m, "managedFieldsManagers")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("application %s: spec.ignoreDifferences[%d]: %w", holder.Name, i, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// annotationRules reads the ignore rules resources carry in Git as their
// argocd.argoproj.io/ignore-differences annotation, as Argo CD 3.6 does: only
// jsonPointers are read; a value that does not parse, or names no pointer, is
// no rule (Argo CD skips it without an error). Each rule names its resource by
// group, kind, name and namespace.
func annotationRules(s *drift.Snapshot) []drift.IgnoreRule {
	var rules []drift.IgnoreRule
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Target == nil {
			continue
		}
		raw := drift.Annotations(r.Target)[drift.AnnotationIgnoreDifferences]
		if raw == "" {
			continue
		}
		var v struct {
			JSONPointers []string `json:"jsonPointers"`
		}
		if err := sigsyaml.Unmarshal([]byte(raw), &v); err != nil || len(v.JSONPointers) == 0 {
			continue
		}
		ref := r.Ref()
		rules = append(rules, drift.IgnoreRule{
			Holder: ref, Path: drift.Pointer{"metadata", "annotations", drift.AnnotationIgnoreDifferences}, Annotation: true,
			Group: ref.Group, Kind: ref.Kind, Name: ref.Name, Namespace: ref.Namespace,
			JSONPointers: v.JSONPointers,
		})
	}
	return rules
}

func stringList(m map[string]any, key string) ([]string, error) {
	raw, ok := m[key]
	if !ok || raw == nil {
		return nil, nil
	}
	l, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a list of strings", key)
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s must be a list of strings", key)
		}
		out = append(out, s)
	}
	return out, nil
}

func ruleMatches(r *drift.IgnoreRule, ref drift.Ref) bool {
	if !globMatch(r.Group, ref.Group) || !globMatch(r.Kind, ref.Kind) {
		return false
	}
	if r.Name != "" && r.Name != ref.Name {
		return false
	}
	return r.Namespace == "" || r.Namespace == ref.Namespace
}

// globs caches compiled group and kind patterns; a pattern that does not
// compile is kept as nil and matches nothing.
var globs sync.Map

// globMatch matches an ignore rule's group or kind as Argo CD's normalizer
// does: a glob (gobwas/glob, no separators), so "*", "apps*" and "*Set"
// all select; a pattern that does not compile selects nothing.
func globMatch(pattern, s string) bool {
	if pattern == s || pattern == "*" {
		return true
	}
	g, ok := globs.Load(pattern)
	if !ok {
		var m any
		if c, err := glob.Compile(pattern); err == nil {
			m = c
		}
		g, _ = globs.LoadOrStore(pattern, m)
	}
	c, _ := g.(interface{ Match(string) bool })
	return c != nil && c.Match(s)
}

// rulePointers resolves a rule's jsonPointers and jqPathExpressions against the
// target and the live object. A pointer or expression that does not parse
// covers nothing, as in Argo CD.
func rulePointers(r *drift.IgnoreRule, target, live drift.Object) []drift.Pointer {
	var out []drift.Pointer
	seen := map[string]bool{}
	addP := func(p drift.Pointer) {
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	for _, s := range r.JSONPointers {
		if p, err := drift.ParsePointer(s); err == nil {
			addP(p)
		}
	}
	for _, expr := range r.JQPathExpressions {
		for _, doc := range []drift.Object{target, live} {
			ps, _ := JQPaths(expr, doc)
			for _, p := range ps {
				addP(p)
			}
		}
	}
	return out
}

// unparsedJQ returns the first jq path expression of the rules that does not
// parse or compile as Argo CD reads it (del(<expr>)). Argo CD builds one
// normalizer from every rule of the application and argocd-cm before it
// compares anything, so such an expression fails the whole comparison with a
// ComparisonError, whichever resources the rule names.
func unparsedJQ(rules []drift.IgnoreRule) error {
	for i := range rules {
		r := &rules[i]
		for j, expr := range r.JQPathExpressions {
			q, err := gojq.Parse("del(" + expr + ")")
			if err == nil {
				_, err = gojq.Compile(q)
			}
			if err != nil {
				return fmt.Errorf("%s %s, ignore rule at %s, jqPathExpressions[%d] %q does not parse (%v): Argo CD cannot compare the application until it is fixed (ComparisonError)",
					r.Holder.Kind, r.Holder.Name, r.Path, j, expr, err)
			}
		}
	}
	return nil
}

// JQPaths returns the paths a jq path expression selects in doc, as Argo CD's
// del(<expr>) would remove them.
func JQPaths(expr string, doc drift.Object) ([]drift.Pointer, error) {
	q, err := gojq.Parse("path(" + expr + ")")
	if err != nil {
		return nil, fmt.Errorf("parse jq expression %q: %w", expr, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("compile jq expression %q: %w", expr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), jqTimeout)
	defer cancel()
	iter := code.RunWithContext(ctx, toJQ(doc))
	var out []drift.Pointer
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			return out, fmt.Errorf("run jq expression %q: %w", expr, err)
		}
		steps, ok := v.([]any)
		if !ok {
			continue
		}
		p := make(drift.Pointer, 0, len(steps))
		valid := true
		for _, s := range steps {
			switch x := s.(type) {
			case string:
				p = append(p, x)
			case int:
				p = append(p, fmt.Sprint(x))
			case float64:
				p = append(p, fmt.Sprint(int(x)))
			default:
				valid = false
			}
		}
		if valid {
			out = append(out, p)
		}
	}
	return out, nil
}

// toJQ converts values to the types gojq accepts (int rather than int64).
func toJQ(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = toJQ(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = toJQ(e)
		}
		return l
	case int64:
		return int(x)
	}
	return v
}

// keyUpdatesPrefix and keyUpdatesEnabled are argocd-cm's keys for the paths
// whose changes do not make Argo CD refresh an application.
const (
	keyUpdatesPrefix  = "resource.customizations.ignoreResourceUpdates."
	keyUpdatesEnabled = "resource.ignoreResourceUpdatesEnabled"
)

// ReadResourceUpdateRules reads resource.customizations.ignoreResourceUpdates.*
// from the argocd-cm ConfigMap among the cluster objects: the paths whose
// changes do not trigger a refresh of the application. They hide nothing from
// the diff. None are returned when resource.ignoreResourceUpdatesEnabled is
// "false" (Argo CD 3.x enables them by default).
func ReadResourceUpdateRules(cluster []drift.Object) ([]drift.IgnoreRule, error) {
	var cm drift.Object
	for _, o := range cluster {
		if drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "apiVersion") == "v1" && drift.Str(o, "metadata", "name") == cmName {
			cm = o
			break
		}
	}
	data := drift.Map(cm, "data")
	if strings.EqualFold(strings.TrimSpace(drift.Str(data, keyUpdatesEnabled)), "false") {
		return nil, nil
	}
	holder := drift.RefOf(cm)
	var rules []drift.IgnoreRule
	for _, k := range drift.SortedKeys(data) {
		if !strings.HasPrefix(k, keyUpdatesPrefix) {
			continue
		}
		raw, _ := data[k].(string)
		group, kind := splitOverrideKey(strings.TrimPrefix(k, keyUpdatesPrefix))
		r, err := parseSystemRule(raw, holder, drift.Pointer{"data", k}, group, kind)
		if err != nil {
			return nil, fmt.Errorf("argocd-cm %s: %w", k, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// RuleApplies reports whether an ignore rule's group, kind, name and
// namespace select the resource, as Argo CD matches them.
func RuleApplies(r *drift.IgnoreRule, ref drift.Ref) bool { return ruleMatches(r, ref) }

// TargetTracking says whether a target (nil: none) carries the tracking-id
// annotation, and the instance label with the application's name: what
// inferTracking reads of each target.
func TargetTracking(st drift.Settings, app drift.Object, t drift.Object) (annotated, labelled bool) {
	if t == nil {
		return false, false
	}
	_, annotated = drift.Annotations(t)["argocd.argoproj.io/tracking-id"]
	name := drift.Str(app, "metadata", "name")
	return annotated, name != "" && drift.Labels(t)[st.InstanceLabelKey] == name
}

// SharedRules returns the ignore rules of the Application and of argocd-cm
// (the ones that may apply to many resources; a resource's own annotation
// rule applies to it alone), in Compare's order, and the settings Compare
// reads, before it infers the tracking method from the targets.
func SharedRules(s *drift.Snapshot) ([]drift.IgnoreRule, drift.Settings, error) {
	settings, cmRules, err := ReadSettings(s.Cluster)
	if err != nil {
		return nil, settings, err
	}
	appRules, err := applicationRules(s.Application)
	if err != nil {
		return nil, settings, err
	}
	return append(appRules, cmRules...), settings, nil
}

// inferTracking decides the tracking method argocd-cm does not name from
// the application's targets: Argo CD writes its tracking metadata into the
// desired state it compares, so a target with the tracking-id annotation
// shows annotation tracking (with the instance label too when both are set:
// annotation+label), and targets that carry only the instance label with the
// application's name show label tracking, the default before Argo CD 3.0.
// With no target showing either, the 3.x default (annotation) stays.
func inferTracking(st *drift.Settings, s *drift.Snapshot) {
	if st.TrackingSet {
		return
	}
	var annotated, labelled bool
	if s.Part != nil {
		annotated, labelled = s.Part.Annotated, s.Part.Labelled
	} else {
		for i := range s.Resources {
			a, l := TargetTracking(*st, s.Application, s.Resources[i].Target)
			annotated, labelled = annotated || a, labelled || l
		}
	}
	switch {
	case annotated && labelled:
		st.TrackingSeen = "annotation+label"
	case annotated:
		st.TrackingSeen = "annotation"
	case labelled:
		st.TrackingSeen = "label"
	default:
		return
	}
	st.TrackingMethod = st.TrackingSeen
}

// argocd-cm's Kustomize keys.
const (
	keyKustomizeBuildOptions  = "kustomize.buildOptions"
	keyKustomizePathPrefix    = "kustomize.path."
	keyKustomizeVersionPrefix = "kustomize.version." // deprecated spelling of kustomize.path.
)

// KustomizeBuildOptions returns the options Argo CD passes to `kustomize
// build` for the Application's source at srcPath: argocd-cm's
// kustomize.buildOptions among the cluster objects, "" without argocd-cm or
// the key. Argo CD 3.2 and later pass that key whatever kustomize version the
// source names (spec.source.kustomize.version); a version argocd-cm does not
// register (kustomize.path.<version>) is an error, as Argo CD refuses it. A
// version whose own kustomize.buildOptions.<version> differs from the key is
// an error too: Argo CD before 3.2 passed that one instead, and which Argo CD
// runs is not known here.
func KustomizeBuildOptions(cluster []drift.Object, app drift.Object, srcPath string) (string, error) {
	var data map[string]any
	for _, o := range cluster {
		if drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "apiVersion") == "v1" && drift.Str(o, "metadata", "name") == cmName {
			data = drift.Map(o, "data")
			break
		}
	}
	opts := drift.Str(data, keyKustomizeBuildOptions)
	version := ""
	for _, s := range append([]any{drift.Map(app, "spec", "source")}, drift.List(app, "spec", "sources")...) {
		if m, ok := s.(map[string]any); ok && strings.Trim(drift.Str(m, "path"), "/") == strings.Trim(srcPath, "/") {
			version = drift.Str(m, "kustomize", "version")
			break
		}
	}
	if version == "" || data == nil {
		return opts, nil
	}
	_, byPath := data[keyKustomizePathPrefix+version]
	_, byVersion := data[keyKustomizeVersionPrefix+version]
	switch {
	case byPath && byVersion:
		return "", fmt.Errorf("argocd-cm registers kustomize version %s twice (%s%s and %s%s): Argo CD refuses its kustomize settings", version, keyKustomizePathPrefix, version, keyKustomizeVersionPrefix, version)
	case !byPath && !byVersion:
		return "", fmt.Errorf("the Application's source %s asks for kustomize version %s, which argocd-cm does not register (no %s%s): Argo CD refuses to build it", srcPath, version, keyKustomizePathPrefix, version)
	}
	if own, ok := data[keyKustomizeBuildOptions+"."+version].(string); ok && own != opts {
		return "", fmt.Errorf("argocd-cm %s.%s is %q and %s is %q: Argo CD 3.2 and later build kustomize version %s with the second, earlier releases with the first, and driftfix cannot tell which Argo CD builds it", keyKustomizeBuildOptions, version, own, keyKustomizeBuildOptions, opts, version)
	}
	return opts, nil
}
