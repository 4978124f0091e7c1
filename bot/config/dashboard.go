package config

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// DefaultDashboardTitle is the Drift Dashboard issue's title where the
// policy names none.
const DefaultDashboardTitle = "Drift Dashboard"

// maxIssueTitle is the longest issue title GitHub accepts.
const maxIssueTitle = 256

// Dashboard is the policy of the Drift Dashboard: one issue per repository
// listing what is stuck, the open fix PRs and what is left for people.
type Dashboard struct {
	Enabled *bool  // nil: not set here (off unless an enclosing policy turns it on)
	Title   string // "": not set here (DefaultDashboardTitle)
}

// On reports whether the dashboard is enabled.
func (d Dashboard) On() bool { return d.Enabled != nil && *d.Enabled }

// IssueTitle is the dashboard issue's title.
func (d Dashboard) IssueTitle() string {
	if d.Title == "" {
		return DefaultDashboardTitle
	}
	return d.Title
}

func (d *Dashboard) merge(o Dashboard) {
	if o.Enabled != nil {
		d.Enabled = o.Enabled
	}
	if o.Title != "" {
		d.Title = o.Title
	}
}

func (p *parser) dashboard(key string, n *yaml.Node) Dashboard {
	var d Dashboard
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"enabled": func(k string, v *yaml.Node) { d.Enabled = p.boolPtr(k, v) },
		"title": func(k string, v *yaml.Node) {
			s := p.str(k, v)
			switch {
			case v.Kind != yaml.ScalarNode:
			case strings.TrimSpace(s) == "":
				p.fail(k, v.Line, "must not be empty (leave it out for \""+DefaultDashboardTitle+"\")")
			case strings.ContainsAny(s, "\r\n"):
				p.fail(k, v.Line, "must be one line: it is the issue's title")
			case utf8.RuneCountInString(s) > maxIssueTitle:
				p.fail(k, v.Line, fmt.Sprintf("is %d characters long; GitHub takes at most %d in an issue title", utf8.RuneCountInString(s), maxIssueTitle))
			default:
				d.Title = s
			}
		},
	})
	return d
}
