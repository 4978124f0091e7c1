package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/ignores"
)

// snapshotFiles collects repeated --snapshot flags.
type snapshotFiles []string

func (s *snapshotFiles) String() string     { return strings.Join(*s, ",") }
func (s *snapshotFiles) Set(v string) error { *s = append(*s, v); return nil }

// cmdIgnores prints the inventory of every active ignore rule: from
// snapshots (offline), or from a live Argo CD.
func cmdIgnores(ctx context.Context, args []string, stdout, stderr io.Writer, now time.Time) (int, error) {
	fs := flag.NewFlagSet("ignores", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var snaps snapshotFiles
	fs.Var(&snaps, "snapshot", "snapshot file to read (YAML or JSON, driftfix/v1); repeat it, or list more files after it")
	output := registerOutput(fs, "text", "json", "yaml")
	repoDir := fs.String("repo", "", "local clone with history of the repository that declares the rules, to name the commit that wrote each one")
	policy := fs.String("config", "", "policy file whose sensitivePaths add to the sensitive paths")
	var af argoFlags
	af.register(fs)
	// Flags may follow the files listed after --snapshot.
	var rest []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return exitUsage, err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(snaps) > 0 {
		snaps = append(snaps, rest...)
	} else if len(rest) > 0 {
		return exitUsage, fmt.Errorf("unexpected argument %q: give --snapshot FILE... or --argocd-server URL", rest[0])
	}
	format, err := output.value()
	if err != nil {
		return exitUsage, err
	}
	opts := ignores.Options{Now: now}
	if *policy != "" {
		cfg, err := config.Load(*policy)
		if err != nil {
			return exitUsage, err
		}
		opts.Sensitivity = cfg.Policy.Sensitivity()
	}
	history := "commit unknown: no clone with history was given (--repo DIR)"
	var loaded []*drift.Snapshot
	if len(snaps) > 0 {
		for _, f := range snaps {
			s, err := drift.LoadSnapshot(f)
			if err != nil {
				return exitUsage, err
			}
			loaded = append(loaded, s)
		}
	} else {
		c, err := af.client()
		if err != nil {
			return exitUsage, fmt.Errorf("%w (or read snapshots with --snapshot FILE...)", err)
		}
		if loaded, err = liveIgnoreSnapshots(ctx, c, &af, stderr); err != nil {
			return exitUsage, err
		}
		history = "commit unknown: driftfix reads one commit of the repository (depth 1), not its history (--repo DIR names it)"
	}
	opts.Origin = func(string, string, int, string) ignores.Origin { return ignores.Origin{Unknown: history} }
	if *repoDir != "" {
		h, err := gitrepo.OpenHistory(*repoDir)
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
