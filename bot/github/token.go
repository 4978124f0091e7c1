package github

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/driftfix/driftfix/bot/githost"
)

// ErrNotInstalled is the answer for a repository whose owner has not
// installed the App.
var ErrNotInstalled = errors.New("github: the App is not installed")

// GitUser is the user name sent with GitToken over HTTPS (basic auth), as
// GitHub documents for installation tokens.
const GitUser = "x-access-token"

// HostRepo reads repoURL as a repository on this client's host when it is
// an https:// URL there (the host compared exactly, port included), for
// reading it with GitToken.
func (c *Client) HostRepo(repoURL string) (githost.Repo, bool) {
	u, err := url.Parse(repoURL)
	if err != nil || u.Scheme != "https" || !strings.EqualFold(u.Host, c.Host()) {
		return githost.Repo{}, false
	}
	r, err := c.Repo(repoURL)
	return r, err == nil
}

// GitToken returns a token that reads r with Git over HTTPS, sent as the
// password with user GitUser: in App mode the installation token of r's
// owner, minted by GitHub and minted again when it is about to expire (the
// one the API calls use); in token mode the configured token as it is now.
// The token is the caller's to keep out of logs, messages and files; errors
// never hold it. A repository whose owner has not installed the App
// answers ErrNotInstalled.
func (c *Client) GitToken(ctx context.Context, r githost.Repo) (string, error) {
	if c.token != nil {
		tok := c.tokenFn()
		if tok == "" {
			return "", errors.New("github: the token is empty")
		}
		return tok, nil
	}
	if _, err := c.client(ctx, r); err != nil {
		return "", err
	}
	c.mu.Lock()
	itr := c.itr[r.String()]
	c.mu.Unlock()
	tok, err := itr.Token(ctx)
	if err != nil {
		return "", c.redact(fmt.Errorf("github: mint an installation token for %s: %w", r, err))
	}
	return tok, nil
}

// GitTokenName names what GitToken gives for an owner, for messages.
func (c *Client) GitTokenName(owner string) string {
	if c.token != nil {
		return "the configured GitHub token"
	}
	return "the GitHub App's installation token for " + owner
}
