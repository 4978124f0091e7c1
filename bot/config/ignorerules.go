package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// DefaultStaleAfter is how long a rule must hide nothing before its removal
// is proposed, when ignoreRules names no staleAfter.
const DefaultStaleAfter = 14 * 24 * time.Hour

// IgnoreRules is the policy for the ignore-rule inventory a cycle takes: the
// weekly digest section, the Drift Dashboard's section, and the pull
// requests that remove stale rules and narrow broad ones. It is read from
// the global policy only: an argocd-cm rule belongs to no one application.
type IgnoreRules struct {
	// Enabled says the file sets ignoreRules: the inventory is taken each
	// cycle (it costs one managed-resources call per application a rule
	// can apply to).
	Enabled bool
	// StaleAfter is how long a rule must hide nothing, in every application,
	// before a pull request removes it (0: DefaultStaleAfter).
	StaleAfter time.Duration
}

// Stale is how long a rule must hide nothing before its removal is proposed.
func (r IgnoreRules) Stale() time.Duration {
	if r.StaleAfter == 0 {
		return DefaultStaleAfter
	}
	return r.StaleAfter
}

var daysRe = regexp.MustCompile(`^([0-9]+)d$`)

// days reads a duration of whole days ("14d") or a Go duration ("336h").
func days(s string) (time.Duration, bool) {
	if m := daysRe.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		n, err := strconv.Atoi(m[1])
		return time.Duration(n) * 24 * time.Hour, err == nil && n < 100000
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

func (p *parser) ignoreRules(key string, n *yaml.Node, global bool) IgnoreRules {
	r := IgnoreRules{Enabled: true}
	if !global {
		p.fail(key, n.Line, "is read from the global policy only: an argocd-cm rule belongs to no one application")
		return IgnoreRules{}
	}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"staleAfter": func(k string, v *yaml.Node) {
			d, ok := days(v.Value)
			switch {
			case v.Kind != yaml.ScalarNode || !ok:
				p.fail(k, v.Line, fmt.Sprintf("must be a number of days such as 14d (or a duration such as 336h), not %q", v.Value))
			case d < 24*time.Hour:
				p.fail(k, v.Line, fmt.Sprintf("must be at least 1d: a rule that hid nothing for less than a day may be waiting for a rollout, not %q", v.Value))
			default:
				r.StaleAfter = d
			}
		},
	})
	return r
}
