package github

import (
	"context"
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/githost"
	gh "github.com/google/go-github/v89/github"
)

// maxReviewComments bounds the comments of one review driftfix posts.
const maxReviewComments = 50

// Review posts a review of a pull request's head commit (event COMMENT:
// it neither approves nor blocks), with its comments on lines of the
// head's side of the diff.
func (c *Client) Review(ctx context.Context, r githost.Repo, number int, rv githost.Review) error {
	cl, err := c.client(ctx, r)
	if err != nil {
		return err
	}
	req := &gh.PullRequestReviewRequest{CommitID: gh.Ptr(rv.CommitID), Body: gh.Ptr(clip(rv.Body, maxCheckText)), Event: gh.Ptr("COMMENT")}
	for i, cm := range rv.Comments {
		if i == maxReviewComments {
			break
		}
		req.Comments = append(req.Comments, &gh.DraftReviewComment{Path: gh.Ptr(cm.Path), Line: gh.Ptr(cm.Line), Side: gh.Ptr("RIGHT"), Body: gh.Ptr(clip(cm.Body, maxCheckText))})
	}
	_, _, err = fetch(ctx, c, "create review", func(ctx context.Context) (*gh.PullRequestReview, *gh.Response, error) {
		return cl.PullRequests.CreateReview(ctx, r.Owner, r.Name, number, req)
	})
	if err != nil {
		return fmt.Errorf("review %s#%d at %s: %w", r, number, short(rv.CommitID), err)
	}
	return nil
}

// Reviewed reports whether login has posted a review of the pull request on
// commit: a review is posted once per head commit, even after driftfix's
// state was lost.
func (c *Client) Reviewed(ctx context.Context, r githost.Repo, number int, commit, login string) (bool, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return false, err
	}
	opt := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := fetch(ctx, c, "list reviews", func(ctx context.Context) ([]*gh.PullRequestReview, *gh.Response, error) {
			return cl.PullRequests.ListReviews(ctx, r.Owner, r.Name, number, opt)
		})
		if err != nil {
			return false, fmt.Errorf("read the reviews of %s#%d: %w", r, number, err)
		}
		for _, rv := range page {
			if rv.GetCommitID() == commit && strings.EqualFold(rv.GetUser().GetLogin(), login) {
				return true, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return false, nil
		}
		opt.Page = resp.NextPage
	}
}
