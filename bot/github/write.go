package github

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/githost"
	gh "github.com/google/go-github/v89/github"
)

// Push makes branch hold base's head plus files, as one commit through the
// Git data API (GitHub signs it as the App). It is a three-way change: when
// a file on base's head is no longer the Synced one the fix was computed
// from, nothing is written and the error is githost.ErrFileChanged, so commits made
// to the file since are never reverted. A branch that already holds exactly
// that content is left alone; a branch whose head commit driftfix did not
// make (a person pushed to it) is never overwritten: githost.ErrNotOurs. Otherwise
// the branch is created or moved to the new commit. It reports whether the
// branch changed and whether it was created.
func (c *Client) Push(ctx context.Context, r githost.Repo, base, branch, message string, files map[string]githost.Change) (changed, created bool, err error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return false, false, err
	}
	baseSHA, err := c.refSHA(ctx, cl, r, base)
	if err != nil {
		return false, false, err
	}
	if baseSHA == "" {
		return false, false, fmt.Errorf("%w: %q in %s", githost.ErrNoBase, base, r)
	}
	baseCommit, err := c.commit(ctx, cl, r, baseSHA)
	if err != nil {
		return false, false, err
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		cur, err := c.blobSHA(ctx, cl, r, baseSHA, f)
		if err != nil {
			return false, false, err
		}
		if want := gitBlobSHA(files[f].Synced); cur != want {
			return false, false, fmt.Errorf("%w: %s on %s of %s", githost.ErrFileChanged, f, base, r)
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	var entries []*gh.TreeEntry
	for _, f := range names {
		entries = append(entries, &gh.TreeEntry{Path: gh.Ptr(f), Mode: gh.Ptr("100644"), Type: gh.Ptr("blob"), Content: gh.Ptr(string(files[f].Content))})
	}
	tree, _, err := fetch(ctx, c, "create tree", func(ctx context.Context) (*gh.Tree, *gh.Response, error) {
		return cl.Git.CreateTree(ctx, r.Owner, r.Name, baseCommit.GetTree().GetSHA(), entries)
	})
	if err != nil {
		return false, false, fmt.Errorf("write the fix's files to %s: %w", r, err)
	}
	headSHA, err := c.refSHA(ctx, cl, r, branch)
	if err != nil {
		return false, false, err
	}
	if headSHA != "" {
		head, err := c.commit(ctx, cl, r, headSHA)
		if err != nil {
			return false, false, err
		}
		if head.GetTree().GetSHA() == tree.GetSHA() && len(head.Parents) == 1 && head.Parents[0].GetSHA() == baseSHA {
			return false, false, nil
		}
		if err := c.ours(ctx, cl, r, branch, headSHA); err != nil {
			return false, false, err
		}
	}
	commit, _, err := fetch(ctx, c, "create commit", func(ctx context.Context) (*gh.Commit, *gh.Response, error) {
		return cl.Git.CreateCommit(ctx, r.Owner, r.Name, gh.Commit{Message: gh.Ptr(message), Tree: &gh.Tree{SHA: tree.SHA}, Parents: []*gh.Commit{{SHA: gh.Ptr(baseSHA)}}}, nil)
	})
	if err != nil {
		return false, false, fmt.Errorf("commit the fix to %s: %w", r, err)
	}
	if headSHA == "" {
		err = c.call(ctx, "create branch", func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := cl.Git.CreateRef(ctx, r.Owner, r.Name, gh.CreateRef{Ref: "refs/heads/" + branch, SHA: commit.GetSHA()})
			return resp, err
		})
		if unprocessable(err) {
			return false, false, fmt.Errorf("%w: %s in %s", githost.ErrRace, branch, r)
		}
		if err != nil {
			return false, false, fmt.Errorf("create branch %s in %s: %w", branch, r, err)
		}
		return true, true, nil
	}
	err = c.call(ctx, "update branch", func(ctx context.Context) (*gh.Response, error) {
		// Forced: the branch's own earlier fix commit is replaced (it was checked to be driftfix's above).
		_, resp, err := cl.Git.UpdateRef(ctx, r.Owner, r.Name, "refs/heads/"+branch, gh.UpdateRef{SHA: commit.GetSHA(), Force: gh.Ptr(true)})
		return resp, err
	})
	if err != nil {
		return false, false, fmt.Errorf("update branch %s in %s: %w", branch, r, err)
	}
	return true, false, nil
}

// ours checks that the commit at the head of branch was authored and
// committed by driftfix's account (GitHub's web-flow may commit for it).
func (c *Client) ours(ctx context.Context, cl *gh.Client, r githost.Repo, branch, sha string) error {
	login, err := c.Login(ctx)
	if err != nil {
		return err
	}
	rc, _, err := fetch(ctx, c, "get commit author", func(ctx context.Context) (*gh.RepositoryCommit, *gh.Response, error) {
		return cl.Repositories.GetCommit(ctx, r.Owner, r.Name, sha, nil)
	})
	if err != nil {
		return fmt.Errorf("read commit %s of %s: %w", sha, r, err)
	}
	author, committer := rc.GetAuthor().GetLogin(), rc.GetCommitter().GetLogin()
	if !strings.EqualFold(author, login) || !(strings.EqualFold(committer, login) || committer == "web-flow") {
		who := author
		if who == "" {
			who = rc.GetCommit().GetAuthor().GetName() + " (no GitHub account)"
		}
		return fmt.Errorf("%w: %s in %s ends in commit %.12s by %s", githost.ErrNotOurs, branch, r, sha, who)
	}
	return nil
}

// blobSHA returns the Git blob SHA of a file at a commit, or "" when the
// file does not exist there.
func (c *Client) blobSHA(ctx context.Context, cl *gh.Client, r githost.Repo, sha, file string) (string, error) {
	fc, _, err := fetch(ctx, c, "get file", func(ctx context.Context) (*gh.RepositoryContent, *gh.Response, error) {
		fc, _, resp, err := cl.Repositories.GetContents(ctx, r.Owner, r.Name, file, &gh.RepositoryContentGetOptions{Ref: sha})
		return fc, resp, err
	})
	if notFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s at %.12s of %s: %w", file, sha, r, err)
	}
	if fc == nil || fc.GetType() != "file" {
		return "", fmt.Errorf("read %s at %.12s of %s: not a file", file, sha, r)
	}
	return fc.GetSHA(), nil
}

// gitBlobSHA is the SHA Git names content by, "" for nil (no file).
func gitBlobSHA(b []byte) string {
	if b == nil {
		return ""
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func unprocessable(err error) bool {
	var er *gh.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnprocessableEntity
}

// refSHA returns the commit a branch points at, or "" when it does not exist.
func (c *Client) refSHA(ctx context.Context, cl *gh.Client, r githost.Repo, branch string) (string, error) {
	ref, _, err := fetch(ctx, c, "get branch", func(ctx context.Context) (*gh.Reference, *gh.Response, error) {
		return cl.Git.GetRef(ctx, r.Owner, r.Name, "heads/"+branch)
	})
	if notFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read branch %s of %s: %w", branch, r, err)
	}
	return ref.GetObject().GetSHA(), nil
}

func (c *Client) commit(ctx context.Context, cl *gh.Client, r githost.Repo, sha string) (*gh.Commit, error) {
	commit, _, err := fetch(ctx, c, "get commit", func(ctx context.Context) (*gh.Commit, *gh.Response, error) {
		return cl.Git.GetCommit(ctx, r.Owner, r.Name, sha)
	})
	if err != nil {
		return nil, fmt.Errorf("read commit %s of %s: %w", sha, r, err)
	}
	return commit, nil
}

func notFound(err error) bool {
	var er *gh.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound
}

// OpenPR opens a pull request from an existing branch, then labels it and
// asks for reviewers and assignees (those extras are best effort: a
// reviewer who cannot review is logged, not fatal).
func (c *Client) OpenPR(ctx context.Context, r githost.Repo, n githost.NewPullRequest) (*githost.PullRequest, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	p, _, err := fetch(ctx, c, "create pull request", func(ctx context.Context) (*gh.PullRequest, *gh.Response, error) {
		return cl.PullRequests.Create(ctx, r.Owner, r.Name, &gh.NewPullRequest{Title: gh.Ptr(n.Title), Head: gh.Ptr(n.Branch), Base: gh.Ptr(n.Base), Body: gh.Ptr(n.Body), Draft: gh.Ptr(n.Draft)})
	})
	if unprocessable(err) && strings.Contains(err.Error(), "already exists") {
		return nil, fmt.Errorf("%w: a pull request for %s in %s", githost.ErrRace, n.Branch, r)
	}
	if err != nil {
		return nil, fmt.Errorf("open the pull request for %s in %s: %w", n.Branch, r, err)
	}
	pr := toPR(p)
	if len(n.Labels) > 0 {
		if err := c.call(ctx, "add labels", func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := cl.Issues.AddLabelsToIssue(ctx, r.Owner, r.Name, pr.Number, n.Labels)
			return resp, err
		}); err != nil {
			c.log.Warn("could not label pull request", "repo", r.String(), "number", pr.Number, "error", err.Error())
		} else {
			pr.Labels = append(pr.Labels, n.Labels...)
		}
	}
	if len(n.Reviewers) > 0 {
		// org/team names a team of the repository's organization, by its slug
		var req gh.ReviewersRequest
		for _, rv := range n.Reviewers {
			if _, team, ok := strings.Cut(rv, "/"); ok {
				req.TeamReviewers = append(req.TeamReviewers, team)
			} else {
				req.Reviewers = append(req.Reviewers, rv)
			}
		}
		if err := c.call(ctx, "request reviewers", func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := cl.PullRequests.RequestReviewers(ctx, r.Owner, r.Name, pr.Number, req)
			return resp, err
		}); err != nil {
			c.log.Warn("could not request reviewers", "repo", r.String(), "number", pr.Number, "error", err.Error())
		}
	}
	if len(n.Assignees) > 0 {
		if err := c.call(ctx, "add assignees", func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := cl.Issues.AddAssignees(ctx, r.Owner, r.Name, pr.Number, n.Assignees)
			return resp, err
		}); err != nil {
			c.log.Warn("could not assign pull request", "repo", r.String(), "number", pr.Number, "error", err.Error())
		}
	}
	return &pr, nil
}

// EditPR replaces a pull request's title and body.
func (c *Client) EditPR(ctx context.Context, r githost.Repo, number int, title, body string) error {
	cl, err := c.client(ctx, r)
	if err != nil {
		return err
	}
	err = c.call(ctx, "edit pull request", func(ctx context.Context) (*gh.Response, error) {
		_, resp, err := cl.PullRequests.Edit(ctx, r.Owner, r.Name, number, &gh.PullRequest{Title: gh.Ptr(title), Body: gh.Ptr(body)})
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("update pull request %s#%d: %w", r, number, err)
	}
	return nil
}

// ClosePR comments on a pull request, closes it and deletes its branch.
func (c *Client) ClosePR(ctx context.Context, r githost.Repo, number int, branch, comment string) error {
	cl, err := c.client(ctx, r)
	if err != nil {
		return err
	}
	if comment != "" {
		if err := c.call(ctx, "comment", func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := cl.Issues.CreateComment(ctx, r.Owner, r.Name, number, &gh.IssueComment{Body: gh.Ptr(comment)})
			return resp, err
		}); err != nil {
			return fmt.Errorf("comment on pull request %s#%d: %w", r, number, err)
		}
	}
	if err := c.call(ctx, "close pull request", func(ctx context.Context) (*gh.Response, error) {
		_, resp, err := cl.PullRequests.Edit(ctx, r.Owner, r.Name, number, &gh.PullRequest{State: gh.Ptr("closed")})
		return resp, err
	}); err != nil {
		return fmt.Errorf("close pull request %s#%d: %w", r, number, err)
	}
	if branch != "" {
		sha, err := c.refSHA(ctx, cl, r, branch)
		if err == nil && sha != "" {
			err = c.ours(ctx, cl, r, branch, sha)
		}
		if err == nil && sha != "" {
			err = c.DeleteBranch(ctx, r, branch)
		}
		if err != nil {
			c.log.Warn("left the branch of a closed pull request in place", "repo", r.String(), "branch", branch, "error", err.Error())
		}
	}
	return nil
}

// Comment adds a conversation comment to a pull request.
func (c *Client) Comment(ctx context.Context, r githost.Repo, number int, body string) error {
	cl, err := c.client(ctx, r)
	if err != nil {
		return err
	}
	if err := c.call(ctx, "comment", func(ctx context.Context) (*gh.Response, error) {
		_, resp, err := cl.Issues.CreateComment(ctx, r.Owner, r.Name, number, &gh.IssueComment{Body: gh.Ptr(body)})
		return resp, err
	}); err != nil {
		return fmt.Errorf("comment on pull request %s#%d: %w", r, number, err)
	}
	return nil
}

// DeleteBranch deletes a branch; a branch already gone is fine.
func (c *Client) DeleteBranch(ctx context.Context, r githost.Repo, branch string) error {
	cl, err := c.client(ctx, r)
	if err != nil {
		return err
	}
	err = c.call(ctx, "delete branch", func(ctx context.Context) (*gh.Response, error) {
		return cl.Git.DeleteRef(ctx, r.Owner, r.Name, "refs/heads/"+branch)
	})
	if err != nil && !notFound(err) {
		var er *gh.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnprocessableEntity {
			return nil // "Reference does not exist"
		}
		return fmt.Errorf("delete branch %s of %s: %w", branch, r, err)
	}
	return nil
}

// Comments returns a pull request's conversation comments with their authors.
func (c *Client) Comments(ctx context.Context, r githost.Repo, number int) ([]githost.Comment, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	var out []githost.Comment
	opt := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		page, resp, err := fetch(ctx, c, "list comments", func(ctx context.Context) ([]*gh.IssueComment, *gh.Response, error) {
			return cl.Issues.ListComments(ctx, r.Owner, r.Name, number, opt)
		})
		if err != nil {
			return nil, fmt.Errorf("read comments of %s#%d: %w", r, number, err)
		}
		for _, cm := range page {
			out = append(out, githost.Comment{ID: cm.GetID(), Author: cm.GetUser().GetLogin(), Association: cm.GetAuthorAssociation(), Body: cm.GetBody()})
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// React adds a reaction ("+1", "eyes", ...) to a pull request's comment, to
// acknowledge a command.
func (c *Client) React(ctx context.Context, r githost.Repo, commentID int64, reaction string) error {
	cl, err := c.client(ctx, r)
	if err != nil {
		return err
	}
	_, _, err = fetch(ctx, c, "react to comment", func(ctx context.Context) (*gh.Reaction, *gh.Response, error) {
		return cl.Reactions.CreateIssueCommentReaction(ctx, r.Owner, r.Name, commentID, reaction)
	})
	if err != nil {
		return fmt.Errorf("react to comment %d on %s: %w", commentID, r, err)
	}
	return nil
}

// Reacted reports whether login reacted to a pull request's comment:
// driftfix's acknowledgement of a command it followed, which outlives its
// state database.
func (c *Client) Reacted(ctx context.Context, r githost.Repo, commentID int64, login string) (bool, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return false, err
	}
	opt := &gh.ListReactionOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for page := 0; page < 10; page++ {
		rs, resp, err := fetch(ctx, c, "list reactions", func(ctx context.Context) ([]*gh.Reaction, *gh.Response, error) {
			return cl.Reactions.ListIssueCommentReactions(ctx, r.Owner, r.Name, commentID, opt)
		})
		if err != nil {
			return false, fmt.Errorf("read the reactions to comment %d on %s: %w", commentID, r, err)
		}
		for _, x := range rs {
			if strings.EqualFold(x.GetUser().GetLogin(), login) {
				return true, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return false, nil
}

// Permission is an account's permission on a repository, from the
// collaborator permission API: its role_name when that is one of GitHub's
// base roles (admin, maintain, write, triage, read), else its permission
// (admin, write, read or none; a custom role reports the base role it
// extends). An account GitHub does not know as a user (an App's bot
// account, such as github-actions[bot]) has none.
func (c *Client) Permission(ctx context.Context, r githost.Repo, login string) (string, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return "", err
	}
	level, _, err := fetch(ctx, c, "get permission", func(ctx context.Context) (*gh.RepositoryPermissionLevel, *gh.Response, error) {
		return cl.Repositories.GetPermissionLevel(ctx, r.Owner, r.Name, login)
	})
	if notFound(err) {
		return githost.PermissionNone, nil // not a collaborator
	}
	if err != nil {
		return "", fmt.Errorf("read %s's permission on %s: %w", login, r, err)
	}
	switch role := level.GetRoleName(); role {
	case githost.PermissionAdmin, githost.PermissionMaintain, githost.PermissionWrite, githost.PermissionTriage, githost.PermissionRead:
		return role, nil
	}
	return level.GetPermission(), nil
}

// maxEventPages bounds the pages of a pull request's events LabeledBy reads.
const maxEventPages = 30

// LabeledBy is the account that last applied label to a pull request (or
// issue), from its issue events (event labeled, actor, label.name; label
// names compare without case, as GitHub's do), and that event's id; "" when
// no event shows the label applied.
func (c *Client) LabeledBy(ctx context.Context, r githost.Repo, number int, label string) (string, int64, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return "", 0, err
	}
	login, id := "", int64(0)
	opt := &gh.ListOptions{PerPage: 100}
	for page := 0; page < maxEventPages; page++ {
		events, resp, err := fetch(ctx, c, "list issue events", func(ctx context.Context) ([]*gh.IssueEvent, *gh.Response, error) {
			return cl.Issues.ListIssueEvents(ctx, r.Owner, r.Name, number, opt)
		})
		if err != nil {
			return "", 0, fmt.Errorf("read the events of %s#%d: %w", r, number, err)
		}
		for _, e := range events { // oldest first
			if e.GetEvent() == "labeled" && strings.EqualFold(e.GetLabel().GetName(), label) {
				login, id = e.GetActor().GetLogin(), e.GetID()
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return login, id, nil
		}
		opt.Page = resp.NextPage
	}
	return "", 0, fmt.Errorf("read the events of %s#%d: more than %d pages", r, number, maxEventPages)
}
