package templates

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxIgnoreReason bounds a reason quoted in an ignore-rule line, so each
// line stays short.
const maxIgnoreReason = 160

// maxIgnoreLines bounds the ignore-rule lines of one dashboard; the rest
// are counted ("driftfix ignores" lists every rule).
const maxIgnoreLines = 50

// IgnoreLine is one active ignore rule the inventory flags: it covers a
// sensitive path, has hidden nothing for a while (stale), or is broader
// than what it hides. Holder, key, file, paths and reasons come from the
// cluster or its repositories; no value a rule hides is ever in it.
type IgnoreLine struct {
	Instance string
	// Rule is the rule's identity across cycles (not shown).
	Rule string
	// Holder is the Application or ConfigMap that declares it, Key where:
	// "Application argocd/shop", "spec.ignoreDifferences[1]".
	Holder, Key string
	// Where is the file and line in Git ("" when not found).
	Where string
	// Apps are the applications it applies to, by namespace/name (not shown:
	// the dashboard shows a rule to the repositories of these applications).
	Apps []string
	// Sensitive names a sensitive path it covers and why ("" when none).
	Sensitive string
	// Stale says it hides nothing now; IdleDays is for how many whole days
	// driftfix has seen it hide nothing.
	Stale    bool
	IdleDays int
	// Broad says why it is broader than what it hides ("" when it is not).
	Broad string
	// NarrowSensitive, for a rule scoped narrowly (one resource by name,
	// exact paths) that the diagnosis flags all the same, names the sensitive
	// path it covers ("" otherwise; never set with Broad). It is shown as
	// the sensitive path when Sensitive is empty.
	NarrowSensitive string
	// PR is the pull request that removes or narrows it, if one is open.
	PR string
}

// Summary says what is wrong with the rule, in plain words; code renders
// cluster-written text safely for the target, text running text.
func (l IgnoreLine) Summary(code, text func(any) string) string {
	var parts []string
	if sens := cmp.Or(l.Sensitive, l.NarrowSensitive); sens != "" {
		parts = append(parts, "covers a sensitive path: "+text(cut(sens, maxIgnoreReason)))
	}
	if l.Stale {
		if l.IdleDays > 0 {
			parts = append(parts, fmt.Sprintf("has hidden nothing for %d %s", l.IdleDays, plural(l.IdleDays, "day", "days")))
		} else {
			parts = append(parts, "hides nothing now")
		}
	}
	if l.Broad != "" {
		parts = append(parts, "is broader than what it hides: "+text(cut(l.Broad, maxIgnoreReason)))
	}
	s := code(l.Holder) + " " + code(l.Key)
	if l.Where != "" {
		s += " (" + code(l.Where) + ")"
	}
	return s + " " + strings.Join(parts, "; ")
}

// MarkdownSummary is Summary for GitHub markdown (the Drift Dashboard).
func (l IgnoreLine) MarkdownSummary() string {
	s := l.Summary(Code, Text)
	if l.PR != "" {
		s += ". Pull request: " + Text(l.PR)
	}
	return s
}

// dashboardIgnores renders the dashboard's section of flagged ignore rules,
// at most maxIgnoreLines of them.
func dashboardIgnores(ls []IgnoreLine) string {
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n**Ignore rules to look at** (they hide something sensitive, have hidden nothing for a while, or are broader than what they hide)\n\n")
	for i, l := range ls {
		if i == maxIgnoreLines {
			fmt.Fprintf(&b, "- and %d more; `driftfix ignores` lists every rule\n", len(ls)-i)
			break
		}
		b.WriteString("- " + l.MarkdownSummary() + "\n")
	}
	return b.String()
}

// IgnorePRView is everything a pull request that removes stale ignore rules,
// or narrows a broad one, in one file says.
type IgnorePRView struct {
	Instance string
	Repo     string
	File     string
	// Removed are the stale rules it removes; Narrowed the broad one, or
	// the one scoped narrowly on a sensitive path, it narrows (at most one
	// per pull request).
	Removed  []IgnoreLine
	Narrowed []IgnoreLine
	// NarrowWhy and NarrowRisk are the narrow-ignore plan's rationale.
	NarrowWhy, NarrowRisk string
	StaleAfterDays        int
	Diff                  string
	Verification          string
	Fingerprint           string
}

// IgnorePRTitle says what an ignore-rule pull request does.
func IgnorePRTitle(v IgnorePRView) string {
	var parts []string
	if n := len(v.Removed); n > 0 {
		parts = append(parts, fmt.Sprintf("remove %d ignore %s that hid nothing for %d days", n, plural(n, "rule", "rules"), v.StaleAfterDays))
	}
	if len(v.Narrowed) > 0 {
		if narrowedSensitive(v) {
			parts = append(parts, "narrow an ignore rule that covers a sensitive path")
		} else {
			parts = append(parts, "narrow a broad ignore rule")
		}
	}
	return fmt.Sprintf("driftfix(ignores %s): %s in %s", inert(v.Instance), strings.Join(parts, " and "), inert(v.File))
}

// narrowedSensitive says the rule a pull request narrows is not broad but
// scoped narrowly on a sensitive path.
func narrowedSensitive(v IgnorePRView) bool {
	return len(v.Narrowed) > 0 && v.Narrowed[0].Broad == "" && v.Narrowed[0].NarrowSensitive != ""
}

// IgnorePRBody renders an ignore-rule pull request's body in Markdown.
func IgnorePRBody(v IgnorePRView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Ignore rules in %s\n\n", Code(v.File))
	if len(v.Removed) > 0 {
		fmt.Fprintf(&b, "These rules have hidden no difference in any application of Argo CD instance %s for %d days or more: Argo CD compares every path they cover and finds Git and the cluster equal. Removing them changes nothing Argo CD shows today, and a later change at those paths is no longer hidden.\n\n", Code(v.Instance), v.StaleAfterDays)
		for _, l := range v.Removed {
			fmt.Fprintf(&b, "- %s\n", l.MarkdownSummary())
		}
		b.WriteString("\n")
	}
	if len(v.Narrowed) > 0 {
		if narrowedSensitive(v) {
			b.WriteString("This rule is scoped narrowly but covers a sensitive path, where whatever another writer puts is hidden; it is replaced by rules naming only what another system owns:\n\n")
		} else {
			b.WriteString("This rule is broader than what it hides; it is replaced by rules naming only what another system owns:\n\n")
		}
		for _, l := range v.Narrowed {
			fmt.Fprintf(&b, "- %s\n", l.MarkdownSummary())
		}
		fmt.Fprintf(&b, "\n%s\n\n**Risk:** %s\n\n", Text(v.NarrowWhy), Text(v.NarrowRisk))
	}
	d := fence(v.Diff)
	fmt.Fprintf(&b, "### The change\n%sdiff\n%s%s\n\n", d, shown(v.Diff), d)
	fmt.Fprintf(&b, "### Verified\n%s\n\n", Text(v.Verification))
	b.WriteString("### How to undo\nRevert the commit (git revert).\n\n" + CommandsSection(OtherPR) + "\n---\n<sub>Opened by driftfix. Close this pull request without merging and driftfix will not propose it again.</sub>\n")
	fmt.Fprintf(&b, "<!-- driftfix:fingerprint=%s -->\n", v.Fingerprint)
	return b.String()
}

// cut shortens text that can never fit, saying so rather than dropping it silently.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	const suffix = " …(shortened)"
	r := []rune(s)
	return string(r[:max-utf8.RuneCountInString(suffix)]) + suffix
}
