package bot

import (
	"context"
	"fmt"
	"path"
	"sort"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// Instance is one Argo CD instance a cycle scans, with its clients.
type Instance struct {
	Name      string
	URL       string // Argo CD UI base URL, for links
	Client    *argocd.Client
	Shard     string // application name pattern, empty for all
	Cluster   func(*drift.Snapshot) []drift.Object
	RepoFiles func(ctx context.Context, s *drift.Snapshot) (map[string]string, error)
}

// ProposedPR is a pull request a cycle would open or update.
type ProposedPR struct {
	Instance, App, Namespace string
	Branch, Title, Body      string
	Plan                     remediations.Plan
}

// CycleResult is what one cycle found and would do.
type CycleResult struct {
	Scanned int
	Stuck   []ScanResult
	PRs     []ProposedPR
	Skipped []string // plans not proposed, and why
	Digest  templates.DigestView
	Errors  []error // one per application or instance that failed; the cycle goes on
}

// Cycle scans every instance, plans fixes for the stuck applications under
// the policy, and returns the pull requests and the digest it would publish.
// It publishes nothing itself.
func Cycle(ctx context.Context, cfg *config.Config, instances []Instance, now time.Time) CycleResult {
	var res CycleResult
	for _, in := range instances {
		stuck, scanned, err := Scan(ctx, in.Client, now, ScanOptions{StuckAfter: cfg.Policy.StuckAfter, ClusterContext: in.Cluster})
		res.Scanned += scanned
		if err != nil {
			res.Errors = append(res.Errors, fmt.Errorf("instance %s: %w", in.Name, err))
			continue
		}
		res.Digest.Instance, res.Digest.ArgoCDURL = in.Name, in.URL
		for _, r := range stuck {
			if in.Shard != "" {
				if ok, _ := path.Match(in.Shard, r.App.Name); !ok {
					continue
				}
			}
			res.Stuck = append(res.Stuck, r)
			if r.Err != nil {
				res.Errors = append(res.Errors, fmt.Errorf("application %s/%s: %w", r.App.Namespace, r.App.Name, r.Err))
				continue
			}
			res.planApp(ctx, cfg, in, r, now)
		}
	}
	sort.SliceStable(res.PRs, func(i, j int) bool { return res.PRs[i].Branch < res.PRs[j].Branch })
	return res
}

func (res *CycleResult) planApp(ctx context.Context, cfg *config.Config, in Instance, r ScanResult, now time.Time) {
	pol := cfg.For(r.App.Project, r.App.Name, r.App.Namespace)
	var causes []drift.Cause
	seen := map[drift.Cause]bool{}
	for _, f := range r.Report.Findings {
		if !seen[f.Cause] {
			seen[f.Cause] = true
			causes = append(causes, f.Cause)
		}
		if f.Remediation.Kind == drift.FixNone {
			res.Digest.ForPeople = append(res.Digest.ForPeople, templates.PersonLine{App: r.App.Name, Namespace: r.App.Namespace,
				Resource: f.Resource, Path: f.Path.String(), Cause: f.Cause, Why: f.Remediation.Reason})
		}
	}
	res.Digest.NewStuck = append(res.Digest.NewStuck, templates.AppLine{App: r.App.Name, Namespace: r.App.Namespace, Causes: causes, Note: r.Why})
	if in.RepoFiles == nil {
		return
	}
	s := r.Snapshot
	var err error
	if s.Repo.Files, err = in.RepoFiles(ctx, s); err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("application %s/%s: %w", r.App.Namespace, r.App.Name, err))
		return
	}
	_, plans, err := Fix(s, remediations.RepoFromSnapshot(s), pol.Sensitivity(), now)
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("application %s/%s: %w", r.App.Namespace, r.App.Name, err))
		return
	}
	for _, p := range plans {
		switch {
		case p.Dropped != "":
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s/%s %s %s: %s", r.App.Namespace, r.App.Name, p.Kind, p.Resource, p.Dropped))
			continue
		case !allowed(pol, p.Rationale.Cause, p.Kind):
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s/%s %s %s: the policy does not allow %s for %s", r.App.Namespace, r.App.Name, p.Kind, p.Resource, p.Kind, p.Rationale.Cause))
			continue
		case len(p.Edits) == 0:
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s/%s %s %s: to do by hand: %s", r.App.Namespace, r.App.Name, p.Kind, p.Resource, p.Instructions))
			continue
		}
		v := PRView(r.App.Name, r.App.Namespace, in.URL, p)
		body, err := templates.PRBody(v)
		if err != nil {
			res.Errors = append(res.Errors, err)
			continue
		}
		res.PRs = append(res.PRs, ProposedPR{Instance: in.Name, App: r.App.Name, Namespace: r.App.Namespace,
			Branch: Branch(pol.BranchPrefix, r.App.Name, p.Rationale.Cause, v.Fingerprint), Title: templates.PRTitle(v), Body: body, Plan: p})
	}
}

// allowed applies the policy's fix kinds for a cause; a cause the policy
// does not mention keeps driftfix's choice.
func allowed(p config.Policy, cause drift.Cause, kind drift.FixKind) bool {
	kinds, ok := p.Fixes[cause]
	if !ok {
		return true
	}
	for _, k := range kinds {
		if k == kind {
			return true
		}
	}
	return false
}
