package publish

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/githost"
)

// platformMarkerRE reads the marker a platform PR's body ends with.
var platformMarkerRE = regexp.MustCompile(`<!-- driftfix:platform=([0-9a-f]+) -->`)

// platforms publishes the cycle's platform pull requests (one argocd-cm
// change per finding many applications share) and closes driftfix's open
// ones whose shared finding is gone. Platform PRs are found on the host by
// their branch every cycle, never from the state store, so restarts, lost
// databases and replicas find the same one. While one is open (or merged and
// not yet read by Argo CD), the per-application fixes it covers are held back.
func (r *run) platforms() {
	r.platformHold = map[string]string{}
	if len(r.Hosts) == 0 {
		for _, pr := range r.res.Platform {
			r.out.Skipped = append(r.out.Skipped, pr.Branch+": no Git host credentials configured")
		}
		return
	}
	for _, repo := range r.Config.PlatformRepos {
		if repo.File == "" || r.ctx.Err() != nil || r.limited {
			continue
		}
		for _, inst := range r.platformInstances(repo.Instance) {
			ctx, cancel := r.perPR()
			err := (&platformRun{run: r, ctx: ctx, instance: inst, url: repo.URL}).publish()
			cancel()
			if err != nil {
				r.fail(fmt.Errorf("platform repository %s: %w", repo.URL, err))
				r.rateLimited(err)
			}
		}
	}
}

// platformInstances are the instances a platform repository entry
// configures that this cycle scanned.
func (r *run) platformInstances(instance string) []string {
	var out []string
	for name := range r.res.URLs {
		if slices.Contains(r.res.FailedInstances, name) {
			continue
		}
		if p, ok := r.Config.Platform(name); ok && (instance == "" || p.Instance == instance) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// platformHeld says why a per-application fix is not published: a platform
// pull request fixes its finding for every application.
func (r *run) platformHeld(fixKey string) string {
	if ref, ok := r.platformHold[fixKey]; ok {
		return "held back: the platform pull request " + ref + " fixes this difference for every application it drifts"
	}
	return ""
}

// platformRun publishes one instance's platform pull requests to its repository.
type platformRun struct {
	*run
	ctx      context.Context
	instance string
	url      string
	host     GitHost
	repo     githost.Repo
	login    string
}

func (p *platformRun) publish() error {
	var err error
	if p.host, p.repo, err = p.hostFor(p.url); err != nil {
		return err
	}
	if p.login, err = p.host.Login(p.ctx); err != nil {
		return err
	}
	prefix := cycle.PlatformBranch(p.Config.Policy.BranchPrefix, p.instance, "x", "")
	prefix = prefix[:strings.LastIndex(prefix, "/")+1]
	open, err := p.host.OpenPRs(p.ctx, p.repo, prefix)
	if err != nil {
		return err
	}
	var errs []error
	for _, pr := range p.res.Platform {
		if pr.Instance == p.instance {
			errs = append(errs, p.propose(pr))
		}
	}
	for _, gpr := range open {
		m := lastMarker(platformMarkerRE, gpr.Body)
		if m == nil || !gpr.Own(p.repo, p.login) || slices.Contains(p.res.PlatformShared, m[1]) {
			continue
		}
		msg := "Closing: the difference this change fixes is gone from every application of instance " + p.instance + ". driftfix opens a new pull request if it comes back.\n\n" + closedMarker
		if err := p.host.ClosePR(p.ctx, p.repo, gpr.Number, gpr.Branch, msg); err != nil {
			errs = append(errs, err)
			continue
		}
		p.out.Closed = append(p.out.Closed, ref(p.repo, gpr.Number))
	}
	return errors.Join(errs...)
}

func (p *platformRun) skip(pr cycle.PlatformPR, why string) {
	p.out.Skipped = append(p.out.Skipped, pr.Branch+": "+why)
}

// propose opens or updates one platform pull request, unless policy or a
// person says not to.
func (p *platformRun) propose(pr cycle.PlatformPR) error {
	pol := pr.Policy
	ex, err := p.host.FindPR(p.ctx, p.repo, pr.Branch)
	if err != nil {
		return err
	}
	switch {
	case ex != nil && !ex.Own(p.repo, p.login):
		p.skip(pr, fmt.Sprintf("%s from this branch was opened by %s, not by driftfix's account %s; left alone", ref(p.repo, ex.Number), ex.Author, p.login))
		return nil
	case ex != nil && ex.Merged:
		p.hold(pr, ref(p.repo, ex.Number)+" (merged; waiting for Argo CD to read argocd-cm)", ex.URL)
		p.skip(pr, "merged in "+ref(p.repo, ex.Number)+"; waiting for Argo CD to read argocd-cm")
		return nil
	case ex != nil && ex.State == "closed":
		comments, err := p.host.Comments(p.ctx, p.repo, ex.Number)
		if err != nil {
			return err
		}
		last := len(comments) - 1
		if last < 0 || !strings.EqualFold(comments[last].Author, p.login) || !strings.Contains(comments[last].Body, closedMarker) {
			p.skip(pr, "a person closed "+ref(p.repo, ex.Number)+" unmerged; not proposed again, the per-application fixes go ahead")
			return nil
		}
		ex = nil // driftfix closed it when the difference went; it is back
	}
	switch {
	case ex == nil && (p.Config.DryRun || (pol.DryRun != nil && *pol.DryRun)):
		p.skip(pr, "dry run by policy")
		return nil
	case ex == nil && pol.Quiet(p.now):
		p.skip(pr, "quiet hours")
		return nil
	}
	base := pr.Base
	if base == "" || base == "HEAD" {
		if base, err = p.host.DefaultBranch(p.ctx, p.repo); err != nil {
			return err
		}
	}
	files := map[string]githost.Change{pr.Edit.File: {Synced: pr.Edit.Before, Content: pr.Edit.After}}
	msg := pr.Title + "\n\nPlanned and verified by driftfix for " + fmt.Sprint(len(pr.Apps)) + " applications of instance " + pr.Instance + ".\n\ndriftfix-platform: " + pr.Key
	if ex != nil {
		return p.update(pr, ex, base, msg, files)
	}
	_, created, err := p.host.Push(p.ctx, p.repo, base, pr.Branch, msg, files)
	if why := pushRefused(err, base, p.repo); why != "" {
		p.skip(pr, why)
		return nil
	}
	if err != nil {
		return err
	}
	gpr, err := p.host.OpenPR(p.ctx, p.repo, githost.NewPullRequest{Branch: pr.Branch, Base: base, Title: pr.Title, Body: pr.Body,
		Draft: pol.Draft != nil && *pol.Draft, Labels: pol.Labels, Reviewers: pol.Reviewers, Assignees: pol.Assignees})
	if errors.Is(err, githost.ErrRace) {
		p.skip(pr, "another driftfix opened this platform pull request first")
		return nil
	}
	if err != nil {
		if created {
			err = errors.Join(err, p.host.DeleteBranch(p.ctx, p.repo, pr.Branch))
		}
		return err
	}
	p.out.Opened = append(p.out.Opened, ref(p.repo, gpr.Number))
	p.hold(pr, ref(p.repo, gpr.Number), gpr.URL)
	return nil
}

// update brings an open platform pull request to the current change.
func (p *platformRun) update(pr cycle.PlatformPR, ex *githost.PullRequest, base, msg string, files map[string]githost.Change) error {
	p.hold(pr, ref(p.repo, ex.Number), ex.URL)
	unchanged := ex.Title == pr.Title
	if m := lastMarker(bodyFingerprint, strings.TrimSuffix(ex.Body, cycle.PlatformMarker(pr.Key))); m == nil || m[1] != pr.Fingerprint {
		unchanged = false
	}
	if unchanged {
		p.out.Unchanged = append(p.out.Unchanged, ref(p.repo, ex.Number))
		return nil
	}
	_, _, err := p.host.Push(p.ctx, p.repo, base, pr.Branch, msg, files)
	if errors.Is(err, githost.ErrNotOurs) || errors.Is(err, githost.ErrFileChanged) {
		p.skip(pr, fmt.Sprintf("%s not updated: %v", ref(p.repo, ex.Number), err))
		return nil
	}
	if err != nil {
		return err
	}
	if err := p.host.EditPR(p.ctx, p.repo, ex.Number, pr.Title, pr.Body); err != nil {
		return err
	}
	p.out.Updated = append(p.out.Updated, ref(p.repo, ex.Number))
	return nil
}

// hold holds back the per-application fixes a platform pull request covers
// and points the digest's line of its shared finding to it.
func (p *platformRun) hold(pr cycle.PlatformPR, what, url string) {
	for _, k := range pr.Held {
		p.platformHold[k] = what
	}
	for i, l := range p.res.Digest.Fleet {
		if l.Instance == pr.Instance && l.Source == pr.Source {
			p.res.Digest.Fleet[i].PR = url
		}
	}
}
