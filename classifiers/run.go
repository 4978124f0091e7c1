package classifiers

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// Run asks the classifiers, in order, about every ignore rule and every
// difference, and returns one finding per case that a classifier claims.
//
// A difference an ignore rule hides is reported only when a classifier flagged
// that rule (a broad rule must show what it hides) or when the difference is at
// a sensitive path: privilege, image or RBAC changes are never silently hidden.
// A rule is also flagged when what it covers in the live object is
// security-relevant (a privileged container, a hostPath, Secret data), even
// when no classifier claimed it.
//
// Every finding's fix passes Sensitivity.Guard here: a fix that would change,
// delete or hide a security-relevant path becomes none, with the reason.
func Run(in *Input, registry []Classifier) []drift.Finding {
	var out []drift.Finding
	RunEach(in, registry, func(f drift.Finding, _, _ int) { out = append(out, f) })
	drift.SortFindings(out)
	if len(out) > 0 && cap(out) > len(out) {
		// A report is kept for the whole cycle: keep no spare capacity.
		out = append(make([]drift.Finding, 0, len(out)), out...)
	}
	return out
}

// RunEach is Run, handing each finding to emit as it is made, unsorted: a
// rule's finding with the rule's index in Comparison.Rules (diff -1), then
// a difference's with its index in Comparison.Diffs (rule -1).
func RunEach(in *Input, registry []Classifier, emit func(f drift.Finding, rule, diff int)) {
	flagged := map[int]bool{}
	for ri := range in.Comparison.Rules {
		c := &Case{Input: in, Rule: &in.Comparison.Rules[ri], RuleIndex: ri}
		cl, v, ok := first(registry, c)
		hides := hiddenContent(in, c.Rule, ok)
		if ok {
			flagged[ri] = true
			v.Evidence = append(v.Evidence, hides...)
			emit(ruleFinding(c, cl, v), ri, -1)
			continue
		}
		if len(hides) > 0 {
			flagged[ri] = true
			line := ruleName(c.Rule) + " hides security-relevant content of the live object, which no rule may hide"
			ev := append([]drift.Evidence{{Kind: drift.EvidenceBroadRule, Detail: line, Text: line}}, hides...)
			emit(ruleFinding(c, Classifier{Name: drift.CauseBroadIgnore}, Verdict{Evidence: ev, Fix: drift.FixNarrowIgnore}), ri, -1)
		}
	}
	for di := range in.Comparison.Diffs {
		d := &in.Comparison.Diffs[di]
		var note string
		res := &in.Snapshot.Resources[d.Index]
		if len(d.HiddenBy) > 0 {
			why, sensitive := in.Sensitivity.Hides(d.Resource, d.Path, d.GitPath, res.Target, res.Live)
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
			if _, field, named := in.Sensitivity.CheckRef(d.Resource, d.Path, res.Target); named {
				note += " although it is a sensitive field (" + field + ")"
			} else if sensitive {
				note += " although it is security-relevant: " + why
			}
		}
		c := &Case{Input: in, Diff: d}
		cl, v, ok := first(registry, c)
		if !ok {
			continue
		}
		if note != "" {
			v.Evidence = append(v.Evidence, drift.Say(drift.EvidenceHidden, note))
		}
		if d.Raw {
			v.Evidence = append(v.Evidence, drift.Say(drift.EvidenceConsequence, rawNote))
		}
		f := drift.Finding{
			Resource: d.Resource, Path: d.Path, GitPath: d.GitPath, Cause: cl.Name,
			Git: d.Git, Live: d.Live, InGit: d.InGit, InLive: d.InLive,
			Evidence: v.Evidence, Owners: d.Owners,
			Remediation: drift.Remediation{Kind: v.Fix, Reason: v.Reason, Grant: v.Grant},
			Unplaced:    v.Unplaced, SchemaScalar: d.SchemaScalar,
		}
		in.Sensitivity.Guard(&f, res.Target, res.Live)
		if isSecretData(d.Resource, d.Path) {
			f.Git, f.Live = maskSecret(d.Git, d.InGit), maskSecret(d.Live, d.InLive)
		}
		emit(f, -1, di)
	}
}

// rawNote says how a difference found only by the raw comparison was found.
const rawNote = "Argo CD reports this resource OutOfSync and driftfix's emulation of its diff shows nothing; comparing again with raw values (no semantic equality, lists replaced whole) shows this difference"

// hiddenContent judges an ignore rule by what it hides: for every path it
// covers in a resource (jsonPointers, jq expressions, the fields its
// managedFieldsManagers own), security-relevant content of the live object or
// of Git. It returns evidence lines for what the classifiers' check of Git's
// side does not already name, at most three.
func hiddenContent(in *Input, r *drift.IgnoreRule, classified bool) []drift.Evidence {
	var out []drift.Evidence
	seen := map[string]bool{}
	for _, cov := range r.Covered {
		res := &in.Snapshot.Resources[cov.Index]
		ref := res.Ref()
		for _, p := range cov.Paths {
			why, bad := in.Sensitivity.Hides(ref, p, nil, res.Target, res.Live)
			if !bad {
				continue
			}
			if _, _, named := in.Sensitivity.CheckRef(ref, p, res.Target); named && classified {
				continue // the classifier that flagged the rule names it already
			}
			line := fmt.Sprintf("it hides %s of %s: %s", p, ref, why)
			if seen[line] {
				continue
			}
			seen[line] = true
			if len(out) == 3 {
				return append(out, drift.Say(drift.EvidenceHidden, "and more"))
			}
			out = append(out, drift.Evidence{Kind: drift.EvidenceHidden, Object: &ref, Path: p.String(), Text: line})
		}
	}
	return out
}

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
		Evidence: v.Evidence, Remediation: drift.Remediation{Kind: v.Fix, Reason: v.Reason, Grant: v.Grant},
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
	if r.Annotation {
		return "the " + drift.AnnotationIgnoreDifferences + " annotation of " + r.Holder.String()
	}
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
