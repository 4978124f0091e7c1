package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/spf13/cobra"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/helmrepo"
	"github.com/driftfix/driftfix/bot/predict"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/templates"
)

// predictFlags are predict's flags.
type predictFlags struct {
	repo, base, head, app, cluster, remote string
	all, strict, noFetch                   bool
	fetchDepth                             int
	maxFileBytes, maxRepoBytes             int64
	timeout                                time.Duration
	output                                 *outputs
	// argo reaches argocd-server, when a server is named, for what the
	// local renderer cannot render (see argocdAtHand).
	argo argoFlags
	// charts: fetching charts of Helm chart repositories and OCI registries.
	charts chartFlags
}

// chartFlags are the flags of predict's chart fetching.
type chartFlags struct {
	offline, fromBase                       bool
	cache, repositoryConfig, registryConfig string
	maxBytes, maxIndexBytes, maxTotalBytes  int64
	timeout                                 time.Duration
}

func (cf *chartFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&cf.offline, "offline", false, "fetch no chart: an application whose chart (or a chart's dependency) is in a Helm chart repository or an OCI registry is listed as not predicted")
	fs.BoolVar(&cf.fromBase, "charts-from-base", false, "fetch only from the chart repositories and registries --base names (for a workflow that predicts an untrusted head with the base's privileges, e.g. pull_request_target)")
	fs.StringVar(&cf.cache, "chart-cache", defaultChartCache(), "the folder fetched chart archives are kept in, by repository, chart and version (\"\": none)")
	fs.StringVar(&cf.repositoryConfig, "helm-repository-config", os.Getenv("HELM_REPOSITORY_CONFIG"), "Helm's repositories.yaml, for the credentials and TLS files of chart repositories (default $HELM_REPOSITORY_CONFIG; unset: no credentials)")
	fs.StringVar(&cf.registryConfig, "helm-registry-config", os.Getenv("HELM_REGISTRY_CONFIG"), "Helm's registry config.json (as helm registry login writes it), for the credentials of OCI registries (default $HELM_REGISTRY_CONFIG; unset: no credentials)")
	fs.Int64Var(&cf.maxBytes, "chart-max-bytes", helmrepo.DefaultMaxArchiveBytes, "the largest chart archive (and OCI registry response) fetched")
	fs.Int64Var(&cf.maxIndexBytes, "chart-max-index-bytes", helmrepo.DefaultMaxIndexBytes, "the largest index.yaml of a chart repository read")
	fs.Int64Var(&cf.maxTotalBytes, "chart-max-total-bytes", helmrepo.DefaultMaxTotalBytes, "the most bytes fetched from chart repositories and registries in one run")
	fs.DurationVar(&cf.timeout, "chart-timeout", helmrepo.DefaultTimeout, "the longest one request to a chart repository or registry may take")
	_ = cmd.MarkFlagDirname("chart-cache")
}

// defaultChartCache is --chart-cache's default: driftfix/charts in the
// user's cache folder, "" where there is none.
func defaultChartCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "driftfix", "charts")
}

// fetcher is the chart fetcher the flags ask for; nil with --offline.
func (cf *chartFlags) fetcher(ctx context.Context) (predict.FetchCharts, error) {
	if cf.offline {
		return nil, nil
	}
	switch {
	case cf.maxBytes <= 0, cf.maxIndexBytes <= 0, cf.maxTotalBytes <= 0:
		return nil, errors.New("--chart-max-bytes, --chart-max-index-bytes and --chart-max-total-bytes must be positive")
	case cf.timeout <= 0:
		return nil, fmt.Errorf("--chart-timeout %s: want a duration greater than zero", cf.timeout)
	}
	f, err := helmrepo.New(helmrepo.Options{CacheDir: cf.cache, MaxArchiveBytes: cf.maxBytes, MaxIndexBytes: cf.maxIndexBytes,
		MaxTotalBytes: cf.maxTotalBytes, Timeout: cf.timeout, RepositoryConfig: cf.repositoryConfig, RegistryConfig: cf.registryConfig})
	if err != nil {
		return nil, err
	}
	return func(ref render.ChartRef) (string, []byte, error) { return f.Fetch(ctx, ref) }, nil
}

// predictFormats are predict's output formats, the default first.
var predictFormats = []string{"text", "wide", "json", "sarif"}

func (c *cli) predictCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "predict --repo DIR --base REV [--head REV] [-o text|wide|json|sarif]",
		Short: "Predict, from Git alone, what a change will leave OutOfSync",
		Long: `Predicts, from Git alone, the fields of each Argo CD application that will stay
OutOfSync after the change from --base to --head (default: the work tree of
--repo) is synced, with the cause and the fix of each. Applications are the
Application manifests in the repository whose sources the change touches, or
--app: one Application manifest file, or one source directory. Every
application found but not predicted is listed with why and what would let it
be; --strict makes that exit 2.

--base and --head are a branch, a tag or a commit (short hashes and HEAD~1 too);
a branch that exists only as origin/NAME (a CI checkout has no local branch)
is found as NAME too. A revision that is not in the clone (a shallow
pull-request checkout) is fetched from --remote, only that commit and at most
--fetch-depth commits of its history, with the git binary and the checkout's
own credentials; never the whole history. --no-fetch fetches nothing.

Charts of Helm chart repositories and OCI registries (an Application's chart,
a chart's dependency that charts/ lacks) are fetched by this process, as Argo
CD's repo-server fetches them, and kept in --chart-cache; the renders run on
the fetched archives without network. --offline fetches none: such an
application is listed as not predicted.

-o json and -o sarif always write a whole document, also when the run fails
(then with the error in it, and exit code 2).

Exit code: 0 nothing predicted, 1 drift predicted, 2 bad input, a failed run,
or (--strict) an application not predicted.`,
		Example: `  driftfix predict --repo . --base main
  driftfix predict --repo . --base origin/main -o sarif > predict.sarif
  driftfix predict --repo . --base "$BASE_SHA" --head HEAD -o wide
  driftfix predict --repo . --base main --app apps/web.yaml --cluster cluster.yaml`,
		Args: cobra.ArbitraryArgs, // refused in the body, so -o json still writes a document
	}
	var f predictFlags
	fs := cmd.Flags()
	fs.StringVar(&f.repo, "repo", "", "the repository's checkout (a Git work tree)")
	fs.StringVar(&f.base, "base", "", "the revision the change starts from: a branch (also one known only as origin/NAME), tag or commit")
	fs.StringVar(&f.head, "head", "", "the revision of the change; default: the work tree of --repo")
	fs.BoolVar(&f.all, "all", false, "report every prediction at head, also those the base already has, for every application")
	fs.StringVar(&f.app, "app", "", "only the Applications of this manifest file, or one made for this source directory (a path in the repository)")
	fs.StringVar(&f.cluster, "cluster", "", "cluster context: a YAML or JSON list of objects (HPAs, MutatingWebhookConfigurations, Namespaces, CRDs, argocd-cm), or a snapshot file")
	fs.BoolVar(&f.strict, "strict", false, "exit 2 when an application the change touches was not predicted (after writing the report)")
	fs.StringVar(&f.remote, "remote", "origin", "the remote a revision missing from the clone is fetched from")
	fs.IntVar(&f.fetchDepth, "fetch-depth", defaultFetchDepth, "the most commits of a missing revision's history fetched (1: the commit alone)")
	fs.BoolVar(&f.noFetch, "no-fetch", false, "never fetch: a revision missing from the clone is an error")
	fs.Int64Var(&f.maxFileBytes, "max-file-bytes", gitrepo.DefaultMaxFileBytes, "the largest file of a revision read; a render that needs a larger one names it")
	fs.Int64Var(&f.maxRepoBytes, "max-repo-bytes", gitrepo.DefaultMaxTotalBytes, "the most bytes of a revision's files read (manifests first, then the smallest files)")
	fs.DurationVar(&f.timeout, "timeout", predict.DefaultTimeout, "the time every render of the run may take together; applications not reached by then are listed as not predicted (Ctrl-C stops at once)")
	f.output = c.addOutput(cmd, predictFormats...)
	f.argo.registerServer(cmd)
	f.charts.register(cmd)
	_ = cmd.MarkFlagDirname("repo")
	_ = cmd.MarkFlagFilename("cluster", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("app", completeAppPath)
	_ = cmd.RegisterFlagCompletionFunc("base", completeRevision)
	_ = cmd.RegisterFlagCompletionFunc("head", completeRevision)
	_ = cmd.RegisterFlagCompletionFunc("remote", completeRemote)
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if p := cmd.Parent(); p != nil {
			err = p.FlagErrorFunc()(cmd, err)
		}
		// A document even for a flag cobra refused, when one was asked for.
		if format := formatAsked(c.args); format == "json" || format == "sarif" {
			c.writePredictFailure(format, err)
		}
		return err
	})
	cmd.RunE = c.runE(func(_ *cobra.Command, args []string) (int, error) {
		return c.predict(&f, args)
	})
	return cmd
}

// predict runs predict and writes its report; a run that fails writes, for
// -o json and -o sarif, a document that holds the error.
func (c *cli) predict(f *predictFlags, args []string) (int, error) {
	format, err := f.output.value()
	if err != nil {
		if asked := formatAsked(c.args); asked == "json" || asked == "sarif" {
			c.writePredictFailure(asked, err)
		}
		return exitUsage, err
	}
	res, manifests, err := c.runPredict(f, args)
	if err != nil {
		c.writePredictFailure(format, err)
		return exitUsage, err
	}
	return c.writePredict(format, res, manifests, f.all, f.strict)
}

// writePredict writes the report of a run that finished and returns the
// exit code: 1 when drift is predicted, 2 (after the report) when strict
// and an application was not predicted.
func (c *cli) writePredict(format string, res *predict.Result, manifests map[string]string, all, strictRun bool) (int, error) {
	for _, n := range res.Notes {
		fmt.Fprintf(c.stderr, "driftfix predict: %s\n", templates.Terminal(n))
	}
	code := exitClean
	if len(res.Predictions) > 0 {
		code = exitDrift
	}
	var strict error
	if strictRun && len(res.NotPredicted) > 0 {
		strict = fmt.Errorf("--strict: %d %s not predicted (listed in the report)", len(res.NotPredicted), plural(len(res.NotPredicted), "application was", "applications were"))
		code = exitUsage
	}
	var out []byte
	var err error
	switch format {
	case "json":
		out, err = predictJSON(res, strict)
	case "sarif":
		run := predict.SARIFRun{Result: res, Manifests: manifests, ExitCode: code, Version: version}
		if strict != nil {
			run.Strict = strict.Error()
		}
		out, err = predict.SARIFLog(run)
	default:
		out = predictText(res, all, format == "wide")
	}
	if err != nil {
		return exitUsage, err
	}
	if _, err := c.stdout.Write(out); err != nil {
		return exitUsage, fmt.Errorf("write report: %w", err)
	}
	if strict != nil {
		return exitUsage, strict
	}
	return code, nil
}

// runPredict checks the flags, reads base and head and predicts. The
// manifests are each application's defining file, for SARIF's locations.
func (c *cli) runPredict(f *predictFlags, args []string) (*predict.Result, map[string]string, error) {
	switch {
	case len(args) > 0:
		return nil, nil, fmt.Errorf("unexpected argument %q: predict takes flags only (--repo DIR --base REV)", args[0])
	case f.repo == "":
		return nil, nil, errors.New("--repo DIR is required: the repository's checkout")
	case f.base == "":
		return nil, nil, errors.New("--base REV is required: the revision the change starts from (the pull request's base branch or commit)")
	case f.timeout <= 0:
		return nil, nil, fmt.Errorf("--timeout %s: want a duration greater than zero (the time every render of the run may take together, e.g. 10m)", f.timeout)
	case f.fetchDepth < 1:
		return nil, nil, fmt.Errorf("--fetch-depth %d: want 1 or more (the commits of history fetched for a missing revision); --no-fetch fetches nothing", f.fetchDepth)
	}
	dir, err := filepath.Abs(f.repo)
	if err != nil {
		return nil, nil, fmt.Errorf("--repo %s: %w", f.repo, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil, fmt.Errorf("--repo %s: not a directory", f.repo)
	}
	var cluster []drift.Object
	if f.cluster != "" {
		data, err := readBounded(f.cluster, predict.MaxClusterBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("--cluster %s: %w", f.cluster, err)
		}
		if cluster, err = predict.ParseCluster(data); err != nil {
			return nil, nil, fmt.Errorf("--cluster %s: %w", f.cluster, err)
		}
	}
	if f.maxFileBytes <= 0 || f.maxRepoBytes <= 0 {
		return nil, nil, errors.New("--max-file-bytes and --max-repo-bytes must be positive")
	}
	co, err := openCheckout(dir, f.remote, f.fetchDepth, !f.noFetch, c.stderr)
	if err != nil {
		return nil, nil, err
	}
	co.limits = gitrepo.Limits{MaxFileBytes: f.maxFileBytes, MaxTotalBytes: f.maxRepoBytes}
	base, err := co.read(c.ctx, f.base, "--base")
	if err != nil {
		return nil, nil, err
	}
	var head predict.Revision
	if f.head != "" {
		if head, err = co.read(c.ctx, f.head, "--head"); err != nil {
			return nil, nil, err
		}
	} else {
		tree, err := gitrepo.WorkTree(dir, co.limits)
		if err != nil {
			return nil, nil, err
		}
		head = predict.Revision{Name: "the work tree", Files: tree.Files, Unread: predict.Unread(tree.Skipped)}
	}
	opt := predict.Options{All: f.all, App: f.app, Cluster: cluster, Render: render.Limits{}, Repositories: co.remoteURLs(), NotFetched: "--offline"}
	// Argo CD's renders (--argocd-server) and chart fetches count against
	// --timeout too.
	ctx, cancel := context.WithTimeoutCause(c.ctx, f.timeout, &predict.BudgetError{Of: "of this run", Budget: f.timeout, Setting: "--timeout"})
	defer cancel()
	if opt.Charts, err = f.charts.fetcher(ctx); err != nil {
		return nil, nil, err
	}
	opt.ChartsFromBase = f.charts.fromBase
	if f.argo.named() {
		if err := argocdAtHand(ctx, &f.argo, &opt); err != nil {
			return nil, nil, err
		}
	}
	res, err := predict.Run(ctx, base, head, opt)
	var budget *predict.BudgetError
	if errors.As(err, &budget) && res != nil {
		// what was predicted in time stands; the rest is listed as not predicted
		res.Notes = append(res.Notes, err.Error())
		err = nil
	}
	if err != nil {
		return nil, nil, err
	}
	manifests := res.Manifests
	if f.app != "" {
		for _, a := range res.Applications {
			if manifests[a] == "" {
				manifests[a] = strings.Trim(filepath.ToSlash(filepath.Clean(f.app)), "/")
			}
		}
	}
	return res, manifests, nil
}

// writePredictFailure writes, for -o json and -o sarif, the document of a
// run that failed: the error in it, nothing predicted. The error itself goes
// to stderr as every command's does.
func (c *cli) writePredictFailure(format string, runErr error) {
	var out []byte
	var err error
	switch format {
	case "json":
		out, err = json.MarshalIndent(predictDoc{Applications: []string{}, Predictions: []jsonPrediction{}, NotPredicted: []predict.NotPredicted{}, Error: runErr.Error()}, "", "  ")
		out = append(out, '\n')
	case "sarif":
		out, err = predict.SARIFLog(predict.SARIFRun{Err: runErr, ExitCode: exitUsage, Version: version})
	default:
		return
	}
	if err == nil {
		_, _ = c.stdout.Write(out)
	}
}

// formatAsked is the output format the raw arguments ask for (-o, --output
// or --format, the last given), "" when none: a failure before the flags
// are parsed still gets the document asked for.
func formatAsked(args []string) string {
	asked := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, name := range []string{"-o", "--output", "--format"} {
			switch {
			case a == name && i+1 < len(args):
				asked = args[i+1]
			case strings.HasPrefix(a, name+"="):
				asked = a[len(name)+1:]
			case name == "-o" && strings.HasPrefix(a, "-o") && len(a) > 2 && a[2] != '=':
				asked = a[2:]
			}
		}
	}
	return asked
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

// predictWidth is the width the text table fits in.
const predictWidth = 100

// predictText is the report as text: a table of one line per prediction
// (narrow, or with -o wide every column whole and the Git value, evidence
// and fix too), then the applications not predicted.
func predictText(res *predict.Result, all, wide bool) []byte {
	var buf bytes.Buffer
	what := "the change introduces"
	if all {
		what = "predicted at head"
	}
	switch {
	case len(res.Applications) == 0 && len(res.NotPredicted) == 0:
		fmt.Fprintln(&buf, "No application's sources are touched by the change: nothing to predict.")
	case len(res.Applications) == 0:
		fmt.Fprintln(&buf, "No application was predicted.")
	case len(res.Predictions) == 0:
		fmt.Fprintf(&buf, "%s: no field will differ after sync (%s).\n", plural(len(res.Applications), "Application "+templates.Terminal(res.Applications[0]), fmt.Sprintf("%d applications", len(res.Applications))), what)
	default:
		fmt.Fprintf(&buf, "%d %s will differ after sync (%s).\n\n", len(res.Predictions), plural(len(res.Predictions), "field", "fields"), what)
		if wide {
			wideTable(&buf, res.Predictions)
		} else {
			narrowTable(&buf, res.Predictions)
		}
	}
	if len(res.NotPredicted) > 0 {
		fmt.Fprintf(&buf, "\nNot predicted (%d):\n", len(res.NotPredicted))
		for _, np := range res.NotPredicted {
			head := "  " + templates.Terminal(np.Application)
			var in []string
			if np.Kind != "" && np.Kind != "Application" {
				in = append(in, templates.Terminal(np.Kind))
			}
			if np.File != "" {
				in = append(in, templates.Terminal(np.File))
			}
			if len(in) > 0 {
				head += " (" + strings.Join(in, ", ") + ")"
			}
			fmt.Fprintln(&buf, head)
			wrapTo(&buf, "    why:    ", flat(templates.Terminal(np.Reason)), predictWidth)
			if np.Needs != "" {
				wrapTo(&buf, "    needs:  ", flat(templates.Terminal(np.Needs)), predictWidth)
			}
		}
	}
	return buf.Bytes()
}

// fileLine is a prediction's "file:line", "-" when the file is not known.
func fileLine(p predict.Prediction) string {
	switch {
	case p.File == "":
		return "-"
	case p.Line > 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}

func pathCell(p predict.Prediction) string {
	if s := p.Path.String(); s != "" {
		return s
	}
	return "(object)"
}

// narrowTable writes APPLICATION, RESOURCE, PATH, CAUSE and FILE:LINE,
// cutting the widest cells (a path and a file from the left, where they
// are alike) so that a line fits predictWidth.
func narrowTable(buf *bytes.Buffer, ps []predict.Prediction) {
	rows := [][]string{{"APPLICATION", "RESOURCE", "PATH", "CAUSE", "FILE:LINE"}}
	for _, p := range ps {
		rows = append(rows, []string{p.Application, p.Resource.String(), pathCell(p), string(p.Cause), fileLine(p)})
	}
	for _, r := range rows[1:] {
		for i, c := range r {
			r[i] = flat(templates.Terminal(c))
		}
	}
	writeFitted(buf, rows, predictWidth, []bool{false, false, true, false, true})
}

// wideTable writes every column whole: the narrow table's and the Git
// value, the evidence and the fix (kubectl's -o wide).
func wideTable(buf *bytes.Buffer, ps []predict.Prediction) {
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "APPLICATION\tRESOURCE\tPATH\tCAUSE\tFILE:LINE\tGIT\tEVIDENCE\tFIX")
	for _, p := range ps {
		fix := string(p.Fix)
		if p.FixFile != "" {
			fix += " " + p.FixFile
		}
		if p.Reason != "" {
			fix += " (" + p.Reason + ")"
		}
		git := cellFull(p.Git, p.Git != nil)
		if p.Git != nil && p.Resource.Group == "" && p.Resource.Kind == "Secret" {
			git = "(Secret value not shown)"
		}
		cells := []string{p.Application, p.Resource.String(), pathCell(p), string(p.Cause), fileLine(p), git, drift.EvidenceText(p.Evidence, "; "), fix}
		for i, c := range cells {
			cells[i] = flat(templates.Terminal(c))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// writeFitted writes rows as columns two spaces apart within width: while
// the line is too long, the widest column loses a rune (none below its
// header's width or 8); a cut cell ends (or, where fromLeft, starts) with …
func writeFitted(buf *bytes.Buffer, rows [][]string, width int, fromLeft []bool) {
	n := len(rows[0])
	w := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	floor := make([]int, n)
	for i, h := range rows[0] {
		floor[i] = max(utf8.RuneCountInString(h), 8)
	}
	total := func() int {
		t := 2 * (n - 1)
		for _, x := range w {
			t += x
		}
		return t
	}
	for total() > width {
		widest := -1
		for i := range w {
			if w[i] > floor[i] && (widest < 0 || w[i] > w[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		w[widest]--
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			c = cut(c, w[i], fromLeft[i])
			line.WriteString(c)
			if i < n-1 {
				line.WriteString(strings.Repeat(" ", w[i]-utf8.RuneCountInString(c)+2))
			}
		}
		buf.WriteString(strings.TrimRight(line.String(), " "))
		buf.WriteByte('\n')
	}
}

// cut shortens s to n runes with …, keeping its end when fromLeft.
func cut(s string, n int, fromLeft bool) string {
	r := []rune(s)
	if len(r) <= n || n < 1 {
		return s
	}
	if fromLeft {
		return "…" + string(r[len(r)-n+1:])
	}
	return string(r[:n-1]) + "…"
}

// wrapTo writes prefix and text wrapped at spaces within width, the
// following lines indented under the text.
func wrapTo(buf *bytes.Buffer, prefix, text string, width int) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	room := max(width-len(indent), 20)
	line, lead := "", prefix
	for _, word := range strings.Fields(text) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > room {
			buf.WriteString(lead + line + "\n")
			line, lead = "", indent
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	buf.WriteString(strings.TrimRight(lead+line, " ") + "\n")
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
	Fix       string           `json:"fix"`
	FixFile   string           `json:"fixFile,omitempty"`
	FixReason string           `json:"fixReason,omitempty"`
	Evidence  []drift.Evidence `json:"evidence,omitempty"`
}

// predictDoc is predict -o json's document. Error is set when the run
// failed (exit code 2): then nothing was predicted.
type predictDoc struct {
	Applications []string               `json:"applications"`
	Predictions  []jsonPrediction       `json:"predictions"`
	NotPredicted []predict.NotPredicted `json:"notPredicted"`
	Notes        []string               `json:"notes,omitempty"`
	Error        string                 `json:"error,omitempty"`
}

func predictJSON(res *predict.Result, strict error) ([]byte, error) {
	doc := predictDoc{Applications: res.Applications, Predictions: []jsonPrediction{}, NotPredicted: res.NotPredicted, Notes: res.Notes}
	if doc.Applications == nil {
		doc.Applications = []string{}
	}
	if doc.NotPredicted == nil {
		doc.NotPredicted = []predict.NotPredicted{}
	}
	if strict != nil {
		doc.Error = strict.Error()
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

// defaultFetchDepth is --fetch-depth's default: a missing revision is
// fetched as its commit alone, all predict reads.
const defaultFetchDepth = 1

// fetchTimeout bounds one fetch of a missing revision.
const fetchTimeout = 2 * time.Minute

// checkout is the Git repository of --repo, read with go-git; a revision
// missing from it is fetched with the git binary, which uses the
// checkout's own credentials (a CI checkout's, a developer's helpers).
type checkout struct {
	dir    string
	repo   *git.Repository
	remote string
	depth  int  // the most commits of history fetched for one revision
	fetch  bool // false: --no-fetch
	log    io.Writer
	limits gitrepo.Limits // what a revision's read takes
}

func openCheckout(dir, remote string, depth int, fetch bool, log io.Writer) (*checkout, error) {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: false, EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("--repo %s: not a Git repository: %w", dir, err)
	}
	if !validRefName(remote) || strings.Contains(remote, "/") {
		return nil, fmt.Errorf("--remote %q: not a remote's name", remote)
	}
	return &checkout{dir: dir, repo: r, remote: remote, depth: depth, fetch: fetch, log: log}, nil
}

// read resolves rev (fetching it when it is missing) and reads its files.
func (co *checkout) read(ctx context.Context, rev, flagName string) (predict.Revision, error) {
	h, err := co.resolve(ctx, rev, flagName)
	if err != nil {
		return predict.Revision{}, err
	}
	tree, err := gitrepo.CommitTree(co.repo, h, co.limits, co.dir)
	if err != nil {
		return predict.Revision{}, fmt.Errorf("%s %s: %w", flagName, rev, err)
	}
	return predict.Revision{Name: rev, Files: tree.Files, Unread: predict.Unread(tree.Skipped), Commit: h.String()}, nil
}

// local resolves rev in the clone as it is: as Git resolves it, or a
// branch known only as REMOTE/NAME (a CI checkout has no local branch).
func (co *checkout) local(rev string) (plumbing.Hash, bool) {
	for _, r := range []string{rev, co.remote + "/" + rev} {
		h, err := co.repo.ResolveRevision(plumbing.Revision(r))
		if err == nil {
			if _, err := co.repo.CommitObject(*h); err == nil {
				return *h, true
			}
		}
		if plumbing.IsHash(rev) {
			break
		}
	}
	return plumbing.ZeroHash, false
}

// resolve finds rev's commit, fetching what the clone lacks: the named
// branch, tag or commit, or a missing ancestor (HEAD^ in a depth-1
// checkout), each at most co.depth commits deep.
func (co *checkout) resolve(ctx context.Context, rev, flagName string) (plumbing.Hash, error) {
	if h, ok := co.local(rev); ok {
		return h, nil
	}
	name, moves, ok := splitRevision(rev)
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("%s %s: no such revision in %s", flagName, rev, co.dir)
	}
	start, ok := co.local(name)
	if !ok {
		if !co.fetch {
			return plumbing.ZeroHash, fmt.Errorf("%s %s: no such revision in %s (--no-fetch: nothing is fetched)", flagName, rev, co.dir)
		}
		if len(moves)+1 > co.depth {
			return plumbing.ZeroHash, co.overBudget(flagName, rev, name, len(moves)+1)
		}
		if err := co.fetchName(ctx, name, flagName, rev); err != nil {
			return plumbing.ZeroHash, err
		}
		if start, ok = co.local(name); !ok {
			return plumbing.ZeroHash, fmt.Errorf("%s %s: fetched %s from %s, but it names no commit", flagName, rev, name, co.remote)
		}
	}
	// Walk the ancestry moves, fetching a parent the clone lacks.
	cur := start
	for i, parent := range moves {
		c, err := co.repo.CommitObject(cur)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("%s %s: read commit %s: %w", flagName, rev, cur, err)
		}
		if parent >= len(c.ParentHashes) {
			return plumbing.ZeroHash, fmt.Errorf("%s %s: commit %s has no parent %d", flagName, rev, short(cur), parent+1)
		}
		cur = c.ParentHashes[parent]
		if _, err := co.repo.CommitObject(cur); err == nil {
			continue
		}
		need := len(moves) - i // the missing commit and the history below it still walked
		switch {
		case !co.fetch:
			return plumbing.ZeroHash, fmt.Errorf("%s %s: the clone %s lacks commit %s (a shallow clone) and --no-fetch is set", flagName, rev, co.dir, short(cur))
		case need > co.depth:
			return plumbing.ZeroHash, co.overBudget(flagName, rev, cur.String(), need)
		}
		if err := co.fetchName(ctx, cur.String(), flagName, rev); err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := co.repo.CommitObject(cur); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("%s %s: fetched %s from %s, but the clone still lacks it: %w", flagName, rev, short(cur), co.remote, err)
		}
	}
	return cur, nil
}

func (co *checkout) overBudget(flagName, rev, what string, need int) error {
	return fmt.Errorf("%s %s: the clone %s lacks %s, and %d commits of history would be fetched from %s where --fetch-depth allows %d: give --fetch-depth %d, or fetch it first (actions/checkout: fetch-depth: 0)",
		flagName, rev, co.dir, what, need, co.remote, co.depth, need)
}

// fetchName fetches one branch, tag or commit from the remote, co.depth
// commits deep: a branch into refs/remotes/REMOTE/NAME, as `git fetch`
// keeps it; a tag into refs/tags; a commit by its hash into no ref.
func (co *checkout) fetchName(ctx context.Context, name, flagName, rev string) error {
	tries, err := fetchSpecs(name, co.remote)
	if err != nil {
		return fmt.Errorf("%s %s: no such revision in %s%s", flagName, rev, co.dir, err.Error())
	}
	if _, err := exec.LookPath("git"); err != nil {
		return fmt.Errorf("%s %s: no such revision in %s, and the git binary that would fetch it from %s is not installed: fetch it first (git fetch --depth=%d %s %s)", flagName, rev, co.dir, co.remote, co.depth, co.remote, name)
	}
	if _, err := co.repo.Remote(co.remote); err != nil {
		return fmt.Errorf("%s %s: no such revision in %s, which has no remote %q to fetch it from (--remote NAME names another)", flagName, rev, co.dir, co.remote)
	}
	var errs []string
	for _, spec := range tries {
		err := co.gitFetch(ctx, spec)
		if err == nil {
			fmt.Fprintf(co.log, "driftfix predict: %s %s was not in the clone: fetched %s from %s, %d %s deep\n",
				flagName, templates.Terminal(rev), templates.Terminal(strings.TrimPrefix(spec, "+")), co.remote, co.depth, plural(co.depth, "commit", "commits"))
			// Reopen: go-git lists packs once.
			r, err := git.PlainOpenWithOptions(co.dir, &git.PlainOpenOptions{DetectDotGit: false, EnableDotGitCommonDir: true})
			if err != nil {
				return fmt.Errorf("--repo %s: %w", co.dir, err)
			}
			co.repo = r
			return nil
		}
		errs = append(errs, err.Error())
	}
	return fmt.Errorf("%s %s: no such revision in %s, and fetching it from %s failed (%s): check the name, or fetch it first (actions/checkout: fetch-depth: 0; or git fetch --depth=%d %s %s)",
		flagName, rev, co.dir, co.remote, strings.Join(errs, "; "), co.depth, co.remote, name)
}

// gitFetch runs git fetch of one refspec or commit, co.depth deep, without
// tags, submodules or a prompt for credentials.
func (co *checkout) gitFetch(ctx context.Context, what string) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", co.dir, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules",
		"--depth", strconv.Itoa(co.depth), "--end-of-options", co.remote, what)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := flat(stderr.String())
		if ctx.Err() != nil {
			msg = fmt.Sprintf("no answer within %s", fetchTimeout)
		}
		if msg == "" {
			msg = err.Error()
		}
		return errors.New(oneLine(templates.Terminal(msg), 300))
	}
	return nil
}

// errNotFetchable says a name cannot be fetched as it is; its text
// continues "no such revision in DIR".
type errNotFetchable string

func (e errNotFetchable) Error() string { return string(e) }

// fetchSpecs are what git fetch is given, in order, to fetch a name from
// the remote: the commit hash itself; a branch (NAME, REMOTE/NAME,
// refs/heads/NAME) into refs/remotes/REMOTE/NAME, as git fetch keeps it; a
// tag into refs/tags; another full ref name into itself; a bare NAME as a
// branch, else a tag. What is not a ref name by Git's rules (an option, a
// refspec, a path outside refs/) is refused, so nothing but a name reaches
// git.
func fetchSpecs(name, remote string) ([]string, error) {
	switch {
	case plumbing.IsHash(name):
		return []string{name}, nil
	case isShortHash(name):
		return nil, errNotFetchable("; a short hash cannot be fetched: give the whole commit hash")
	case !validRefName(name) || name == "HEAD" || !validRefName(remote) || strings.Contains(remote, "/"):
		return nil, errNotFetchable("")
	case strings.HasPrefix(name, remote+"/"):
		return []string{branchSpec(strings.TrimPrefix(name, remote+"/"), remote)}, nil
	case strings.HasPrefix(name, "refs/remotes/"+remote+"/"):
		return []string{branchSpec(strings.TrimPrefix(name, "refs/remotes/"+remote+"/"), remote)}, nil
	case strings.HasPrefix(name, "refs/heads/"):
		return []string{branchSpec(strings.TrimPrefix(name, "refs/heads/"), remote)}, nil
	case strings.HasPrefix(name, "refs/remotes/"):
		return nil, errNotFetchable(fmt.Sprintf(": %s is another remote's branch; give --remote", name))
	case strings.HasPrefix(name, "refs/"):
		return []string{"+" + name + ":" + name}, nil
	}
	return []string{branchSpec(name, remote), "+refs/tags/" + name + ":refs/tags/" + name}, nil
}

func branchSpec(branch, remote string) string {
	return "+refs/heads/" + branch + ":refs/remotes/" + remote + "/" + branch
}

// splitRevision splits rev into a name and its ancestry moves (~n and ^n;
// each move the index of the parent taken). ok is false for what is not a
// name followed by moves (@{...}, ^{...}, :path).
func splitRevision(rev string) (name string, moves []int, ok bool) {
	i := strings.IndexAny(rev, "~^")
	if i < 0 {
		return rev, nil, rev != ""
	}
	name, rest := rev[:i], rev[i:]
	if name == "" || strings.ContainsAny(name, "@:{") && name != "@" {
		return "", nil, false
	}
	if name == "@" {
		name = "HEAD"
	}
	for rest != "" {
		op := rest[0]
		if op != '~' && op != '^' {
			return "", nil, false
		}
		j := 1
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n := 1
		if j > 1 {
			v, err := strconv.Atoi(rest[1:j])
			if err != nil || v > 10000 {
				return "", nil, false
			}
			n = v
		}
		if len(moves)+n > 10000 {
			return "", nil, false
		}
		if op == '~' {
			for k := 0; k < n; k++ {
				moves = append(moves, 0)
			}
		} else if n > 0 {
			moves = append(moves, n-1)
		}
		rest = rest[j:]
	}
	return name, moves, true
}

// validRefName says whether name may be handed to git as a ref name: Git's
// rules for ref names (git check-ref-format), and never an option.
func validRefName(name string) bool {
	if name == "" || name == "@" || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") ||
		strings.Contains(name, "@{") || strings.Contains(name, "//") {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

func isShortHash(s string) bool {
	if len(s) < 4 || len(s) >= 40 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

func short(h plumbing.Hash) string { return h.String()[:12] }

// remoteURLs are the URLs of the checkout's remotes: an Application whose
// source names another repository is not rendered from this one.
func (co *checkout) remoteURLs() []string {
	rs, err := co.repo.Remotes()
	if err != nil {
		return nil
	}
	var out []string
	for _, rm := range rs {
		out = append(out, rm.Config().URLs...)
	}
	return out
}

// completeRevision completes --base and --head with the clone's branches
// (local and remote-tracking) and tags.
func completeRevision(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	r, err := git.PlainOpen(repoFlag(cmd))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	refs, err := r.References()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		n := ref.Name()
		var s string
		switch {
		case n.IsBranch(), n.IsTag(), n.IsRemote():
			s = n.Short()
		default:
			return nil
		}
		if strings.HasPrefix(s, prefix) && !strings.HasSuffix(s, "/HEAD") {
			out = append(out, s)
		}
		return nil
	})
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeRemote completes --remote with the clone's remotes.
func completeRemote(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	r, err := git.PlainOpen(repoFlag(cmd))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	rs, _ := r.Remotes()
	var out []string
	for _, rm := range rs {
		if n := rm.Config().Name; strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeAppPath completes --app with the directories and manifest files
// of the repository (--repo, else the working directory), as paths in it.
func completeAppPath(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	root := repoFlag(cmd)
	dirPart := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dirPart = prefix[:i+1]
	}
	if strings.Contains(dirPart, "..") || filepath.IsAbs(dirPart) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dirPart)))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, e := range entries {
		name := dirPart + e.Name()
		if !strings.HasPrefix(name, prefix) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		switch {
		case e.IsDir():
			out = append(out, name+"/")
		case e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml") || strings.HasSuffix(e.Name(), ".json")):
			out = append(out, name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// repoFlag is --repo as given so far, "." without it.
func repoFlag(cmd *cobra.Command) string {
	if v, err := cmd.Flags().GetString("repo"); err == nil && v != "" {
		return v
	}
	return "."
}

// maxArgoApplications bounds the Applications read whole from argocd-server
// for one run.
const maxArgoApplications = 500

// argocdAtHand makes Argo CD the renderer of what predict cannot render
// (charts from Helm or OCI repositories, other repositories' sources,
// plugins): the Applications argocd-server lists whose sources name this
// repository are read whole (Options.Applications), and one of them is
// rendered by argocd-server's manifests endpoint at a commit of the run
// (a commit repo-server can fetch: pushed to the repository; the work tree
// never is). Only the read-only account's get is needed.
func argocdAtHand(ctx context.Context, af *argoFlags, opt *predict.Options) error {
	client, err := af.client()
	if err != nil {
		return err
	}
	list, err := client.ListApplications(ctx)
	if err != nil {
		return af.explain(fmt.Errorf("list Argo CD's applications: %w", err))
	}
	repos := opt.Repositories
	for _, a := range list {
		if len(opt.Applications) >= maxArgoApplications {
			break
		}
		// the list names the first source's repository: a chart or
		// multi-source application may read this one through another
		if len(repos) == 0 || (a.GitSource && !predict.SameRepository(a.RepoURL, repos...)) {
			continue
		}
		obj, err := client.GetApplication(ctx, a.Namespace, a.Name)
		if err != nil {
			return af.explain(fmt.Errorf("read application %s/%s: %w", a.Namespace, a.Name, err))
		}
		for _, src := range drift.Sources(obj) {
			if predict.SameRepository(src.RepoURL, repos...) {
				opt.Applications = append(opt.Applications, obj)
				break
			}
		}
	}
	ours := func(u string) bool { return predict.SameRepository(u, repos...) }
	opt.Remote = func(app drift.Object, rev predict.Revision) ([]drift.Object, error) {
		return client.Manifests(ctx, drift.Str(app, "metadata", "namespace"), drift.Str(app, "metadata", "name"), argocd.RevisionAt(app, rev.Commit, ours), false)
	}
	return nil
}
