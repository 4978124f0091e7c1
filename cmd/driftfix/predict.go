package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/predict"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/templates"
)

const predictUsage = `driftfix predict --repo DIR --base REV [--head REV] [-o text|json|sarif] [--all] [--app PATH] [--cluster FILE]

Predicts, from Git alone, the fields of each Argo CD application that will stay
OutOfSync after the change from --base to --head (default: the work tree of
--repo) is synced, with the cause and the fix of each. Applications are the
Application manifests in the repository whose sources the change touches, or
--app: one Application manifest file, or one source directory.
Exit code: 0 nothing predicted, 1 drift predicted, 2 bad input.
`

func cmdPredict(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fset := flag.NewFlagSet("predict", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() {
		fmt.Fprint(stderr, predictUsage)
		fset.PrintDefaults()
	}
	repoDir := fset.String("repo", "", "the repository's checkout (a Git work tree)")
	baseRev := fset.String("base", "", "the revision the change starts from: a branch, tag or commit (short hashes and HEAD~1 too)")
	headRev := fset.String("head", "", "the revision of the change; default: the work tree of --repo")
	all := fset.Bool("all", false, "report every prediction at head, also those the base already has, for every application")
	app := fset.String("app", "", "only the Applications of this manifest file, or one made for this source directory (a path in the repository)")
	clusterFile := fset.String("cluster", "", "cluster context: a YAML or JSON list of objects (HPAs, MutatingWebhookConfigurations, Namespaces, CRDs, argocd-cm), as a snapshot's cluster:")
	output := registerOutput(fset, "text", "json", "sarif")
	if err := fset.Parse(args); err != nil {
		return exitUsage, err
	}
	if fset.NArg() > 0 {
		return exitUsage, fmt.Errorf("unexpected argument %q: predict takes flags only (--repo DIR --base REV)", fset.Arg(0))
	}
	format, err := output.value()
	if err != nil {
		return exitUsage, err
	}
	switch {
	case *repoDir == "":
		return exitUsage, errors.New("--repo DIR is required: the repository's checkout")
	case *baseRev == "":
		return exitUsage, errors.New("--base REV is required: the revision the change starts from (the pull request's base branch)")
	}
	dir, err := filepath.Abs(*repoDir)
	if err != nil {
		return exitUsage, fmt.Errorf("--repo %s: %w", *repoDir, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return exitUsage, fmt.Errorf("--repo %s: not a directory", *repoDir)
	}
	var cluster []drift.Object
	if *clusterFile != "" {
		data, err := readBounded(*clusterFile, predict.MaxClusterBytes)
		if err != nil {
			return exitUsage, fmt.Errorf("--cluster %s: %w", *clusterFile, err)
		}
		if cluster, err = predict.ParseCluster(data); err != nil {
			return exitUsage, fmt.Errorf("--cluster %s: %w", *clusterFile, err)
		}
	}
	base, err := readRevision(ctx, dir, *baseRev, "--base")
	if err != nil {
		return exitUsage, err
	}
	var head predict.Revision
	if *headRev != "" {
		if head, err = readRevision(ctx, dir, *headRev, "--head"); err != nil {
			return exitUsage, err
		}
	} else if tree, err := gitrepo.WorkTree(dir, gitrepo.Limits{}); err != nil {
		return exitUsage, err
	} else {
		head = predict.Revision{Name: "the work tree", Files: tree.Files}
	}
	res, err := predict.Run(base, head, predict.Options{All: *all, App: *app, Cluster: cluster, Render: render.Limits{}, Repositories: remoteURLs(dir)})
	if err != nil {
		return exitUsage, err
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "driftfix predict: %s\n", n)
	}
	var out []byte
	switch format {
	case "json":
		out, err = predictJSON(res)
	case "sarif":
		out, err = predictSARIF(res)
	default:
		out = predictText(res, *all)
	}
	if err != nil {
		return exitUsage, err
	}
	if _, err := stdout.Write(out); err != nil {
		return exitUsage, fmt.Errorf("write report: %w", err)
	}
	if len(res.Predictions) > 0 {
		return exitDrift, nil
	}
	return exitClean, nil
}

// readRevision reads the repository at a revision through bot/gitrepo, the
// project's Git access; the revision is first resolved in the checkout, so
// a short hash or HEAD~1 names a commit too.
func readRevision(ctx context.Context, dir, rev, flagName string) (predict.Revision, error) {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: false})
	if err != nil {
		return predict.Revision{}, fmt.Errorf("--repo %s: not a Git repository: %w", dir, err)
	}
	h, err := r.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return predict.Revision{}, fmt.Errorf("%s %s: no such revision in %s: %w", flagName, rev, dir, err)
	}
	files, err := gitrepo.Files(ctx, "file://"+filepath.ToSlash(dir), h.String(), gitrepo.Limits{})
	if err != nil {
		return predict.Revision{}, fmt.Errorf("%s %s: %w", flagName, rev, err)
	}
	return predict.Revision{Name: rev, Files: files}, nil
}

// readBounded reads a regular file of at most max bytes.
func readBounded(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("over %d bytes", max)
	}
	return data, nil
}

// predictText is a table like diagnose's: one line per prediction.
func predictText(res *predict.Result, all bool) []byte {
	var buf bytes.Buffer
	what := "the change introduces"
	if all {
		what = "predicted at head"
	}
	if len(res.Applications) == 0 {
		fmt.Fprintln(&buf, "No application's sources are touched by the change: nothing to predict.")
		return buf.Bytes()
	}
	if len(res.Predictions) == 0 {
		fmt.Fprintf(&buf, "%s: no field will differ after sync (%s).\n", plural(len(res.Applications), "Application "+res.Applications[0], fmt.Sprintf("%d applications", len(res.Applications))), what)
		return buf.Bytes()
	}
	fmt.Fprintf(&buf, "%d %s will differ after sync (%s).\n\n", len(res.Predictions), plural(len(res.Predictions), "field", "fields"), what)
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "APPLICATION\tRESOURCE\tPATH\tGIT\tCAUSE\tFILE\tEVIDENCE\tFIX")
	for _, p := range res.Predictions {
		path := p.Path.String()
		if path == "" {
			path = "(object)"
		}
		file := p.File
		if p.Line > 0 {
			file = fmt.Sprintf("%s:%d", p.File, p.Line)
		}
		if file == "" {
			file = "-"
		}
		fix := string(p.Fix)
		if p.FixFile != "" {
			fix += " " + p.FixFile
		}
		git := "-"
		if p.Git != nil {
			git = drift.Brief(p.Git, 28)
			if p.Resource.Group == "" && p.Resource.Kind == "Secret" {
				git = "(Secret value not shown)"
			}
		}
		cells := []string{p.Application, p.Resource.String(), path, git, string(p.Cause), file, oneLine(first(p.Evidence), 90), fix}
		for i, c := range cells {
			cells[i] = templates.Terminal(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	return buf.Bytes()
}

// jsonPrediction is one prediction as predict -o json writes it.
type jsonPrediction struct {
	Application string    `json:"application"`
	File        string    `json:"file"`
	Line        int       `json:"line"`
	Resource    drift.Ref `json:"resource"`
	Path        string    `json:"path"`
	Cause       string    `json:"cause"`
	// Fix is the fix kind; FixFile the file it edits, FixReason why there
	// is none (fix none).
	Fix       string   `json:"fix"`
	FixFile   string   `json:"fixFile,omitempty"`
	FixReason string   `json:"fixReason,omitempty"`
	Evidence  []string `json:"evidence,omitempty"`
}

func predictJSON(res *predict.Result) ([]byte, error) {
	doc := struct {
		Applications []string         `json:"applications"`
		Predictions  []jsonPrediction `json:"predictions"`
		Notes        []string         `json:"notes,omitempty"`
	}{Applications: res.Applications, Predictions: []jsonPrediction{}, Notes: res.Notes}
	if doc.Applications == nil {
		doc.Applications = []string{}
	}
	for _, p := range res.Predictions {
		doc.Predictions = append(doc.Predictions, jsonPrediction{Application: p.Application, File: p.File, Line: p.Line,
			Resource: p.Resource, Path: p.Path.String(), Cause: string(p.Cause),
			Fix: string(p.Fix), FixFile: p.FixFile, FixReason: p.Reason, Evidence: p.Evidence})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode predictions: %w", err)
	}
	return append(b, '\n'), nil
}

func predictSARIF(res *predict.Result) ([]byte, error) {
	return predict.SARIF(res.Predictions, version)
}

// remoteURLs are the URLs of the checkout's remotes: an Application whose
// source names another repository is not rendered from this one.
func remoteURLs(dir string) []string {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return nil
	}
	rs, err := r.Remotes()
	if err != nil {
		return nil
	}
	var out []string
	for _, rm := range rs {
		out = append(out, rm.Config().URLs...)
	}
	return out
}
