package remediations

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// A platform fix ends one finding shared by many applications (a mutating
// webhook, or a controller writing the same kind) with one system-level
// ignore rule in argocd-cm, instead of one ignore-difference per application.
// Planning it is pure: the cycle reads the platform repository and
// re-diagnoses the applications it fixes.

// PlatformFinding is one application's finding a platform rule is to end,
// with the desired and live objects of the resource it is on.
type PlatformFinding struct {
	App          string // the application, as the cycle names it
	Finding      drift.Finding
	Target, Live drift.Object
	// DryRun is the API server's answer to a server-side dry run of the
	// resource's Git manifest, as the snapshot holds it (nil: none).
	DryRun drift.Object
	// Writers are the application's policy writers (its Sensitivity's).
	Writers []drift.Writer
}

// PlatformRule is the argocd-cm entry
// resource.customizations.ignoreDifferences.<group_kind> for one kind.
type PlatformRule struct {
	Group, Kind           string
	JSONPointers          []string
	JQPathExpressions     []string
	ManagedFieldsManagers []string
}

// IgnorePrefix starts argocd-cm's keys of system-level ignore rules.
const IgnorePrefix = "resource.customizations.ignoreDifferences."

// Key is the argocd-cm key of the rule: the prefix and group_kind (the kind
// alone for the core group).
func (r PlatformRule) Key() string {
	if r.Group == "" {
		return IgnorePrefix + r.Kind
	}
	return IgnorePrefix + r.Group + "_" + r.Kind
}

// IgnoreRule is the rule as the diff stage reads it from argocd-cm.
func (r PlatformRule) IgnoreRule() drift.IgnoreRule {
	return drift.IgnoreRule{System: true, Group: r.Group, Kind: r.Kind, JSONPointers: r.JSONPointers,
		JQPathExpressions: r.JQPathExpressions, ManagedFieldsManagers: r.ManagedFieldsManagers}
}

// Value is the rule as argocd-cm holds it: a YAML text.
func (r PlatformRule) Value() string {
	var b strings.Builder
	for _, l := range []struct {
		key  string
		list []string
	}{{"jsonPointers", r.JSONPointers}, {"jqPathExpressions", r.JQPathExpressions}, {"managedFieldsManagers", r.ManagedFieldsManagers}} {
		if len(l.list) == 0 {
			continue
		}
		b.WriteString(l.key + ":\n")
		for _, s := range l.list {
			v, err := yamledit.Scalar(s)
			if err != nil {
				v = fmt.Sprintf("%q", s)
			}
			b.WriteString("- " + v + "\n")
		}
	}
	return b.String()
}

// PlanPlatformRule builds the one rule that ends every finding given (all of
// one cause and kind): exactly their paths (for a webhook, a named list item
// selected by name), never a field manager. It returns why
// not when the kind carries identity, routing or access
// (drift.PlatformRuleRefused), when a finding is of another kind or cause,
// when its diagnosis leaves it for a person, when ignoring it would hide
// a security-relevant path or hand it over without each application's own
// proven grant on the allow-list, as Sensitivity.Refuse judges an
// application's ignore-difference, or when the application's finding does
// not carry the proof its grant rests on (PlatformProof).
func PlanPlatformRule(fs []PlatformFinding, sens drift.Sensitivity) (PlatformRule, string) {
	if len(fs) == 0 {
		return PlatformRule{}, "no finding to end"
	}
	first := fs[0].Finding
	if why, refused := drift.PlatformRuleRefused(first.Resource); refused {
		return PlatformRule{}, why // a kind of identity, routing or access (#43)
	}
	r := PlatformRule{Group: first.Resource.Group, Kind: first.Resource.Kind}
	for _, pf := range fs {
		f := pf.Finding
		switch {
		case f.Resource.Group != r.Group || f.Resource.Kind != r.Kind:
			return PlatformRule{}, fmt.Sprintf("findings on %s and %s cannot share one rule", first.Resource, f.Resource)
		case f.Cause != first.Cause:
			return PlatformRule{}, fmt.Sprintf("findings of %s and %s cannot share one rule", first.Cause, f.Cause)
		case len(f.Path) == 0:
			return PlatformRule{}, wholeResource
		}
		if f.Remediation.Kind == drift.FixNone && f.Remediation.Reason != "" {
			return PlatformRule{}, pf.App + ": left for a person (" + f.Remediation.Reason + ")"
		}
		if why, refused := sens.Refuse(drift.FixIgnoreDifference, &f, pf.Target, pf.Live); refused {
			return PlatformRule{}, pf.App + ": " + why
		}
		// The rule names what the cause's fleet shares (Classifier.Fleet).
		switch classifiers.Of(f.Cause).Fleet {
		case classifiers.FleetWebhook:
			if expr, ok := jqForItem(pf.Live, f.Path); ok {
				r.JQPathExpressions = addString(r.JQPathExpressions, expr)
			} else {
				r.JSONPointers = addString(r.JSONPointers, f.Path.String())
			}
		case classifiers.FleetWriter:
			if len(f.Owners) == 0 {
				return PlatformRule{}, pf.App + ": no field manager owns " + f.Path.String()
			}
			m := f.Owners[len(f.Owners)-1].Manager
			if drift.ArgoCDManagers[m] {
				return PlatformRule{}, "the field manager " + m + " is Argo CD's own: ignoring what it writes would hide every sync"
			}
			// A platform rule names the paths the controller owns, never its
			// manager: a rule on a manager hides whatever anyone writes under
			// that name, on every object of the kind, later too.
			r.JSONPointers = addString(r.JSONPointers, f.Path.String())
		default:
			return PlatformRule{}, fmt.Sprintf("%s is not a cause one platform rule ends", f.Cause)
		}
		if _, why := PlatformProof(pf); why != "" {
			return PlatformRule{}, why // each application proves its own grant (#43)
		}
	}
	slices.Sort(r.JSONPointers)
	slices.Sort(r.JQPathExpressions)
	slices.Sort(r.ManagedFieldsManagers)
	return r, ""
}

func addString(l []string, s string) []string {
	if slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}

// JudgePlatformRule judges a system-level rule by what it covers in every
// resource of its kind it is given (from every application it applies to),
// as covers resolves it: it returns why not when any covered path would hide
// a security-relevant one.
func JudgePlatformRule(r PlatformRule, resources []drift.Resource, covers func(drift.IgnoreRule, *drift.Resource) []drift.Pointer, sens drift.Sensitivity) string {
	rule := r.IgnoreRule()
	for i := range resources {
		res := &resources[i]
		ref := res.Ref()
		if ref.Kind != r.Kind || ref.Group != r.Group {
			continue
		}
		for _, p := range covers(rule, res) {
			if what, bad := sens.Hides(ref, p, p, res.Target, res.Live); bad {
				return fmt.Sprintf("the rule would hide %s of %s (%s): driftfix never ignores a security-relevant path; a person must review this change", p, ref, what)
			}
		}
	}
	return ""
}

// CMStyle is how a platform repository declares argocd-cm.
type CMStyle string

// The declarations of argocd-cm a platform fix edits.
const (
	StyleManifest  CMStyle = "ConfigMap manifest" // a plain manifest, or a Kustomize strategic-merge patch of it
	StyleJSONPatch CMStyle = "Kustomize JSON 6902 patch"
	StyleHelm      CMStyle = "Argo CD Helm chart values (configs.cm)"
)

// PlatformEdit is the change to the file that declares argocd-cm.
type PlatformEdit struct {
	File          string
	Style         CMStyle
	Before, After []byte
	Rule          PlatformRule // the rule as argocd-cm holds it after the change (merged with one already there)
}

// DetectCMStyle says how file declares argocd-cm: a document that is a
// ConfigMap argocd-cm (a manifest, or a strategic-merge patch), a list of
// JSON 6902 operations, or Helm values (a configs key, or a values file).
func DetectCMStyle(file string, src []byte) (CMStyle, int, error) {
	docs, err := yamledit.Documents(src)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", file, err)
	}
	for i, d := range docs {
		m, _ := d.(map[string]any)
		if drift.Str(m, "kind") == "ConfigMap" && drift.Str(m, "metadata", "name") == "argocd-cm" {
			return StyleManifest, i, nil
		}
	}
	if len(docs) == 1 {
		if l, ok := docs[0].([]any); ok && len(l) > 0 {
			for _, op := range l {
				if drift.Str(drift.Map(op), "op") == "" || drift.Str(drift.Map(op), "path") == "" {
					return "", 0, fmt.Errorf("%s is a list but not of JSON 6902 operations", file)
				}
			}
			return StyleJSONPatch, 0, nil
		}
		m, ok := docs[0].(map[string]any)
		base := path.Base(file)
		if _, configs := m["configs"]; ok && (configs || strings.HasPrefix(base, "values")) {
			return StyleHelm, 0, nil
		}
	}
	return "", 0, fmt.Errorf("%s declares no argocd-cm: want a ConfigMap argocd-cm, a JSON 6902 patch of it, or Argo CD Helm chart values", file)
}

// EditArgoCDCM adds the rule to the argocd-cm that file declares, in place,
// keeping every other line: the data key of a manifest or strategic-merge
// patch, the value of the JSON 6902 operation on that key (or a new add
// operation), or configs.cm of Helm values. A rule already there for the kind
// is merged with (its lists keep their entries; one it cannot read is
// refused). When everything is already declared After equals Before.
func EditArgoCDCM(file string, src []byte, r PlatformRule) (PlatformEdit, error) {
	style, doc, err := DetectCMStyle(file, src)
	if err != nil {
		return PlatformEdit{}, err
	}
	e := PlatformEdit{File: file, Style: style, Before: src}
	docs, _ := yamledit.Documents(src)
	var at drift.Pointer
	appendOp := false
	switch style {
	case StyleManifest:
		at = drift.Pointer{"data", r.Key()}
	case StyleHelm:
		at = drift.Pointer{"configs", "cm", r.Key()}
	case StyleJSONPatch:
		opPath := "/data/" + drift.EscapeToken(r.Key())
		appendOp = true
		for i, op := range docs[0].([]any) {
			if drift.Str(drift.Map(op), "path") == opPath {
				if o := drift.Str(drift.Map(op), "op"); o != "add" && o != "replace" {
					return PlatformEdit{}, fmt.Errorf("%s: operation %d on %s is %q, not add or replace", file, i, opPath, o)
				}
				at, appendOp = drift.Pointer{fmt.Sprint(i), "value"}, false
				break
			}
		}
		if appendOp {
			at = drift.Pointer{fmt.Sprint(len(docs[0].([]any))), "value"}
		}
	}
	if cur, ok := at.Get(docs[doc]); ok && !appendOp {
		s, isStr := cur.(string)
		if !isStr {
			return PlatformEdit{}, fmt.Errorf("%s: %s is not a text value", file, at)
		}
		if r, err = mergeRule(r, s); err != nil {
			return PlatformEdit{}, fmt.Errorf("%s: %s: %w", file, r.Key(), err)
		}
	}
	e.Rule = r
	if appendOp {
		op := map[string]any{"op": "add", "path": "/data/" + drift.EscapeToken(r.Key()), "value": r.Value()}
		e.After, err = yamledit.AppendTopItem(src, doc, op, "")
	} else {
		e.After, err = yamledit.SetBlock(src, doc, at, r.Value())
	}
	if err != nil {
		return PlatformEdit{}, fmt.Errorf("edit %s: %w", file, err)
	}
	return e, nil
}

// mergeRule adds what a rule declared in argocd-cm already holds to r.
func mergeRule(r PlatformRule, text string) (PlatformRule, error) {
	var have struct {
		JSONPointers          []string `yaml:"jsonPointers"`
		JQPathExpressions     []string `yaml:"jqPathExpressions"`
		ManagedFieldsManagers []string `yaml:"managedFieldsManagers"`
	}
	dec := yaml.NewDecoder(bytes.NewReader([]byte(text)))
	dec.KnownFields(true)
	if err := dec.Decode(&have); err != nil && strings.TrimSpace(text) != "" {
		return r, fmt.Errorf("the rule there cannot be read to merge with: %w", err)
	}
	merge := func(old, add []string) []string {
		out := slices.Clone(old)
		for _, s := range add {
			out = addString(out, s)
		}
		return out
	}
	r.JSONPointers = merge(have.JSONPointers, r.JSONPointers)
	r.JQPathExpressions = merge(have.JQPathExpressions, r.JQPathExpressions)
	r.ManagedFieldsManagers = merge(have.ManagedFieldsManagers, r.ManagedFieldsManagers)
	return r, nil
}
