package github

import (
	"context"

	gh "github.com/google/go-github/v89/github"

	"github.com/driftfix/driftfix/bot/githost"
)

// Installation is the id of the App's installation on a repository, looked
// up once (0 in token mode, where there is none). A webhook delivery names
// the installation it comes from; one that is not the repository's is not
// acted on.
func (c *Client) Installation(ctx context.Context, r githost.Repo) (int64, error) {
	if c.token != nil {
		return 0, nil
	}
	if _, err := c.client(ctx, r); err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if itr := c.itr[r.String()]; itr != nil {
		return itr.InstallationID(), nil
	}
	return 0, nil
}

// ForgetInstallations drops the installations looked up, so each
// repository's is looked up again: the App was installed, uninstalled, or
// given other repositories.
func (c *Client) ForgetInstallations() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inst = map[string]*gh.Client{}
	c.itr = nil
}
