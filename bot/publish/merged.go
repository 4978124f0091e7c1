package publish

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// afterMerge closes the loop on a merged fix once Argo CD has synced it:
// the application is Synced again (fixed), or Argo CD compares the merged
// revision and it is still stuck. Each outcome is said once, on the merged
// pull request and in the digest. Nothing is concluded about an application
// this cycle did not diagnose, or that has not synced the merge yet.
func (r *run) afterMerge(k state.PR) {
	a, listed := r.apps[k.App]
	if !listed || a.Failed {
		return
	}
	id := cycle.ParseAppKey(k.App)
	app := templates.Code(id.Namespace + "/" + id.Name)
	var msg string
	switch {
	case !a.Stuck && a.App.SyncStatus == "Synced":
		v := r.digests.forApp(k.App)
		v.Fixed = append(v.Fixed, templates.AppLine{App: id.Name, Namespace: id.Namespace, Instance: id.Instance, Key: k.Fingerprint, Note: "after " + r.displayRef(k) + " was merged"})
		k.State = state.PRFixed
		r.out.Fixed = append(r.out.Fixed, r.displayRef(k))
		msg = fmt.Sprintf("Argo CD synced this change: application %s is Synced%s.", app, revision(a.App.Revision))
	case a.Stuck && k.MergeSHA != "" && r.syncedMerge(k, a.App.Revision):
		k.State = state.PRStillDrifts
		r.out.StillDrifts = append(r.out.StillDrifts, r.displayRef(k))
		msg = fmt.Sprintf("Argo CD synced this change%s, but application %s is still OutOfSync at:\n\n%s\ndriftfix keeps diagnosing it; what is left is in the digest.",
			revision(a.App.Revision), app, r.stillDiffering(k.App))
	default:
		return // not synced yet, or not long enough to tell
	}
	k.Updated = r.now
	if host, repo, err := r.hostOf(k.Repo); err == nil && !r.limited {
		said, err := r.saidAfterMerge(host, repo, k.Number)
		if err == nil && !said {
			err = host.Comment(r.ctx, repo, k.Number, msg+"\n\n"+afterMergeMarker)
		}
		if err != nil {
			r.fail(fmt.Errorf("comment on merged %s: %w", r.displayRef(k), err))
			r.rateLimited(err)
			return // said next cycle
		}
	}
	if err := r.Store.SavePR(r.ctx, k); err != nil {
		r.fail(err)
	}
}

// syncedMerge reports whether the revision Argo CD synced holds the merge
// commit: it or a later commit (main moved on before Argo CD synced). A
// host that cannot say leaves it for the next cycle.
func (r *run) syncedMerge(k state.PR, revision string) bool {
	if revision == "" || r.limited {
		return false
	}
	if revision == k.MergeSHA {
		return true
	}
	if !commitSHA.MatchString(revision) {
		return false // a chart version or a branch name: no commit to compare
	}
	host, repo, err := r.hostOf(k.Repo)
	if err != nil {
		return false
	}
	holds, err := host.Holds(r.ctx, repo, revision, k.MergeSHA)
	if err != nil {
		r.fail(fmt.Errorf("merged %s: %w", r.displayRef(k), err))
		r.rateLimited(err)
		return false
	}
	return holds
}

// commitSHA is a full Git commit id as Argo CD records a synced revision (SHA-1 or SHA-256).
var commitSHA = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// saidAfterMerge reports whether driftfix's own account already commented
// the result on the merged pull request: the state store forgets it with a
// lost database, which learns of the merged PR again from GitHub. A person
// who pastes the marker says nothing for driftfix.
func (r *run) saidAfterMerge(host SteerHost, repo githost.Repo, number int) (bool, error) {
	login, err := host.Login(r.ctx)
	if err != nil {
		return false, err
	}
	comments, err := host.Comments(r.ctx, repo, number)
	if err != nil {
		return false, err
	}
	for _, c := range comments {
		if strings.EqualFold(c.Author, login) && strings.Contains(c.Body, afterMergeMarker) {
			return true, nil
		}
	}
	return false, nil
}

// afterMergeMarker ends driftfix's comment on a merged pull request.
const afterMergeMarker = "<!-- driftfix:after-merge -->"

func revision(rev string) string {
	if rev == "" {
		return ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return " at revision " + templates.Code(rev)
}

// stillDiffering lists the application's findings this cycle, one per line.
func (r *run) stillDiffering(appKey string) string {
	var b strings.Builder
	for _, s := range r.res.Stuck {
		if cycle.AppKey(s.Instance, s.App.Namespace, s.App.Name) != appKey {
			continue
		}
		for _, f := range s.Findings {
			fmt.Fprintf(&b, "- %s %s (%s)\n", templates.Code(f.Resource.String()), templates.Code(f.Path), f.Cause)
		}
	}
	if b.Len() == 0 {
		return "- (no finding could be named)\n"
	}
	return b.String()
}
