package config

import (
	"path"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// PolicyRepo is where this policy file itself is kept in Git, so driftfix
// can propose changes to it: a writers entry a person chose on the Drift
// Dashboard. Empty: driftfix proposes no change to its policy.
type PolicyRepo struct {
	URL string
	// File is the policy file's path in the repository.
	File string
	// Branch is the branch pull requests are proposed to (default: the
	// repository's default branch).
	Branch string
}

// Set reports whether the file says where the policy is kept.
func (r PolicyRepo) Set() bool { return r.URL != "" && r.File != "" }

func (p *parser) policyRepo(key string, n *yaml.Node) PolicyRepo {
	var r PolicyRepo
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"url": func(k string, v *yaml.Node) { r.URL = p.url(k, v) },
		"file": func(k string, v *yaml.Node) {
			r.File = p.str(k, v)
			if r.File == "" || path.IsAbs(r.File) || path.Clean(r.File) != r.File || strings.HasPrefix(r.File, "../") {
				p.fail(k, v.Line, "must be a clean path inside the repository, such as deploy/driftfix.yaml")
			}
		},
		"branch": func(k string, v *yaml.Node) {
			if r.Branch = p.str(k, v); !branchRe.MatchString(r.Branch) || strings.Contains(r.Branch, "..") {
				p.fail(k, v.Line, strconv.Quote(r.Branch)+" is not a branch name")
			}
		},
	})
	if n.Kind == yaml.MappingNode && (r.URL == "" || r.File == "") {
		p.fail(key, n.Line, "needs url and file: the repository and the path of this policy file in it")
	}
	return r
}
