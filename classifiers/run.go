package classifiers

import (
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// Run asks the classifiers, in order, about every ignore rule and every
// difference, and returns one finding per case that a classifier claims.
//
// A difference an ignore rule hides is reported only when a classifier flagged
// that rule (a broad rule must show what it hides) or when the difference is at
// a sensitive path: privilege, image or RBAC changes are never silently hidden.
func Run(in *Input, registry []Classifier) []drift.Finding {
	var out []drift.Finding
	flagged := map[int]bool{}
	for ri := range in.Comparison.Rules {
		c := &Case{Input: in, Rule: &in.Comparison.Rules[ri], RuleIndex: ri}
		if cl, v, ok := first(registry, c); ok {
			flagged[ri] = true
			out = append(out, ruleFinding(c, cl, v))
		}
	}
	for di := range in.Comparison.Diffs {
		d := &in.Comparison.Diffs[di]
		var note string
		if len(d.HiddenBy) > 0 {
			res := &in.Snapshot.Resources[d.Index]
			_, why, sensitive := in.Sensitivity.Check(d.Resource.Kind, d.Path, res.Target)
			surface := sensitive
			var names []string
			for _, ri := range d.HiddenBy {
				surface = surface || flagged[ri]
				names = append(names, ruleName(&in.Comparison.Rules[ri]))
			}
			if !surface {
				continue
			}
			note = "Argo CD does not show this difference: " + strings.Join(names, " and ") + " hides it"
			if sensitive {
				note += " although it is a sensitive field (" + why + ")"
			}
		}
		c := &Case{Input: in, Diff: d}
		cl, v, ok := first(registry, c)
		if !ok {
			continue
		}
		if note != "" {
			v.Evidence = append(v.Evidence, note)
		}
		if d.Raw {
			v.Evidence = append(v.Evidence, rawNote)
		}
		f := drift.Finding{
			Resource: d.Resource, Path: d.Path, GitPath: d.GitPath, Cause: cl.Name,
			Git: d.Git, Live: d.Live, InGit: d.InGit, InLive: d.InLive,
			Evidence: v.Evidence, Owners: d.Owners,
			Remediation: drift.Remediation{Kind: v.Fix, Reason: v.Reason},
		}
		if isSecretData(d.Resource, d.Path) {
			f.Git, f.Live = maskSecret(d.Git, d.InGit), maskSecret(d.Live, d.InLive)
		}
		out = append(out, f)
	}
	drift.SortFindings(out)
	return out
}

// rawNote says how a difference found only by the raw comparison was found.
const rawNote = "Argo CD reports this resource OutOfSync and driftfix's emulation of its diff shows nothing; comparing again with raw values (no semantic equality, lists replaced whole) shows this difference"

func first(registry []Classifier, c *Case) (Classifier, Verdict, bool) {
	for _, cl := range registry {
		if v, ok := cl.Classify(c); ok {
			if v.Fix == "" {
				v.Fix = drift.FixNone
			}
			return cl, v, true
		}
	}
	return Classifier{}, Verdict{}, false
}

func ruleFinding(c *Case, cl Classifier, v Verdict) drift.Finding {
	r := c.Rule
	var git any
	var inGit bool
	for _, o := range append([]drift.Object{c.Snapshot.Application}, c.Snapshot.Cluster...) {
		if drift.RefOf(o) == r.Holder {
			git, inGit = r.Path.Get(o)
			break
		}
	}
	f := drift.Finding{
		Resource: r.Holder, Path: r.Path, Cause: cl.Name, Git: git, InGit: inGit,
		Evidence: v.Evidence, Remediation: drift.Remediation{Kind: v.Fix, Reason: v.Reason},
	}
	for _, di := range r.Hidden {
		d := &c.Comparison.Diffs[di]
		f.Hides = append(f.Hides, drift.Location{Resource: d.Resource, Path: d.Path})
	}
	return f
}

// ruleName names a rule the way a person finds it: "Application reports
// spec.ignoreDifferences[0]" or "argocd-cm resource.customizations.ignoreDifferences.apps_Deployment".
func ruleName(r *drift.IgnoreRule) string {
	if r.System {
		return "argocd-cm " + r.Path.Last()
	}
	return "ignoreDifferences[" + r.Path.Last() + "] of Application " + r.Holder.Name
}

func maskSecret(v any, present bool) any {
	if !present {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k := range x {
			m[k] = "++++++++"
		}
		return m
	case nil:
		return nil
	}
	return "++++++++"
}
