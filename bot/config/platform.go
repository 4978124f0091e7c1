package config

import (
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// PlatformRepo is a repository that declares an Argo CD instance's
// argocd-cm: where a finding many applications share is fixed with one pull
// request. A bare URL in the file names a repository without saying where
// argocd-cm lives, so no pull request is proposed to it.
type PlatformRepo struct {
	URL string
	// Instance is the Argo CD instance (ArgoCD.Name) whose argocd-cm the
	// repository declares; empty: the only instance.
	Instance string
	// File is the file that declares argocd-cm: a ConfigMap manifest, a
	// Kustomize patch of it (strategic merge or JSON 6902), or the Argo CD
	// Helm chart's values (configs.cm). Empty: nothing is proposed.
	File string
	// Branch is the branch pull requests are proposed to (default: the
	// repository's default branch).
	Branch string
	// FleetMin is how many applications one finding must drift before it is
	// fixed in argocd-cm (0: the default, 3).
	FleetMin int
}

// Platform returns the platform repository that declares an instance's
// argocd-cm, if the file names one.
func (c *Config) Platform(instance string) (PlatformRepo, bool) {
	for _, r := range c.PlatformRepos {
		if r.File == "" {
			continue
		}
		if r.Instance == instance || (r.Instance == "" && len(c.ArgoCD) == 1) {
			return r, true
		}
	}
	return PlatformRepo{}, false
}

func (p *parser) platformRepos(key string, n *yaml.Node) []PlatformRepo {
	var out []PlatformRepo
	p.list(key, n, func(k string, c *yaml.Node) {
		if c.Kind == yaml.ScalarNode {
			out = append(out, PlatformRepo{URL: p.str(k, c)})
			return
		}
		var r PlatformRepo
		p.mapping(c, k, map[string]func(string, *yaml.Node){
			"url":      func(k string, n *yaml.Node) { r.URL = p.str(k, n) },
			"instance": func(k string, n *yaml.Node) { r.Instance = p.str(k, n) },
			"file": func(k string, n *yaml.Node) {
				r.File = p.str(k, n)
				if r.File != "" && (path.IsAbs(r.File) || path.Clean(r.File) != r.File || strings.HasPrefix(r.File, "../")) {
					p.fail(k, n.Line, "must be a clean path inside the repository")
				}
			},
			"branch":   func(k string, n *yaml.Node) { r.Branch = p.str(k, n) },
			"fleetMin": func(k string, n *yaml.Node) { r.FleetMin = p.positive(k, n) },
		})
		if r.URL == "" {
			p.fail(k, c.Line, "url is required")
		}
		out = append(out, r)
	})
	return out
}
