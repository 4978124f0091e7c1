package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/ignores"
)

// ignoresCmd prints the inventory of every active ignore rule: from
// snapshots (offline), or from a live Argo CD.
func (c *cli) ignoresCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ignores [--snapshot FILE...]",
		Short: "List every active ignore rule, what it hides, and whether it is broader than it needs",
		Example: `  driftfix ignores
  driftfix ignores --snapshot shop.json platform.json --repo ~/src/deploy`,
	}
	fs := cmd.Flags()
	snaps := fs.StringArrayP("snapshot", "f", nil, "snapshot file to read (YAML or JSON, driftfix/v1); repeat it, or list more files after it")
	output := c.addOutput(cmd, "text", "json", "yaml")
	repoDir := fs.String("repo", "", "local clone with history of the repository that declares the rules, to name the commit that wrote each one")
	policy := fs.String("config", "", "policy file whose sensitivePaths add to the sensitive paths")
	_ = cmd.MarkFlagFilename("snapshot", "json", "yaml", "yml")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	_ = cmd.MarkFlagDirname("repo")
	var af argoFlags
	af.register(cmd)
	cmd.RunE = c.runE(func(_ *cobra.Command, rest []string) (int, error) {
		return c.ignores(append(*snaps, rest...), len(*snaps) > 0, rest, output, *repoDir, *policy, &af, c.now())
	})
	return cmd
}

func (c *cli) ignores(snaps []string, fromFiles bool, rest []string, output *outputs, repoDir, policy string, af *argoFlags, now time.Time) (int, error) {
	ctx, stdout, stderr := c.ctx, c.stdout, c.stderr
	// Files may follow --snapshot FILE.
	if !fromFiles && len(rest) > 0 {
		return exitUsage, fmt.Errorf("unexpected argument %q: give --snapshot FILE... or --argocd-server URL", rest[0])
	}
	format, err := output.value()
	if err != nil {
		return exitUsage, err
	}
	opts := ignores.Options{Now: now}
	if policy != "" {
		cfg, err := config.Load(policy)
		if err != nil {
			return exitUsage, err
		}
		opts.Sensitivity = cfg.Policy.Sensitivity()
	}
	history := "commit unknown: no clone with history was given (--repo DIR)"
	var loaded []*drift.Snapshot
	if len(snaps) > 0 {
		for _, f := range snaps {
			s, err := loadSnapshot(f)
			if err != nil {
				return exitUsage, err
			}
			loaded = append(loaded, s)
		}
	} else {
		client, err := af.client()
		if err != nil {
			return exitUsage, fmt.Errorf("%w (or read snapshots with --snapshot FILE...)", err)
		}
		if loaded, err = liveIgnoreSnapshots(ctx, client, af, stderr); err != nil {
			return exitUsage, af.explain(err)
		}
		history = "commit unknown: driftfix reads one commit of the repository (depth 1), not its history (--repo DIR names it)"
	}
	opts.Origin = func(string, string, int, string) ignores.Origin { return ignores.Origin{Unknown: history} }
	if repoDir != "" {
		h, err := gitrepo.OpenHistory(repoDir)
		if err != nil {
			return exitUsage, err
		}
		opts.Origin = func(_, file string, line int, content string) ignores.Origin {
			c, when, err := h.Wrote(file, line, content)
			if err != nil {
				return ignores.Origin{Unknown: err.Error()}
			}
			return ignores.Origin{Commit: c, When: when}
		}
	}
	rep, err := ignores.Inventory(loaded, opts)
	if err != nil {
		return exitUsage, err
	}
	var out []byte
	switch format {
	case "json":
		out, err = indentJSON(rep)
	case "yaml":
		out, err = jsonAsYAML(rep)
	default:
		out = ignores.Text(rep)
	}
	if err != nil {
		return exitUsage, err
	}
	if _, err := stdout.Write(out); err != nil {
		return exitUsage, fmt.Errorf("write report: %w", err)
	}
	return exitClean, nil
}

// liveIgnoreSnapshots reads what the inventory needs from a live Argo CD:
// one settings and one list call, every Application, and the resources of
// those a rule can apply to (all of them when argocd-cm has rules), with the
// cluster context and, with --repo-files, the repositories' files (each
// repository and revision fetched once). One application that cannot be
// read is reported on stderr and left out.
func liveIgnoreSnapshots(ctx context.Context, c *argocd.Client, af *argoFlags, stderr io.Writer) ([]*drift.Snapshot, error) {
	settings, err := c.Settings(ctx)
	if err != nil {
		return nil, err
	}
	apps, err := c.ListApplications(ctx)
	if err != nil {
		return nil, err
	}
	clusterCtx, err := af.cluster(ctx, stderr)
	if err != nil {
		return nil, err
	}
	repos := gitrepo.NewCache(64, 256<<20)
	var out []*drift.Snapshot
	for _, a := range apps {
		app, err := c.GetApplication(ctx, a.Namespace, a.Name)
		if err != nil {
			fmt.Fprintf(stderr, "driftfix: application %s/%s left out: %v\n", a.Namespace, a.Name, err)
			continue
		}
		s := &drift.Snapshot{Application: app, Cluster: []drift.Object{settings.ConfigMap()}}
		if clusterCtx != nil {
			collect.AddClusterContext(s, clusterCtx(s))
		}
		if len(drift.List(app, "spec", "ignoreDifferences")) > 0 || ignores.HasSystemRules(s.Cluster) {
			full, err := c.Snapshot(ctx, a.Namespace, a.Name, argocd.SnapshotOptions{Settings: &settings, Application: app})
			if err != nil {
				fmt.Fprintf(stderr, "driftfix: application %s/%s left out: %v\n", a.Namespace, a.Name, err)
				continue
			}
			// The cluster context is read for the resources now known.
			full.Cluster = []drift.Object{settings.ConfigMap()}
			if clusterCtx != nil {
				collect.AddClusterContext(full, clusterCtx(full))
			}
			s = full
		}
		if af.repoFiles {
			if srcs := drift.Sources(app); len(srcs) > 0 && srcs[0].RepoURL != "" {
				rev := drift.Str(app, "status", "sync", "revision")
				if rev == "" {
					rev = srcs[0].TargetRevision
				}
				files, err := repos.Files(ctx, srcs[0].RepoURL, rev, gitrepo.Limits{})
				if err != nil {
					fmt.Fprintf(stderr, "driftfix: repository files of %s/%s not collected: %v\n", a.Namespace, a.Name, err)
				} else {
					s.Repo.Files = files
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func indentJSON(v any) ([]byte, error) {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return append(raw, '\n'), nil
}

// jsonAsYAML writes a value's JSON as block YAML, keeping its field names and order.
func jsonAsYAML(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	var node yaml.Node
	if err := yaml.Unmarshal(raw, &node); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	clearStyle(&node)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&node); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return buf.Bytes(), nil
}
