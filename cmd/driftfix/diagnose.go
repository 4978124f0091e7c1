package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"gopkg.in/yaml.v3"
)

func cmdDiagnose(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("diagnose", flag.ContinueOnError)
	fs.SetOutput(stderr)
	snapshot := fs.String("snapshot", "", "snapshot file to diagnose (YAML or JSON, driftfix/v1)")
	output := registerOutput(fs, "text", "json", "yaml")
	var af argoFlags
	af.register(fs)
	appNS := fs.String("app-namespace", "", "namespace of the Application, for a live diagnosis")
	live := len(args) > 0 && !strings.HasPrefix(args[0], "-")
	var err error
	if live {
		err = parseWithApp(fs, args)
	} else {
		err = fs.Parse(args)
	}
	if err != nil {
		return exitUsage, err
	}
	switch {
	case live && *snapshot == "" && isFile(fs.Arg(0)) && !flagGiven(fs, "argocd-server"):
		// A name without a flag is an application, as in `argocd app diff
		// NAME` and kubectl: files come with a flag. driftfix does not guess
		// which was meant.
		return exitUsage, fmt.Errorf("%q is a file: to diagnose a snapshot, use --snapshot %s (a name without --snapshot is an Argo CD application; with --argocd-server it is diagnosed live)", fs.Arg(0), fs.Arg(0))
	case !live && fs.NArg() > 0:
		return exitUsage, fmt.Errorf("unexpected argument %q: put the application name first (driftfix diagnose APP) or use --snapshot FILE", fs.Arg(0))
	case live && *snapshot != "":
		return exitUsage, fmt.Errorf("give an application or --snapshot FILE, not both")
	case !live && *snapshot == "":
		return exitUsage, fmt.Errorf("--snapshot FILE (or an application name) is required")
	}
	format, err := output.value()
	if err != nil {
		return exitUsage, err
	}
	var snap *drift.Snapshot
	if live {
		c, err := af.client()
		if err != nil {
			return exitUsage, err
		}
		if snap, err = liveSnapshot(ctx, c, *appNS, fs.Arg(0), true); err != nil {
			return exitUsage, err
		}
		clusterCtx, err := af.cluster(ctx, stderr)
		if err != nil {
			return exitUsage, err
		}
		if clusterCtx != nil {
			collect.AddClusterContext(snap, clusterCtx(snap))
		}
		if af.repoFiles {
			addRepoFiles(ctx, snap, stderr)
		}
	} else if snap, err = drift.LoadSnapshot(*snapshot); err != nil {
		return exitUsage, err
	}
	rep, err := pipeline.Diagnose(snap, drift.Sensitivity{})
	if err != nil {
		return exitUsage, err
	}
	var out []byte
	switch format {
	case "json":
		out, err = jsonReport(rep)
	case "yaml":
		out, err = yamlReport(rep)
	default:
		out = textReport(rep)
	}
	if err != nil {
		return exitUsage, err
	}
	if _, err := stdout.Write(out); err != nil {
		return exitUsage, fmt.Errorf("write report: %w", err)
	}
	if len(rep.Findings) > 0 {
		return exitDrift, nil
	}
	return exitClean, nil
}

// isFile says whether name is a regular file.
func isFile(name string) bool {
	st, err := os.Stat(name)
	return err == nil && st.Mode().IsRegular()
}

// flagGiven says whether the flag was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

func jsonReport(rep *drift.Report) ([]byte, error) {
	raw, err := json.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// yamlReport writes the JSON report as YAML, keeping its field names and order.
func yamlReport(rep *drift.Report) ([]byte, error) {
	raw, err := json.Marshal(rep)
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

// clearStyle drops the JSON flow style so the YAML reads as block YAML.
func clearStyle(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	if n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0 && n.Tag == "!!str" {
		n.Style &^= yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		clearStyle(c)
	}
}

// textReport is a table a person reads in a terminal: one line per finding.
func textReport(rep *drift.Report) []byte {
	var buf bytes.Buffer
	status := rep.SyncStatus
	if status == "" {
		status = "unknown sync status"
	}
	if len(rep.Findings) == 0 {
		fmt.Fprintf(&buf, "Application %s (%s): no drift found.\n", rep.Application, status)
		return buf.Bytes()
	}
	fmt.Fprintf(&buf, "Application %s (%s): %d drifting %s.\n\n", rep.Application, status, len(rep.Findings), plural(len(rep.Findings), "field", "fields"))
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tPATH\tGIT\tLIVE\tCAUSE\tOWNER\tEVIDENCE\tFIX")
	for _, f := range rep.Findings {
		fix := string(f.Remediation.Kind)
		if f.Remediation.File != "" {
			fix += " " + f.Remediation.File
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			f.Resource, f.Path, cell(f.Git, f.InGit), cell(f.ShownLive(), f.InLive), f.Cause,
			owner(f.Owners), oneLine(first(f.Evidence), 90), fix)
	}
	tw.Flush()
	return buf.Bytes()
}

func cell(v any, present bool) string {
	if !present {
		return "-"
	}
	return drift.Brief(v, 28)
}

func owner(os []drift.Owner) string {
	if len(os) == 0 {
		return "-"
	}
	o := os[len(os)-1]
	if o.Subresource != "" {
		return o.Manager + "/" + o.Subresource
	}
	return o.Manager
}

func first(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
