package config

import (
	"fmt"
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RepoCredential names, by file, the credentials for the repositories whose
// URL starts with URLPrefix (same scheme and host, path at a "/"): a token
// for HTTPS, or an SSH private key with the known_hosts file the host's key
// is checked against; or caFile alone, to read a host with a private CA
// anonymously. The longest matching prefix wins; repositories no
// entry matches are read on the GitHub App's host with its installation
// token, elsewhere anonymously.
type RepoCredential struct {
	URLPrefix      string // https://host/path, ssh://user@host/path or user@host:path
	TokenFile      string // HTTPS: the token, sent as the password of basic auth
	Username       string // HTTPS: the user sent with it (default x-access-token)
	SSHKeyFile     string // SSH: an unencrypted private key
	KnownHostsFile string // SSH: the accepted host keys (required with sshKeyFile)
	CAFile         string // HTTPS: CA certificates (PEM) trusted besides the system's
	Key            string // where it is in the file, e.g. repoCredentials[0]
	Line           int    // its line in the file
}

func (p *parser) repoCredential(key string, n *yaml.Node) RepoCredential {
	rc := RepoCredential{Key: key, Line: n.Line}
	given := false
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"urlPrefix":      func(k string, v *yaml.Node) { rc.URLPrefix, given = p.urlPrefix(k, v), true },
		"tokenFile":      func(k string, v *yaml.Node) { rc.TokenFile = p.str(k, v) },
		"username":       func(k string, v *yaml.Node) { rc.Username = p.str(k, v) },
		"sshKeyFile":     func(k string, v *yaml.Node) { rc.SSHKeyFile = p.str(k, v) },
		"knownHostsFile": func(k string, v *yaml.Node) { rc.KnownHostsFile = p.str(k, v) },
		"caFile":         func(k string, v *yaml.Node) { rc.CAFile = p.str(k, v) },
	})
	if n.Kind != yaml.MappingNode {
		return rc
	}
	ssh := strings.HasPrefix(rc.URLPrefix, "ssh://") || (rc.URLPrefix != "" && !strings.Contains(rc.URLPrefix, "://"))
	switch {
	case rc.URLPrefix == "" && given:
		// already reported
	case rc.URLPrefix == "":
		p.fail(key+".urlPrefix", n.Line, "is required: the repository URLs this credential is for, e.g. https://git.example.com/team/")
	case rc.TokenFile != "" && rc.SSHKeyFile != "":
		p.fail(key, n.Line, "give tokenFile (HTTPS) or sshKeyFile (SSH), not both")
	case rc.TokenFile == "" && rc.SSHKeyFile == "" && (rc.CAFile == "" || ssh):
		p.fail(key, n.Line, "needs tokenFile (HTTPS) or sshKeyFile with knownHostsFile (SSH), or caFile alone to read HTTPS anonymously")
	case rc.TokenFile != "" && ssh:
		p.fail(key+".tokenFile", n.Line, "is sent over HTTPS only; urlPrefix "+rc.URLPrefix+" is an SSH URL (use sshKeyFile)")
	case rc.SSHKeyFile != "" && !ssh:
		p.fail(key+".sshKeyFile", n.Line, "is used over SSH only; urlPrefix "+rc.URLPrefix+" is an HTTPS URL (use tokenFile)")
	case rc.SSHKeyFile != "" && rc.KnownHostsFile == "":
		p.fail(key+".knownHostsFile", n.Line, "is required with sshKeyFile: driftfix never accepts a host key it cannot check")
	}
	if rc.Username != "" && rc.TokenFile == "" {
		p.fail(key+".username", n.Line, "goes with tokenFile only (an SSH user is part of the URL)")
	}
	if rc.CAFile != "" && ssh {
		p.fail(key+".caFile", n.Line, "is for HTTPS only")
	}
	if rc.KnownHostsFile != "" && rc.SSHKeyFile == "" {
		p.fail(key+".knownHostsFile", n.Line, "goes with sshKeyFile only")
	}
	return rc
}

// urlPrefix checks a credential's URL prefix: https:// or ssh:// with a
// host, or user@host:path; never http://, which would send the token in
// clear text, and never credentials in the URL itself.
func (p *parser) urlPrefix(key string, n *yaml.Node) string {
	s := strings.TrimSpace(p.str(key, n))
	if s == "" {
		p.fail(key, n.Line, "is empty: give the repository URLs this credential is for, e.g. https://git.example.com/team/")
		return ""
	}
	shown := fmt.Sprintf("%q", s)
	if strings.Contains(s, ":") && strings.Contains(s, "@") {
		shown = "the value" // it may hold a password before the @
	}
	if !strings.Contains(s, "://") {
		at, colon := strings.Index(s, "@"), strings.Index(s, ":")
		if at <= 0 || colon < at+2 {
			p.fail(key, n.Line, shown+" is not a repository URL prefix (https://host/path, ssh://user@host/path or user@host:path)")
			return ""
		}
		return s
	}
	u, err := url.Parse(s)
	if err == nil && u.User != nil {
		if _, pw := u.User.Password(); pw || u.Scheme != "ssh" {
			p.fail(key, n.Line, "credentials are never written in the config; name them with tokenFile or sshKeyFile")
			return ""
		}
	}
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "ssh" && u.Scheme != "http"):
		p.fail(key, n.Line, shown+" is not a repository URL prefix (https://host/path, ssh://user@host/path or user@host:path)")
	case u.Scheme == "http":
		p.fail(key, n.Line, fmt.Sprintf("%q is plain http: a token would travel in clear text; use https://", s))
	case u.RawQuery != "" || u.Fragment != "":
		p.fail(key, n.Line, fmt.Sprintf("%q has a query or fragment; give the URL up to a path", s))
	}
	return s
}

// uniquePrefixes reports a URL prefix given twice: which entry would win
// would not be clear.
func (p *parser) uniquePrefixes(rcs []RepoCredential) {
	seen := map[string]string{}
	for _, rc := range rcs {
		k := strings.TrimSuffix(rc.URLPrefix, "/")
		if k == "" {
			continue
		}
		if first, ok := seen[k]; ok {
			p.fail(rc.Key+".urlPrefix", rc.Line, fmt.Sprintf("%s is also the prefix of %s; give each prefix once", rc.URLPrefix, first))
			continue
		}
		seen[k] = rc.Key
	}
}
