package publish

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/plan"
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
			err := (&platformRun{fileRun: fileRun{run: r, ctx: ctx}, instance: inst, url: repo.URL}).publish()
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
	fileRun
	instance string
	url      string
}

func (p *platformRun) publish() error {
	if err := p.connect(p.url); err != nil {
		return err
	}
	prefix := plan.PlatformBranch(p.Config.Policy.BranchPrefix, p.instance, "x", "")
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
		errs = append(errs, p.close(gpr, "the difference this change fixes is gone from every application of instance "+p.instance+". driftfix opens a new pull request if it comes back."))
	}
	return errors.Join(errs...)
}

// propose opens or updates one platform pull request, unless policy or a
// person says not to.
func (p *platformRun) propose(pr plan.PlatformPR) error {
	c := fileChange{Branch: pr.Branch, Base: pr.Base, Title: pr.Title, Body: pr.Body, Policy: pr.Policy,
		File: pr.Edit.File, Before: pr.Edit.Before, After: pr.Edit.After, Marker: plan.PlatformMarker(pr.Key), Fingerprint: pr.Fingerprint,
		Message: pr.Title + "\n\nPlanned and verified by driftfix for " + fmt.Sprint(len(pr.Apps)) + " applications of instance " + pr.Instance + ".\n\ndriftfix-platform: " + pr.Key,
		What:    "platform pull request", Waits: "waiting for Argo CD to read argocd-cm", Dropped: "not proposed again, the per-application fixes go ahead"}
	return p.fileRun.propose(c, func(number int, url string, merged bool) {
		what := ref(p.repo, number)
		if merged {
			what += " (merged; waiting for Argo CD to read argocd-cm)"
		}
		p.hold(pr, what, url)
	})
}

// hold holds back the per-application fixes a platform pull request covers
// and points the digest's line of its shared finding to it.
func (p *platformRun) hold(pr plan.PlatformPR, what, url string) {
	for _, k := range pr.Held {
		p.platformHold[k] = what
	}
	for i, l := range p.res.Digest.Fleet {
		if l.Instance == pr.Instance && l.Source == pr.Source {
			p.res.Digest.Fleet[i].PR = url
		}
	}
}
