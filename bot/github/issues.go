package github

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/githost"
	gh "github.com/google/go-github/v89/github"
)

// The Drift Dashboard is an issue driftfix keeps per repository. Reading it
// again each cycle is a conditional GET (a 304 when no one touched it);
// writing it needs the App's issues: write permission.

func toIssue(i *gh.Issue) *githost.Issue {
	return &githost.Issue{Number: i.GetNumber(), URL: i.GetHTMLURL(), Title: i.GetTitle(), Body: i.GetBody(), State: i.GetState(), Author: i.GetUser().GetLogin()}
}

// FindIssue returns the oldest issue, open or closed, that driftfix's own
// account opened and whose body starts with marker, or nil. GitHub lists
// pull requests among issues; they never count, nor does anyone else's
// issue holding a copy of the marker.
func (c *Client) FindIssue(ctx context.Context, r githost.Repo, marker string) (*githost.Issue, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	login, err := c.Login(ctx)
	if err != nil {
		return nil, err
	}
	opt := &gh.IssueListByRepoOptions{Creator: login, State: "all", Sort: "created", Direction: "asc", ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		page, resp, err := fetch(ctx, c, "list issues", func(ctx context.Context) ([]*gh.Issue, *gh.Response, error) {
			return cl.Issues.ListByRepo(ctx, r.Owner, r.Name, opt)
		})
		if err != nil {
			return nil, fmt.Errorf("look for driftfix's issue in %s: %w", r, err)
		}
		for _, i := range page {
			if !i.IsPullRequest() && strings.EqualFold(i.GetUser().GetLogin(), login) && strings.HasPrefix(i.GetBody(), marker) {
				return toIssue(i), nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil, nil
		}
		opt.ListOptions.Page = resp.NextPage
	}
}

// Issue reads one issue, conditionally (a 304 costs no rate limit); nil
// when there is no such issue or the number is a pull request's.
func (c *Client) Issue(ctx context.Context, r githost.Repo, number int) (*githost.Issue, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	i, _, err := fetch(ctx, c, "get issue", func(ctx context.Context) (*gh.Issue, *gh.Response, error) {
		return cl.Issues.Get(ctx, r.Owner, r.Name, number)
	})
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read issue %s#%d: %w", r, number, err)
	}
	if i.IsPullRequest() {
		return nil, nil
	}
	return toIssue(i), nil
}

// lastEditedQuery reads an issue's body and who edited it last in one
// GraphQL read. GitHub's REST API says who opened an issue but not who
// edited it, nor who ticked a task-list box (ticking one is an edit of the
// body); GraphQL's Issue.lastEditedBy is the account behind the body's last
// edit. Reading the body in the same query keeps the two consistent.
const lastEditedQuery = `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { issue(number: $number) { body lastEditedBy { login } } }
}`

// IssueLastEditor returns an issue's body and the login of the account
// that edited it last ("" when it was never edited), from GitHub's GraphQL API.
func (c *Client) IssueLastEditor(ctx context.Context, r githost.Repo, number int) (string, string, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return "", "", err
	}
	var out struct {
		Data struct {
			Repository *struct {
				Issue *struct {
					Body         string
					LastEditedBy *struct{ Login string }
				}
			}
		}
		Errors []struct{ Type, Message string }
	}
	err = c.call(ctx, "graphql issue editor", func(ctx context.Context) (*gh.Response, error) {
		req, err := cl.NewRequest(ctx, "POST", c.graphQLURL(), map[string]any{"query": lastEditedQuery,
			"variables": map[string]any{"owner": r.Owner, "name": r.Name, "number": number}})
		if err != nil {
			return nil, err
		}
		return cl.Do(req, &out)
	})
	if err == nil && len(out.Errors) > 0 {
		err = errors.New(out.Errors[0].Message)
		if out.Errors[0].Type == "FORBIDDEN" { // GraphQL's "Resource not accessible by integration"
			err = fmt.Errorf("%w: it needs issues=read; grant it in the App's settings (deploy/github-app.yaml lists what driftfix asks for) and accept it on the installation: %w", ErrPermission, err)
		}
	}
	if err == nil && (out.Data.Repository == nil || out.Data.Repository.Issue == nil) {
		err = errors.New("GitHub answered without the issue")
	}
	if err != nil {
		return "", "", fmt.Errorf("read who last edited issue %s#%d: %w", r, number, err)
	}
	is := out.Data.Repository.Issue
	editor := ""
	if is.LastEditedBy != nil {
		editor = is.LastEditedBy.Login
	}
	return is.Body, editor, nil
}

// graphQLURL is the GraphQL endpoint beside the REST base: /graphql on
// github.com, /api/graphql on an Enterprise Server (whose REST base is /api/v3/).
func (c *Client) graphQLURL() string {
	if base, ok := strings.CutSuffix(c.base, "/api/v3/"); ok {
		return base + "/api/graphql"
	}
	return c.base + "graphql"
}

// OpenIssue opens an issue.
func (c *Client) OpenIssue(ctx context.Context, r githost.Repo, title, body string) (*githost.Issue, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	i, _, err := fetch(ctx, c, "create issue", func(ctx context.Context) (*gh.Issue, *gh.Response, error) {
		return cl.Issues.Create(ctx, r.Owner, r.Name, &gh.IssueRequest{Title: gh.Ptr(title), Body: gh.Ptr(body)})
	})
	if err != nil {
		return nil, fmt.Errorf("open an issue in %s: %w", r, err)
	}
	return toIssue(i), nil
}

// EditIssue sets an issue's title and body.
func (c *Client) EditIssue(ctx context.Context, r githost.Repo, number int, title, body string) error {
	cl, err := c.client(ctx, r)
	if err != nil {
		return err
	}
	err = c.call(ctx, "edit issue", func(ctx context.Context) (*gh.Response, error) {
		_, resp, err := cl.Issues.Edit(ctx, r.Owner, r.Name, number, &gh.IssueRequest{Title: gh.Ptr(title), Body: gh.Ptr(body)})
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("update issue %s#%d: %w", r, number, err)
	}
	return nil
}

// CloseIssue closes an issue as not planned.
func (c *Client) CloseIssue(ctx context.Context, r githost.Repo, number int) error {
	cl, err := c.client(ctx, r)
	if err != nil {
		return err
	}
	err = c.call(ctx, "close issue", func(ctx context.Context) (*gh.Response, error) {
		_, resp, err := cl.Issues.Edit(ctx, r.Owner, r.Name, number, &gh.IssueRequest{State: gh.Ptr("closed"), StateReason: gh.Ptr("not_planned")})
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("close issue %s#%d: %w", r, number, err)
	}
	return nil
}
