package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Unlisted says when the pull requests of an application that Argo CD no
// longer lists are closed. A list can shrink for reasons that say nothing
// about the applications (an RBAC or sharding change), so closing waits.
type Unlisted struct {
	// CloseAfterCycles is how many cycles in a row an application must be
	// missing from its instance's list before its PRs are closed (default 3).
	CloseAfterCycles int
	// MaxListShrink is the fraction by which an instance's list may shrink,
	// against the last full list, and still close anything; a cycle whose
	// list shrank more closes nothing as "no longer listed" (default 0.2).
	MaxListShrink float64
}

// DefaultUnlisted is the Unlisted used where the file says nothing.
func DefaultUnlisted() Unlisted { return Unlisted{CloseAfterCycles: 3, MaxListShrink: 0.2} }

func (p *parser) unlisted(key string, n *yaml.Node) Unlisted {
	u := DefaultUnlisted()
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"closeAfterCycles": func(k string, v *yaml.Node) { u.CloseAfterCycles = p.positive(k, v) },
		"maxListShrink":    func(k string, v *yaml.Node) { u.MaxListShrink = p.fraction(k, v) },
	})
	return u
}

// fraction is a number from 0 to 1.
func (p *parser) fraction(key string, n *yaml.Node) float64 {
	f, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || f < 0 || f > 1 {
		p.fail(key, n.Line, fmt.Sprintf("must be a fraction from 0 to 1 such as 0.2, not %q", n.Value))
	}
	return f
}

// plaintext refuses an http:// Argo CD server, whose API token would cross
// the network in clear text, unless insecurePlaintext says so.
func (p *parser) plaintext(key string, n *yaml.Node, a ArgoCD) {
	if strings.HasPrefix(a.Server, "http://") && !a.InsecurePlaintext {
		p.fail(key+".server", n.Line, fmt.Sprintf("%q is plain http, which sends the API token in clear text; use https:// (with caFile for Argo CD's own certificate), or set insecurePlaintext: true", a.Server))
	}
}
