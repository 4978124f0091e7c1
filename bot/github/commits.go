package github

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/driftfix/driftfix/bot/githost"
	gh "github.com/google/go-github/v89/github"
)

// RecentSubjects are the subject lines (first lines) of the newest commits
// of ref, at most n of them, newest first, without merge commits: what a
// repository's own history says about how its commits are titled.
func (c *Client) RecentSubjects(ctx context.Context, r githost.Repo, ref string, n int) ([]string, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	cs, _, err := fetch(ctx, c, "list commits", func(ctx context.Context) ([]*gh.RepositoryCommit, *gh.Response, error) {
		return cl.Repositories.ListCommits(ctx, r.Owner, r.Name, &gh.CommitsListOptions{SHA: ref, ListOptions: gh.ListOptions{PerPage: min(max(n, 1), 100)}})
	})
	if err != nil {
		return nil, fmt.Errorf("list the recent commits of %s at %s: %w", r, ref, err)
	}
	var out []string
	for _, rc := range cs {
		if len(out) == n {
			break
		}
		if len(rc.Parents) > 1 {
			continue
		}
		subject, _, _ := strings.Cut(rc.GetCommit().GetMessage(), "\n")
		out = append(out, strings.TrimSpace(subject))
	}
	return out, nil
}

// CommitIdentity is the name and email GitHub writes as the author of the
// commits driftfix makes through the API: its account's login and that
// account's noreply address, <id>+<login>@users.noreply.<host>. A
// Signed-off-by trailer with them matches the commit's author, as a DCO
// check requires.
func (c *Client) CommitIdentity(ctx context.Context, r githost.Repo) (name, email string, err error) {
	c.mu.Lock()
	ident := c.ident
	c.mu.Unlock()
	if ident[0] != "" {
		return ident[0], ident[1], nil
	}
	login, err := c.Login(ctx)
	if err != nil {
		return "", "", err
	}
	cl, err := c.client(ctx, r)
	if err != nil {
		return "", "", err
	}
	u, _, err := fetch(ctx, c, "get user", func(ctx context.Context) (*gh.User, *gh.Response, error) {
		return cl.Users.Get(ctx, login)
	})
	if err != nil {
		return "", "", fmt.Errorf("look up the account %s for its commit address: %w", login, err)
	}
	if u.GetID() == 0 {
		return "", "", fmt.Errorf("look up the account %s for its commit address: GitHub gave no id", login)
	}
	host := c.Host()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h // an Enterprise Server's address names no port
	}
	ident = [2]string{login, fmt.Sprintf("%d+%s@users.noreply.%s", u.GetID(), login, host)}
	c.mu.Lock()
	c.ident = ident
	c.mu.Unlock()
	return ident[0], ident[1], nil
}
