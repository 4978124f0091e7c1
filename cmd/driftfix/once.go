package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/helmrepo"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/predict"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/remediations/render"
)

// cmdOnce runs one cycle from a policy file (for a CronJob): it opens,
// updates and closes pull requests and posts the digest. With --dry-run it
// prints the pull requests and the digest it would publish and writes nothing.
//
// It exits 0 when the cycle did its work, stuck applications or not (they are
// what the cycle is for, and a CronJob that failed for them would alert every
// run); 1 when an Argo CD instance could not be scanned or publishing
// failed; 2 on bad usage or a policy it refuses.
func (c *cli) onceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "once --config FILE [--dry-run]",
		Short:   "Run one cycle of the bot and exit: 0 when it ran, 1 when it could not scan or publish",
		Example: `  driftfix once --config driftfix.yaml --dry-run`,
		Args:    noArgs,
	}
	bf := registerBotFlags(cmd, "warn")
	dryRun := cmd.Flags().Bool("dry-run", false, "print the pull requests and the digest it would send, and write nothing")
	cmd.RunE = c.runE(func(*cobra.Command, []string) (int, error) {
		return once(c.ctx, bf, *dryRun, c.stdout, c.stderr, c.now())
	})
	return cmd
}

func once(ctx context.Context, bf botFlags, dryRun bool, stdout, stderr io.Writer, now time.Time) (int, error) {
	cfg, log, err := bf.load(stderr)
	if err != nil {
		return exitUsage, err
	}
	fail := func(code int, err error) (int, error) {
		log.Error("driftfix once failed", "error", err.Error())
		return code, loggedError{err}
	}
	dry := dryRun || cfg.DryRun
	r, closeAll, err := buildRunner(ctx, cfg, !dry, log)
	if err != nil {
		return fail(exitUsage, err)
	}
	defer closeAll()
	out, err := r.Once(ctx, now)
	if r.Publisher != nil {
		r.Publisher.WaitForks() // forks' pull requests are predicted apart from the cycle
	}
	if err != nil {
		return fail(exitFailed, fmt.Errorf("the cycle was stopped: %w", err))
	}
	res := out.Result
	fmt.Fprintf(stdout, "%d applications scanned, %d stuck, %d pull requests proposed.\n", res.Scanned, len(res.Stuck), len(res.PRs))
	if dry {
		for _, pr := range res.PRs {
			fmt.Fprintf(stdout, "\n== pull request on branch %s\n%s\n\n%s", pr.Branch, pr.Title, pr.Body)
		}
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stdout, "\nnot proposed: %s\n", s)
	}
	// The cycle's and the publisher's errors are in the log already.
	if dry {
		if msgs := slack.Digest(res.Digest); len(msgs) > 0 {
			raw, err := json.MarshalIndent(msgs, "", "  ")
			if err != nil {
				return fail(exitFailed, err)
			}
			fmt.Fprintf(stdout, "\n== Slack digest (%d %s)\n%s\n", len(msgs), plural(len(msgs), "message", "messages"), raw)
		}
	} else {
		p := out.Published
		for _, l := range []struct {
			what string
			refs []string
		}{{"opened", p.Opened}, {"updated", p.Updated}, {"unchanged", p.Unchanged}, {"closed (drift gone)", p.Closed},
			{"merged", p.Merged}, {"turned down by a person", p.Rejected}, {"snoozed", p.Snoozed}, {"fixed (Synced again)", p.Fixed},
			{"synced but still OutOfSync", p.StillDrifts}, {"checked", p.Checked}, {"not published", p.Skipped}} {
			for _, ref := range l.refs {
				fmt.Fprintf(stdout, "%s: %s\n", l.what, ref)
			}
		}
		for ch, msgs := range p.Digests {
			fmt.Fprintf(stdout, "digest: %d %s posted to %s\n", len(msgs), plural(len(msgs), "message", "messages"), ch)
		}
	}
	if err := out.Incomplete(); err != nil {
		return fail(exitFailed, fmt.Errorf("the cycle did not finish its work: %w", err))
	}
	return exitClean, nil
}

// instance builds one Argo CD instance's clients; its repositories are read
// through git (its limits and credentials). The cluster context is read
// once per cycle.
func instance(ctx context.Context, a config.ArgoCD, git gitrepo.Reader, stderr io.Writer) (plan.Instance, error) {
	ns := a.Namespace
	if ns == "" {
		ns = "argocd"
	}
	af := argoFlags{server: a.Server, tokenFile: a.TokenFile, tokenEnv: a.TokenEnv, caFile: a.CAFile, insecure: a.Insecure, plaintext: a.InsecurePlaintext,
		timeout: 30 * time.Second, kubeconfig: a.Kubeconfig, argoNamespace: ns, tokenFrom: "the argocd entry's tokenFile",
		dryRunEvidence: a.DryRunEvidence, dryRunBudget: a.DryRunBudget}
	c, err := af.client()
	if err != nil {
		return plan.Instance{}, fmt.Errorf("argocd %s: %w", a.Name, err)
	}
	in := plan.Instance{Name: a.Name, URL: a.Server, Client: c, Shard: a.Shard,
		RepoFiles: func(ctx context.Context, s *drift.Snapshot) (map[string]string, error) {
			srcs := drift.Sources(s.Application)
			if len(srcs) == 0 {
				return nil, nil
			}
			return git.Files(ctx, srcs[0].RepoURL, drift.Str(s.Application, "status", "sync", "revision"))
		},
		BranchFiles: func(ctx context.Context, repoURL, branch string) (map[string]string, string, error) {
			return git.Head(ctx, repoURL, branch)
		},
		GitCommit: git.Resolve,
		ReadCluster: func(ctx context.Context) (func(*drift.Snapshot) []drift.Object, error) {
			return af.cluster(ctx, stderr)
		}}
	return in, nil
}

// botCharts is the bot's chart fetcher for predicting pull requests (only
// from the repositories a base branch names; see bot.Runner.Charts),
// with predict's default bounds and cache; nil, said on stderr, when it
// cannot be made.
func botCharts(ctx context.Context, stderr io.Writer) predict.FetchCharts {
	f, err := helmrepo.New(helmrepo.Options{CacheDir: defaultChartCache()})
	if err != nil {
		fmt.Fprintf(stderr, "driftfix: charts of pull requests are not fetched: %v\n", err)
		return nil
	}
	return func(ref render.ChartRef) (string, []byte, error) { return f.Fetch(ctx, ref) }
}
