package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/driftfix/driftfix/bot/secretfile"
)

// Access is how one repository is reached.
type Access struct {
	// Auth is what is sent to the host: HTTP basic auth with a token, or an
	// SSH key checked against a known_hosts file; nil reads anonymously.
	Auth transport.AuthMethod
	// CABundle holds CA certificates (PEM) trusted for HTTPS besides the
	// system's.
	CABundle []byte
	// Via says in the user's terms what Auth is ("the token in
	// /etc/driftfix/git-token") or, when Auth is nil, why nothing is sent.
	// It never holds the secret; messages about the repository quote it.
	Via string
}

// AccessFunc says how to reach a repository URL. It is asked each time the
// remote is read, so a token rotated or minted again is used from the next
// read on.
type AccessFunc func(ctx context.Context, repoURL string) (Access, error)

// Reader reads repositories through a cache, each with the credentials
// Access gives for it.
type Reader struct {
	Cache  *Cache // nil: Shared
	Limits Limits
	Access AccessFunc // nil: every repository anonymously
}

// Files is Cache.Files with the reader's credentials.
func (r Reader) Files(ctx context.Context, repoURL, revision string) (map[string]string, error) {
	files, _, err := r.Head(ctx, repoURL, revision)
	return files, err
}

// Head is Cache.Head with the reader's credentials.
func (r Reader) Head(ctx context.Context, repoURL, revision string) (map[string]string, string, error) {
	t, err := r.Tree(ctx, repoURL, revision)
	return t.Files, t.Commit, err
}

// Tree is Cache.Tree with the reader's credentials.
func (r Reader) Tree(ctx context.Context, repoURL, revision string) (Tree, error) {
	c := r.Cache
	if c == nil {
		c = Shared
	}
	return c.head(ctx, repoURL, revision, r.Limits, r.Access)
}

// DefaultTokenUser is the user name sent with a token over HTTPS when the
// credential names none (GitHub's for tokens; most hosts accept any).
const DefaultTokenUser = "x-access-token"

// Credential names the files of one credential for the repositories whose
// URL starts with Prefix: a token for HTTPS, or an SSH private key with the
// known_hosts file its hosts are checked against; or only a CA file, for
// HTTPS repositories read anonymously from a host with a private CA.
type Credential struct {
	Prefix         string
	TokenFile      string // HTTPS: sent as the password of basic auth
	Username       string // HTTPS: sent with the token (default DefaultTokenUser)
	SSHKeyFile     string // SSH: an unencrypted private key
	KnownHostsFile string // SSH: the host keys accepted; required with SSHKeyFile
	CAFile         string // HTTPS: CA certificates (PEM) trusted besides the system's
}

// Open reads and checks the credential's files now, so that a missing or
// invalid file is found when driftfix starts, and returns how to reach its
// repositories. A token file is read again whenever it changes; a key and
// a known_hosts file are read once.
func (c Credential) Open() (AccessFunc, error) {
	var ca []byte
	if c.CAFile != "" {
		b, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read the CA file: %w", err)
		}
		if !strings.Contains(string(b), "-----BEGIN CERTIFICATE-----") {
			return nil, fmt.Errorf("the CA file %s holds no PEM certificate", c.CAFile)
		}
		ca = b
	}
	switch {
	case c.TokenFile != "" && c.SSHKeyFile != "":
		return nil, errors.New("give a token file or an SSH key file, not both")
	case c.TokenFile != "":
		f, err := secretfile.Open(c.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("read the token file: %w", err)
		}
		user := c.Username
		if user == "" {
			user = DefaultTokenUser
		}
		via := "the token in " + c.TokenFile
		return func(context.Context, string) (Access, error) {
			return Access{Auth: &githttp.BasicAuth{Username: user, Password: f.Token()}, CABundle: ca, Via: via}, nil
		}, nil
	case c.SSHKeyFile != "":
		return c.openSSH()
	case ca != nil:
		return func(context.Context, string) (Access, error) {
			return Access{CABundle: ca, Via: "no token or SSH key: its credential names only the CA file " + c.CAFile}, nil
		}, nil
	}
	return nil, errors.New("give a token file or an SSH key file (or, to read anonymously, a CA file)")
}

func (c Credential) openSSH() (AccessFunc, error) {
	if c.KnownHostsFile == "" {
		return nil, errors.New("an SSH key needs a known_hosts file: driftfix never accepts a host key it cannot check")
	}
	b, err := os.ReadFile(c.KnownHostsFile)
	if err != nil {
		return nil, fmt.Errorf("read the known_hosts file: %w", err)
	}
	entries := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			entries++
		}
	}
	if entries == 0 {
		return nil, fmt.Errorf("the known_hosts file %s has no host keys: add the host's key (ssh-keyscan HOST, checked by hand)", c.KnownHostsFile)
	}
	db, err := gitssh.NewKnownHostsDb(c.KnownHostsFile)
	if err != nil {
		return nil, fmt.Errorf("read the known_hosts file %s: %w", c.KnownHostsFile, err)
	}
	key, err := os.ReadFile(c.SSHKeyFile)
	if err != nil {
		return nil, fmt.Errorf("read the SSH key: %w", err)
	}
	pk, err := gitssh.NewPublicKeys("git", key, "")
	if err != nil {
		return nil, fmt.Errorf("the SSH key %s cannot be used (driftfix reads unencrypted OpenSSH or PEM keys): %w", c.SSHKeyFile, err)
	}
	signer := pk.Signer
	via := "the SSH key " + c.SSHKeyFile
	return func(_ context.Context, repoURL string) (Access, error) {
		u, ok := canon(repoURL)
		if !ok || u.scheme != "ssh" {
			return Access{}, fmt.Errorf("%s is for ssh:// or user@host: repositories", via)
		}
		user := u.user
		if user == "" {
			user = "git"
		}
		host := u.host
		if _, _, err := net.SplitHostPort(host); err != nil {
			host = net.JoinHostPort(host, "22")
		}
		auth := &gitssh.PublicKeys{User: user, Signer: signer}
		auth.HostKeyCallback = db.HostKeyCallback()
		auth.HostKeyAlgorithms = db.HostKeyAlgorithms(host)
		return Access{Auth: auth, Via: via + " (host keys from " + c.KnownHostsFile + ")"}, nil
	}, nil
}

// ByPrefix returns how to reach a repository: through the entry of byPrefix
// whose prefix is the longest that matches its URL (see Match), else
// through fallback, else anonymously.
func ByPrefix(byPrefix map[string]AccessFunc, fallback AccessFunc) AccessFunc {
	return func(ctx context.Context, repoURL string) (Access, error) {
		best, bestLen := AccessFunc(nil), -1
		for p, f := range byPrefix {
			if Match(p, repoURL) && len(p) > bestLen {
				best, bestLen = f, len(p)
			}
		}
		if best != nil {
			return best(ctx, repoURL)
		}
		if fallback != nil {
			return fallback(ctx, repoURL)
		}
		return Access{Via: "no credential is configured for it"}, nil
	}
}

// Match reports whether a repository URL is under a credential's prefix:
// the same scheme and host (and user, when the prefix names one), and a
// path that is the prefix's or below it at a "/". SSH URLs may be written
// either as ssh://user@host/path or user@host:path. So
// https://git.example.com/team matches https://git.example.com/team/app.git
// but not https://git.example.com/teamwork/app or https://git.example.com.evil/team.
func Match(prefix, repoURL string) bool {
	p, ok1 := canon(prefix)
	u, ok2 := canon(repoURL)
	if !ok1 || !ok2 || p.scheme != u.scheme || p.host != u.host || (p.user != "" && p.user != u.user) {
		return false
	}
	pp := strings.TrimSuffix(p.path, "/")
	return pp == "" || u.path == pp || strings.HasPrefix(u.path, pp+"/") || strings.TrimSuffix(u.path, ".git") == pp
}

type canonURL struct{ scheme, user, host, path string }

// canon reads a repository URL or prefix; user@host:path is ssh.
func canon(s string) (canonURL, bool) {
	if !strings.Contains(s, "://") {
		at, colon := strings.Index(s, "@"), strings.Index(s, ":")
		if at <= 0 || colon < at {
			return canonURL{}, false
		}
		return canonURL{scheme: "ssh", user: s[:at], host: strings.ToLower(s[at+1 : colon]), path: "/" + strings.TrimPrefix(s[colon+1:], "/")}, true
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return canonURL{}, false
	}
	c := canonURL{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Host), path: u.Path}
	if u.User != nil {
		c.user = u.User.Username()
	}
	if c.path == "" {
		c.path = "/"
	}
	return c, true
}

// isSSH reports whether a repository URL is read over SSH.
func isSSH(repoURL string) bool {
	u, ok := canon(repoURL)
	return ok && u.scheme == "ssh"
}

// explain says in the user's terms why the host would not serve the
// repository, with what was sent, and removes the secret from the message
// should the host have echoed it.
func explain(err error, a Access) error {
	if err == nil {
		return nil
	}
	sent := "no credentials (" + a.Via + ")"
	if a.Auth != nil {
		sent = a.Via
	}
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired) && a.Auth == nil:
		err = fmt.Errorf("the host asks for credentials (the repository is private, or does not exist) and driftfix sent %s: %w", sent, err)
	case errors.Is(err, transport.ErrAuthenticationRequired):
		err = fmt.Errorf("the host refused %s: it is wrong, expired or revoked: %w", sent, err)
	case errors.Is(err, transport.ErrAuthorizationFailed):
		err = fmt.Errorf("the host denied access with %s: %w", sent, err)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		err = fmt.Errorf("the host says the repository does not exist, or %s may not read it: %w", sent, err)
	case strings.Contains(err.Error(), "knownhosts: key mismatch"):
		err = fmt.Errorf("the host's SSH key is not the one its known_hosts file lists for it, so driftfix did not connect (%s): %w", sent, err)
	case strings.Contains(err.Error(), "knownhosts: key is unknown"):
		err = fmt.Errorf("the host is not in the known_hosts file, so driftfix did not connect (%s): %w", sent, err)
	case strings.Contains(err.Error(), "ssh: unable to authenticate"):
		err = fmt.Errorf("the host refused %s: the key is not one it accepts for this repository: %w", sent, err)
	case a.Auth != nil && strings.Contains(err.Error(), "ssh:"):
		err = fmt.Errorf("connect with %s: %w", sent, err)
	}
	if b, ok := a.Auth.(*githttp.BasicAuth); ok && b.Password != "" && strings.Contains(err.Error(), b.Password) {
		return errors.New(strings.ReplaceAll(err.Error(), b.Password, "[redacted]"))
	}
	return err
}

// Resolve says which commit revision (a commit, branch, tag or HEAD) of
// the repository names now, with the reader's credentials: one listing of
// its refs, as git ls-remote, and nothing fetched.
func (r Reader) Resolve(ctx context.Context, repoURL, revision string) (string, error) {
	named := func(err error) error { return fmt.Errorf("resolve %s in %s: %w", revision, redact(repoURL), err) }
	if err := readable(repoURL); err != nil {
		return "", named(err)
	}
	if plumbing.IsHash(revision) {
		return revision, nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.Limits.withDefaults().Timeout)
	defer cancel()
	a := Access{Via: "no credential is configured for it"}
	if !strings.HasPrefix(repoURL, "file://") {
		var err error
		if a, err = accessFor(ctx, repoURL, r.Access); err != nil {
			return "", named(err)
		}
	}
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{repoURL}})
	commit, _, err := remoteCommit(ctx, rem, revision, a)
	if err != nil {
		return "", named(explain(err, a))
	}
	return commit.String(), nil
}

// readable says why a repository URL is not read: only file://, https://
// and ssh repositories are.
func readable(repoURL string) error {
	if !strings.HasPrefix(repoURL, "file://") && !strings.HasPrefix(repoURL, "https://") && !isSSH(repoURL) {
		return errors.New("only file://, https:// and (with an SSH key configured for them) ssh repositories are read")
	}
	return nil
}

// accessFor asks access (nil: none) how to reach a remote repository; an
// ssh one must be reached with an SSH key.
func accessFor(ctx context.Context, repoURL string, access AccessFunc) (Access, error) {
	a := Access{Via: "no credential is configured for it"}
	if access != nil {
		var err error
		if a, err = access(ctx, repoURL); err != nil {
			return Access{}, fmt.Errorf("get credentials: %w", err)
		}
	}
	if _, ok := a.Auth.(*gitssh.PublicKeys); isSSH(repoURL) && !ok {
		return Access{}, errors.New("an ssh repository is read only with an SSH key and known_hosts file configured for it")
	}
	return a, nil
}
