package main

import (
	"context"
	"errors"
	"fmt"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/gitrepo"
)

// repoAccess says how each application's repository is read: with the
// repoCredentials entry whose urlPrefix matches its URL longest; else, for
// an https:// repository on the GitHub host of gh, with the installation
// token of its owner (the token itself in token mode), asked for on every
// read so an expired one is minted again; else anonymously. Every file a
// credential names is read and checked now; an error names its entry and
// line.
func repoAccess(creds []config.RepoCredential, gh *github.Client) (gitrepo.AccessFunc, error) {
	byPrefix := map[string]gitrepo.AccessFunc{}
	for _, rc := range creds {
		f, err := gitrepo.Credential{Prefix: rc.URLPrefix, TokenFile: rc.TokenFile, Username: rc.Username,
			SSHKeyFile: rc.SSHKeyFile, KnownHostsFile: rc.KnownHostsFile, CAFile: rc.CAFile}.Open()
		if err != nil {
			return nil, fmt.Errorf("%s (line %d): %w", rc.Key, rc.Line, err)
		}
		byPrefix[rc.URLPrefix] = f
	}
	fallback := func(ctx context.Context, repoURL string) (gitrepo.Access, error) {
		return gitrepo.Access{Via: "no repoCredentials entry matches its URL"}, nil
	}
	if gh != nil {
		fallback = func(ctx context.Context, repoURL string) (gitrepo.Access, error) {
			r, ok := gh.HostRepo(repoURL)
			if !ok {
				return gitrepo.Access{Via: "no repoCredentials entry matches its URL, and it is not an https:// repository on " + gh.Host()}, nil
			}
			tok, err := gh.GitToken(ctx, r)
			switch {
			case errors.Is(err, github.ErrNotInstalled):
				// A public repository of an owner without the App is still read.
				return gitrepo.Access{Via: "GitHub finds no installation of the App for " + r.String() +
					" (it is not installed on " + r.Owner + ", or the repository does not exist), and no repoCredentials entry matches its URL"}, nil
			case err != nil:
				return gitrepo.Access{}, err
			}
			return gitrepo.Access{Auth: &githttp.BasicAuth{Username: github.GitUser, Password: tok},
				Via: gh.GitTokenName(r.Owner)}, nil
		}
	}
	return gitrepo.ByPrefix(byPrefix, fallback), nil
}
