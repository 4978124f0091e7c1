package publish

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
)

// listStore remembers each instance's application list and the
// applications missing from it, whose pull requests may close.
type listStore interface {
	// ListSize is the number of applications an instance listed last.
	ListSize(ctx context.Context, instance string) (int, bool, error)
	// SetListSize remembers how many applications an instance listed.
	SetListSize(ctx context.Context, instance string, n int, now time.Time) error
	// Unlisted counts one more cycle an application was missing from its list and returns the count.
	Unlisted(ctx context.Context, app string, now time.Time) (int, error)
	// UnlistedApps are the applications missing from their lists, with counts.
	UnlistedApps(ctx context.Context) (map[string]int, error)
	// Relisted forgets that an application was missing.
	Relisted(ctx context.Context, app string) error
}

// adopt finds driftfix's open pull requests that the state store does not
// know (a lost or fresh database), by the key marker in their body, in the
// repositories of every listed application and those the store remembers.
// Answers that did not change since the last cycle are 304s.
func (r *run) adopt(known []state.PR) ([]state.PR, error) {
	have := map[string]bool{}
	repos := map[string]bool{}
	for _, k := range known {
		repos[k.Repo] = true
		have[fmt.Sprintf("%s#%d", k.Repo, k.Number)] = true
	}
	for _, url := range r.repoURLs() {
		if _, repo, err := r.hostFor(url); err == nil {
			repos[repo.Key()] = true
		}
	}
	var out []state.PR
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(repos)) {
		host, repo, err := r.hostOf(key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		found, err := r.adoptIn(host, repo, have)
		out = append(out, found...)
		if errors.Is(err, githost.ErrRateLimited) {
			return out, err
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// repoURLs are the repositories of this cycle's applications and proposals.
func (r *run) repoURLs() []string {
	var urls []string
	for _, pr := range r.res.PRs {
		urls = append(urls, pr.RepoURL)
	}
	for _, a := range r.res.Apps {
		urls = append(urls, a.App.RepoURL)
	}
	return urls
}

// branchPrefixes are the branch prefixes of every policy.
func (r *run) branchPrefixes() []string {
	prefixes := map[string]bool{r.Config.Policy.BranchPrefix + "/": true}
	for _, o := range r.Config.Overrides {
		if o.Policy.BranchPrefix != "" {
			prefixes[o.Policy.BranchPrefix+"/"] = true
		}
	}
	return slices.Sorted(maps.Keys(prefixes))
}

// adoptIn adopts driftfix's own open PRs of one repository.
func (r *run) adoptIn(host PullHost, repo githost.Repo, have map[string]bool) ([]state.PR, error) {
	login, err := host.Login(r.ctx)
	if err != nil {
		return nil, err
	}
	var out []state.PR
	var errs []error
	for _, prefix := range r.branchPrefixes() {
		prs, err := host.OpenPRs(r.ctx, repo, prefix)
		if errors.Is(err, githost.ErrRateLimited) {
			return out, err
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, gpr := range prs {
			if !gpr.Own(repo, login) {
				continue // a fork's, or a person's: never adopted, closed or its branch deleted
			}
			key, app, ok := bodyKey(gpr.Body)
			id := fmt.Sprintf("%s#%d", repo.Key(), gpr.Number)
			if !ok || have[id] || !r.res.Owns(app) {
				continue
			}
			rec := state.PR{Fingerprint: key, App: app, Repo: repo.Key(), Number: gpr.Number, Branch: gpr.Branch, State: state.PROpen, Updated: r.now}
			if err := r.Store.SavePR(r.ctx, rec); err != nil {
				return out, err
			}
			have[id] = true
			out = append(out, rec)
		}
	}
	return out, errors.Join(errs...)
}

// unlisted decides which applications missing from their instance's list
// may have their pull requests closed this cycle: those missing for
// CloseAfterCycles cycles in a row, and none of an instance whose list shrank
// by more than MaxListShrink against its last full list (an RBAC or sharding
// change says nothing about the applications). What waits is said in Skipped.
func (r *run) unlisted(known []state.PR) map[string]bool {
	policy := r.Config.Unlisted
	if policy.CloseAfterCycles == 0 {
		policy = config.DefaultUnlisted()
	}
	listed := map[string]bool{}
	for key := range r.apps {
		listed[key] = true
	}
	shrunk := r.shrunkLists(policy)
	before, err := r.Store.UnlistedApps(r.ctx)
	if err != nil {
		r.fail(err)
		return nil
	}
	for app := range before {
		if listed[app] {
			if err := r.Store.Relisted(r.ctx, app); err != nil {
				r.fail(err)
			}
		}
	}
	may := map[string]bool{}
	counted := map[string]int{}
	for _, k := range known {
		if k.State != state.PROpen || listed[k.App] || !r.res.Owns(k.App) || shrunk[cycle.ParseAppKey(k.App).Instance] {
			continue
		}
		if _, ok := counted[k.App]; !ok {
			n, err := r.Store.Unlisted(r.ctx, k.App, r.now)
			if err != nil {
				r.fail(err)
				continue
			}
			counted[k.App] = n
		}
		if n := counted[k.App]; n >= policy.CloseAfterCycles {
			may[k.App] = true
		} else {
			r.out.Skipped = append(r.out.Skipped, fmt.Sprintf("%s: its application %s has not been listed by Argo CD for %d cycle(s); closed after %d in a row", r.displayRef(k), k.App, n, policy.CloseAfterCycles))
		}
	}
	return may
}

// shrunkLists names the instances whose application list shrank too much to
// close anything as unlisted, and records the size of the others' lists.
func (r *run) shrunkLists(policy config.Unlisted) map[string]bool {
	perInstance := map[string]int{}
	for _, a := range r.res.Apps {
		perInstance[a.Instance]++
	}
	shrunk := map[string]bool{}
	for _, inst := range slices.Sorted(maps.Keys(r.res.URLs)) {
		if slices.Contains(r.res.FailedInstances, inst) {
			continue
		}
		n := perInstance[inst]
		last, ok, err := r.Store.ListSize(r.ctx, inst)
		if err != nil {
			r.fail(err)
			shrunk[inst] = true // unknown: close nothing
			continue
		}
		if ok && float64(n) < float64(last)*(1-policy.MaxListShrink) {
			shrunk[inst] = true
			r.log.Warn("Argo CD's application list shrank; no pull request is closed as no longer listed this cycle", "instance", inst, "listed", n, "last_full_list", last)
			r.out.Skipped = append(r.out.Skipped, fmt.Sprintf("instance %s: Argo CD lists %d applications, down from %d in the last full list (more than %g less); no pull request is closed as no longer listed this cycle", inst, n, last, policy.MaxListShrink))
			continue
		}
		if err := r.Store.SetListSize(r.ctx, inst, n, r.now); err != nil {
			r.fail(err)
		}
	}
	return shrunk
}

// displayRef names a remembered pull request as people do: owner/name#number.
func (r *run) displayRef(k state.PR) string {
	if repo, err := githost.ParseKey(k.Repo); err == nil {
		return ref(repo, k.Number)
	}
	return fmt.Sprintf("%s#%d", k.Repo, k.Number)
}
