package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/githost"
)

// fileHost is what a one-file pull request needs: its branch, the pull
// request and its comments.
type fileHost interface {
	BranchHost
	PullHost
	SteerHost
}

// fileRun publishes, to one repository, pull requests that each change one
// file and are found again by their branch: the platform and ignore-rule
// pull requests.
type fileRun struct {
	*run
	ctx   context.Context
	host  fileHost
	repo  githost.Repo
	login string
}

// connect finds the host of the repository at url and driftfix's account there.
func (p *fileRun) connect(url string) error {
	var err error
	if p.host, p.repo, err = p.hostFor(url); err != nil {
		return err
	}
	p.login, err = p.host.Login(p.ctx)
	return err
}

// fileChange is one pull request that changes one file.
type fileChange struct {
	Branch, Base, Title, Body string
	Policy                    config.Policy
	File                      string
	Before, After             []byte
	Message                   string // the commit message
	Marker                    string // the marker its body ends with
	Fingerprint               string // the change's content
	What                      string // how the skip lines name it
	// Waits says what a merged one waits for; Dropped, what follows when a
	// person closed it unmerged.
	Waits, Dropped string
}

// propose opens or updates one file's pull request unless policy or a person
// says not to; stands is told of the pull request that stands for the
// change (merged, one that waits for Argo CD to read it).
func (p *fileRun) propose(c fileChange, stands func(number int, url string, merged bool)) error {
	pol := c.Policy
	ex, err := p.host.FindPR(p.ctx, p.repo, c.Branch)
	if err != nil {
		return err
	}
	switch {
	case ex != nil && !ex.Own(p.repo, p.login):
		p.skipFile(c, fmt.Sprintf("%s from this branch was opened by %s, not by driftfix's account %s; left alone", ref(p.repo, ex.Number), ex.Author, p.login))
		return nil
	case ex != nil && ex.Merged:
		stands(ex.Number, ex.URL, true)
		p.skipFile(c, "merged in "+ref(p.repo, ex.Number)+"; "+c.Waits)
		return nil
	case ex != nil && ex.State == "closed":
		comments, err := p.host.Comments(p.ctx, p.repo, ex.Number)
		if err != nil {
			return err
		}
		last := len(comments) - 1
		if last < 0 || !strings.EqualFold(comments[last].Author, p.login) || !strings.Contains(comments[last].Body, closedMarker) {
			p.skipFile(c, "a person closed "+ref(p.repo, ex.Number)+" unmerged; "+c.Dropped)
			return nil
		}
		ex = nil // driftfix closed it when it was no longer needed; it is needed again
	}
	switch {
	case ex == nil && (p.Config.DryRun || (pol.DryRun != nil && *pol.DryRun)):
		p.skipFile(c, "dry run by policy")
		return nil
	case ex == nil && pol.Quiet(p.now):
		p.skipFile(c, "quiet hours")
		return nil
	}
	t, err := p.terms(p.ctx, p.host, p.repo, pol, false, c.Title, c.Message)
	if err != nil {
		return err
	}
	if t.held != "" && ex == nil {
		p.skipFile(c, t.held)
		return nil
	}
	c.Title, c.Message = t.title, t.message
	base := c.Base
	if base == "" || base == "HEAD" {
		if base, err = p.host.DefaultBranch(p.ctx, p.repo); err != nil {
			return err
		}
	}
	files := map[string]githost.Change{c.File: {Synced: c.Before, Content: c.After}}
	if ex != nil {
		stands(ex.Number, ex.URL, false)
		return p.updateFile(c, ex, base, files)
	}
	_, created, err := p.host.Push(p.ctx, p.repo, base, c.Branch, c.Message, files)
	if why := pushRefused(err, base, p.repo); why != "" {
		p.skipFile(c, why)
		return nil
	}
	if err != nil {
		return err
	}
	gpr, err := p.host.OpenPR(p.ctx, p.repo, githost.NewPullRequest{Branch: c.Branch, Base: base, Title: c.Title, Body: fitBody(c.Body),
		Draft: pol.Draft != nil && *pol.Draft, Labels: t.labels, Reviewers: t.reviewers, Assignees: pol.Assignees})
	if errors.Is(err, githost.ErrRace) {
		p.skipFile(c, "another driftfix opened this "+c.What+" first")
		return nil
	}
	if err != nil {
		if created {
			err = errors.Join(err, p.host.DeleteBranch(p.ctx, p.repo, c.Branch))
		}
		return err
	}
	p.out.Opened = append(p.out.Opened, ref(p.repo, gpr.Number))
	stands(gpr.Number, gpr.URL, false)
	return nil
}

// updateFile brings an open pull request to the current change; one whose
// title and fingerprint are current is left as it is.
func (p *fileRun) updateFile(c fileChange, ex *githost.PullRequest, base string, files map[string]githost.Change) error {
	m := lastMarker(bodyFingerprint, strings.TrimSuffix(ex.Body, c.Marker))
	if ex.Title == c.Title && m != nil && m[1] == c.Fingerprint {
		p.out.Unchanged = append(p.out.Unchanged, ref(p.repo, ex.Number))
		return nil
	}
	_, _, err := p.host.Push(p.ctx, p.repo, base, c.Branch, c.Message, files)
	if errors.Is(err, githost.ErrNotOurs) || errors.Is(err, githost.ErrFileChanged) {
		p.skipFile(c, fmt.Sprintf("%s not updated: %v", ref(p.repo, ex.Number), err))
		return nil
	}
	if err != nil {
		return err
	}
	if err := p.host.EditPR(p.ctx, p.repo, ex.Number, c.Title, fitBody(c.Body)); err != nil {
		return err
	}
	p.out.Updated = append(p.out.Updated, ref(p.repo, ex.Number))
	return nil
}

// close closes one of driftfix's pull requests here, saying why, with the
// marker that tells a later cycle driftfix closed it.
func (p *fileRun) close(gpr githost.PullRequest, why string) error {
	if err := p.host.ClosePR(p.ctx, p.repo, gpr.Number, gpr.Branch, "Closing: "+why+"\n\n"+closedMarker); err != nil {
		return err
	}
	p.out.Closed = append(p.out.Closed, ref(p.repo, gpr.Number))
	return nil
}

func (p *fileRun) skipFile(c fileChange, why string) {
	p.out.Skipped = append(p.out.Skipped, c.Branch+": "+why)
}
