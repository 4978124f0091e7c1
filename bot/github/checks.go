package github

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/githost"
	gh "github.com/google/go-github/v89/github"
)

// GitHub's limits on a check run's output and a commit status's description.
const (
	maxCheckText         = 65535
	maxDescription       = 140
	maxAnnotations       = 50
	maxAnnotationMessage = 64 << 10
)

// SetCheck publishes a check of a commit. As a GitHub App it is a check run
// (permission checks: write): the App's run of that name on the commit is
// updated, or one is created. A token cannot create check runs, so in token
// mode it is a commit status (permission statuses: write) with the title as
// its description; the newest status of a name is the one GitHub shows.
func (c *Client) SetCheck(ctx context.Context, r githost.Repo, sha string, ck githost.Check) error {
	cl, err := c.client(ctx, r)
	if err != nil {
		return err
	}
	conclusion := "failure"
	if ck.Success {
		conclusion = "success"
	}
	if ck.Neutral {
		conclusion = "neutral"
	}
	if c.apps == nil {
		state := conclusion
		if state == "neutral" {
			state = "success" // a commit status has no neutral state
		}
		st := gh.RepoStatus{State: gh.Ptr(state), Context: gh.Ptr(ck.Name), Description: gh.Ptr(clip(ck.Title, maxDescription))}
		if ck.DetailsURL != "" {
			st.TargetURL = gh.Ptr(ck.DetailsURL)
		}
		_, _, err := fetch(ctx, c, "create status", func(ctx context.Context) (*gh.RepoStatus, *gh.Response, error) {
			return cl.Repositories.CreateStatus(ctx, r.Owner, r.Name, sha, st)
		})
		if err != nil {
			return fmt.Errorf("set status %s on %s@%s: %w", ck.Name, r, short(sha), err)
		}
		return nil
	}
	out := &gh.CheckRunOutput{Title: gh.Ptr(clip(ck.Title, 255)), Summary: gh.Ptr(clip(ck.Summary, maxCheckText)), Text: gh.Ptr(clip(ck.Text, maxCheckText))}
	for i, a := range ck.Annotations {
		if i == maxAnnotations {
			break // GitHub takes 50 a request; the check's text lists them all
		}
		out.Annotations = append(out.Annotations, &gh.CheckRunAnnotation{Path: gh.Ptr(a.Path), StartLine: gh.Ptr(a.Line), EndLine: gh.Ptr(a.Line),
			AnnotationLevel: gh.Ptr(a.Level), Title: gh.Ptr(clip(a.Title, 255)), Message: gh.Ptr(clip(a.Message, maxAnnotationMessage))})
	}
	var details *string
	if ck.DetailsURL != "" {
		details = gh.Ptr(ck.DetailsURL)
	}
	id, err := c.ownCheckRun(ctx, cl, r, sha, ck.Name)
	if err != nil {
		return err
	}
	if id != 0 {
		// GitHub appends an update's annotations to the run's: they are
		// sent once, when the run is created for the commit.
		out.Annotations = nil
		_, _, err = fetch(ctx, c, "update check run", func(ctx context.Context) (*gh.CheckRun, *gh.Response, error) {
			return cl.Checks.UpdateCheckRun(ctx, r.Owner, r.Name, id, gh.UpdateCheckRunOptions{Name: ck.Name, Status: gh.Ptr("completed"),
				Conclusion: gh.Ptr(conclusion), Output: out, DetailsURL: details})
		})
	} else {
		_, _, err = fetch(ctx, c, "create check run", func(ctx context.Context) (*gh.CheckRun, *gh.Response, error) {
			return cl.Checks.CreateCheckRun(ctx, r.Owner, r.Name, gh.CreateCheckRunOptions{Name: ck.Name, HeadSHA: sha, Status: gh.Ptr("completed"),
				Conclusion: gh.Ptr(conclusion), Output: out, DetailsURL: details})
		})
	}
	if err != nil {
		return fmt.Errorf("set check run %s on %s@%s: %w", ck.Name, r, short(sha), err)
	}
	return nil
}

// ownCheckRun finds the App's check run of a name on a commit, or 0.
func (c *Client) ownCheckRun(ctx context.Context, cl *gh.Client, r githost.Repo, sha, name string) (int64, error) {
	opt := &gh.ListCheckRunsOptions{CheckName: gh.Ptr(name), AppID: gh.Ptr(c.cfg.AppID), ListOptions: gh.ListOptions{PerPage: 100}}
	res, _, err := fetch(ctx, c, "list check runs", func(ctx context.Context) (*gh.ListCheckRunsResults, *gh.Response, error) {
		return cl.Checks.ListCheckRunsForRef(ctx, r.Owner, r.Name, sha, opt)
	})
	if err != nil {
		return 0, fmt.Errorf("read check runs of %s@%s: %w", r, short(sha), err)
	}
	for _, run := range res.CheckRuns {
		if run.GetName() == name && run.GetApp().GetID() == c.cfg.AppID {
			return run.GetID(), nil
		}
	}
	return 0, nil
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
