package ignores

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode"
)

// maxCoveredShown is how many covered paths where Git and live agree the
// text report lists per rule; the JSON report lists every one.
const maxCoveredShown = 8

// Name names a rule the way a person finds it: its holder and key.
func (r *Rule) Name() string {
	h := r.Declared.Holder
	switch {
	case r.Kind == KindCompareOption:
		return fmt.Sprintf("%s %s %s: %s", h.Name, keyCompareOptions, r.Option, r.Value)
	case h.Kind == "Application":
		app := h.Name
		if h.Namespace != "" {
			app = h.Namespace + "/" + h.Name
		}
		return fmt.Sprintf("Application %s %s", app, r.Declared.Key)
	}
	return h.Name + " " + r.Declared.Key
}

// Text renders the report for a terminal: one block per rule.
func Text(rep *Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d %s in %d %s: %d %s nothing now, %d %s a sensitive path.\n",
		len(rep.Rules), plural(len(rep.Rules), "ignore rule", "ignore rules"),
		len(rep.Applications), plural(len(rep.Applications), "application", "applications"),
		rep.Stale, plural(rep.Stale, "hides", "hide"), rep.Sensitive, plural(rep.Sensitive, "covers", "cover"))
	for i := range rep.Rules {
		b.WriteByte('\n')
		writeRule(&b, &rep.Rules[i])
	}
	return b.Bytes()
}

func writeRule(b *bytes.Buffer, r *Rule) {
	fmt.Fprintf(b, "%s\n", clean(r.Name()))
	fmt.Fprintf(b, "  declared: %s\n", clean(declaredText(&r.Declared)))
	fmt.Fprintf(b, "  selects:  %s\n", clean(scopeText(r)))
	if what := ruleText(r); what != "" {
		fmt.Fprintf(b, "  rule:     %s\n", clean(what))
	}
	fmt.Fprintf(b, "  effect:   %s\n", r.Effect)
	if r.ArgoCDDefault != "" {
		fmt.Fprintf(b, "  default:  Argo CD ships this rule in its own argocd-cm (%s); driftfix never proposes removing it\n", r.ArgoCDDefault)
	}
	fmt.Fprintf(b, "  applies:  %d %s, %d %s\n", len(r.Applications), plural(len(r.Applications), "application", "applications"),
		len(r.Resources), plural(len(r.Resources), "resource", "resources"))
	var differs, same [][3]string
	for _, res := range r.Resources {
		for _, p := range res.Paths {
			row := [3]string{res.Application, res.Resource.String(), p.Path}
			if p.Differs {
				g, l := p.Values()
				differs = append(differs, [3]string{row[0], row[1], p.Path + "\t" + "Git " + g + ", live " + l})
			} else {
				same = append(same, row)
			}
		}
	}
	if len(differs) > 0 {
		head := fmt.Sprintf("  hides %d %s now:\n", len(differs), plural(len(differs), "difference", "differences"))
		if r.Kind == KindIgnoreResourceUpdates {
			head = fmt.Sprintf("  covers %d %s Argo CD shows (a later change there waits for the next refresh):\n", len(differs), plural(len(differs), "difference", "differences"))
		}
		b.WriteString(head)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for _, d := range differs {
			fmt.Fprintf(tw, "    %s\t%s\t%s\n", clean(d[0]), clean(d[1]), clean(d[2]))
		}
		tw.Flush()
	}
	if len(same) > 0 {
		fmt.Fprintf(b, "  covers %d %s where it hides no difference now:\n", len(same), plural(len(same), "path", "paths"))
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for i, s := range same {
			if i == maxCoveredShown {
				fmt.Fprintf(tw, "    … %d more (--format json lists every one)\n", len(same)-maxCoveredShown)
				break
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\n", clean(s[0]), clean(s[1]), clean(s[2]))
		}
		tw.Flush()
	}
	for _, s := range r.Sensitive {
		where := ""
		if s.Resource != nil {
			where = s.Application + " " + s.Resource.String() + " "
		}
		why := s.Why
		if !strings.HasPrefix(why, s.Path) {
			why = s.Path + ": " + why
		}
		fmt.Fprintf(b, "  SENSITIVE: %s%s\n", clean(where), clean(why))
	}
	if r.Stale {
		fmt.Fprintf(b, "  STALE: %s\n", r.StaleWhy)
	}
}

func declaredText(d *Declared) string {
	var parts []string
	if d.File != "" {
		at := fmt.Sprintf("%s:%d", d.File, d.Line)
		if d.Repo != "" {
			at += " in " + d.Repo
		}
		parts = append(parts, at)
	} else {
		parts = append(parts, "not in Git: "+d.NotInGit)
	}
	switch {
	case d.Commit != "":
		c := "added in commit " + shortHash(d.Commit)
		if d.Added != nil {
			c += " on " + d.Added.Format("2006-01-02")
		}
		if d.AgeDays != nil {
			c += fmt.Sprintf(" (%d %s ago)", *d.AgeDays, plural(*d.AgeDays, "day", "days"))
		}
		parts = append(parts, c)
	case d.CommitUnknown != "":
		parts = append(parts, d.CommitUnknown)
	}
	return strings.Join(parts, ", ")
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func scopeText(r *Rule) string {
	s := r.Scope
	gk := s.Kind
	switch {
	case s.Group == "*" && s.Kind == "*":
		gk = "every kind"
	case s.Group == "*":
		gk = s.Kind + " of any group"
	case s.Group != "":
		gk = s.Group + "/" + s.Kind
	}
	if r.Kind == KindCompareOption && r.Option == optStatusField && strings.EqualFold(strings.TrimSpace(r.Value), "crd") {
		gk = "every custom resource"
	}
	if r.Kind == KindCompareOption && r.Option == optAggregatedRoles {
		gk += " with an aggregationRule"
	}
	if s.Name != "" {
		gk += " named " + s.Name
	}
	switch {
	case s.Namespace != "":
		gk += " in namespace " + s.Namespace
	case r.Declared.Holder.Kind == "Application":
		gk += " of the application"
	default:
		gk += " in every application"
	}
	return gk
}

func ruleText(r *Rule) string {
	var parts []string
	if len(r.JSONPointers) > 0 {
		parts = append(parts, "jsonPointers "+strings.Join(r.JSONPointers, ", "))
	}
	if len(r.JQPathExpressions) > 0 {
		parts = append(parts, "jqPathExpressions "+strings.Join(r.JQPathExpressions, ", "))
	}
	if len(r.ManagedFieldsManagers) > 0 {
		parts = append(parts, "managedFieldsManagers "+strings.Join(r.ManagedFieldsManagers, ", "))
	}
	return strings.Join(parts, "; ")
}

// clean keeps cluster-written text from acting on a terminal: control
// characters become U+FFFD.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\t' && unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}
