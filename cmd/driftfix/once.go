package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/driftfix/driftfix/bot"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/templates"
)

// cmdOnce runs one cycle from a policy file. For now it only dry-runs:
// it prints the pull requests and the digest it would publish.
func cmdOnce(ctx context.Context, args []string, stdout, stderr io.Writer, now time.Time) (int, error) {
	fs := flag.NewFlagSet("once", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "policy file (see deploy/driftfix.example.yaml)")
	dryRun := fs.Bool("dry-run", false, "print the pull requests and the digest it would send, and write nothing")
	if err := fs.Parse(args); err != nil {
		return exitUsage, err
	}
	if *file == "" {
		return exitUsage, fmt.Errorf("--config FILE is required")
	}
	cfg, err := config.Load(*file)
	if err != nil {
		return exitUsage, err
	}
	if !*dryRun && !cfg.DryRun {
		return exitUsage, fmt.Errorf("publishing pull requests and digests is not built yet; run with --dry-run (or dryRun: true in the config)")
	}
	var instances []bot.Instance
	for _, a := range cfg.ArgoCD {
		in, err := instance(ctx, a, stderr)
		if err != nil {
			return exitUsage, err
		}
		instances = append(instances, in)
	}
	res := bot.Cycle(ctx, cfg, instances, now, bot.CycleOptions{})
	fmt.Fprintf(stdout, "%d applications scanned, %d stuck, %d pull requests to open or update.\n", res.Scanned, len(res.Stuck), len(res.PRs))
	for _, pr := range res.PRs {
		fmt.Fprintf(stdout, "\n== pull request on branch %s\n%s\n\n%s", pr.Branch, pr.Title, pr.Body)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stdout, "\nnot proposed: %s\n", s)
	}
	for _, e := range res.Errors {
		fmt.Fprintf(stderr, "driftfix once: %v\n", e)
	}
	if msgs := templates.Digest(res.Digest); len(msgs) > 0 {
		raw, err := json.MarshalIndent(msgs, "", "  ")
		if err != nil {
			return exitUsage, err
		}
		fmt.Fprintf(stdout, "\n== Slack digest (%d %s)\n%s\n", len(msgs), plural(len(msgs), "message", "messages"), raw)
	}
	if len(res.Stuck) > 0 {
		return exitDrift, nil
	}
	return exitClean, nil
}

func instance(ctx context.Context, a config.ArgoCD, stderr io.Writer) (bot.Instance, error) {
	af := argoFlags{server: a.Server, tokenFile: a.TokenFile, tokenEnv: a.TokenEnv, caFile: a.CAFile, insecure: a.Insecure,
		timeout: 30 * time.Second, kubeconfig: a.Kubeconfig, argoNamespace: "argocd"}
	c, err := af.client()
	if err != nil {
		return bot.Instance{}, fmt.Errorf("argocd %s: %w", a.Name, err)
	}
	in := bot.Instance{Name: a.Name, URL: a.Server, Client: c, Shard: a.Shard,
		RepoFiles: func(ctx context.Context, s *drift.Snapshot) (map[string]string, error) {
			srcs := drift.Sources(s.Application)
			if len(srcs) == 0 {
				return nil, nil
			}
			return gitrepo.Files(ctx, srcs[0].RepoURL, drift.Str(s.Application, "status", "sync", "revision"), gitrepo.Limits{})
		}}
	cluster, err := af.cluster(ctx, stderr)
	if err != nil {
		return bot.Instance{}, fmt.Errorf("argocd %s: %w", a.Name, err)
	}
	in.Cluster = cluster
	return in, nil
}
