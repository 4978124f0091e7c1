package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/kube"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/bot/secretfile"
	"github.com/driftfix/driftfix/templates"
)

// argoFlags are the flags that reach argocd-server. The token comes from a
// file or the ARGOCD_AUTH_TOKEN environment variable, never from a flag.
type argoFlags struct {
	server, tokenFile, caFile string
	tokenEnv                  string // environment variable with the token, default ARGOCD_AUTH_TOKEN
	insecure                  bool
	timeout                   time.Duration

	kubeconfig, kubeContext, argoNamespace string
	noKube, repoFiles                      bool
	// dryRunEvidence asks the API server, for each differing resource, what
	// a dry-run apply of its Git manifest would store (needs patch).
	dryRunEvidence bool
	dryRunBudget   int
	// tokenFrom names where tokenFile came from, in errors (default the flag).
	tokenFrom string
}

func (a *argoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.server, "argocd-server", os.Getenv("ARGOCD_SERVER"), "argocd-server URL, e.g. https://argocd.example.com (or ARGOCD_SERVER)")
	fs.StringVar(&a.tokenFile, "argocd-token-file", "", "file holding the Argo CD API token (else ARGOCD_AUTH_TOKEN)")
	fs.StringVar(&a.caFile, "argocd-ca-file", "", "PEM file of the CA that signed argocd-server's certificate")
	fs.BoolVar(&a.insecure, "argocd-insecure", false, "skip TLS verification (self-signed test servers only)")
	fs.DurationVar(&a.timeout, "argocd-timeout", 30*time.Second, "timeout of each argocd-server request")
	fs.StringVar(&a.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster the applications run in (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	fs.StringVar(&a.kubeContext, "kube-context", "", "kubeconfig context to use")
	fs.StringVar(&a.argoNamespace, "argocd-namespace", "argocd", "namespace of argocd-cm")
	fs.BoolVar(&a.noKube, "no-kube", false, "do not read HPAs, webhooks, namespaces and CRDs from Kubernetes")
	fs.BoolVar(&a.repoFiles, "repo-files", true, "read the source repository's manifests at the compared revision (file:// and https://)")
	fs.BoolVar(&a.dryRunEvidence, "dry-run-evidence", false, "server-side dry-run apply (dryRun=All) each differing resource's Git manifest and keep what the API server would store; needs patch on those kinds")
	fs.IntVar(&a.dryRunBudget, "dry-run-budget", kube.DefaultDryRunBudget, "most dry-run applies per scan, with --dry-run-evidence")
}

// cluster reads the cluster context once, or returns nil (with a warning on
// stderr) when Kubernetes is not configured and was not asked for explicitly.
func (a *argoFlags) cluster(ctx context.Context, stderr io.Writer) (func(*drift.Snapshot) []drift.Object, error) {
	if a.noKube {
		return nil, nil
	}
	cfg := kube.Config{Kubeconfig: a.kubeconfig, Context: a.kubeContext, ArgoCDNamespace: a.argoNamespace}
	rc, err := kube.RESTConfig(cfg)
	if err != nil {
		if a.kubeconfig != "" {
			return nil, err
		}
		fmt.Fprintf(stderr, "driftfix: cluster context not collected (%v); HPAs, webhooks, namespaces and CRDs are unknown to this diagnosis (use --kubeconfig, or --no-kube to silence this)\n", err)
		return nil, nil
	}
	cl, err := kube.Read(ctx, rc, cfg)
	if err != nil {
		return nil, err
	}
	if !a.dryRunEvidence {
		return cl.For, nil
	}
	budget := a.dryRunBudget
	if budget <= 0 {
		budget = kube.DefaultDryRunBudget
	}
	dr, err := kube.NewDryRunner(rc, budget, slog.Default())
	if err != nil {
		return nil, err
	}
	// One budget for everything this cluster read serves: one scan or cycle.
	return func(s *drift.Snapshot) []drift.Object {
		dr.Evidence(ctx, s)
		return cl.For(s)
	}, nil
}

func (a *argoFlags) client() (*argocd.Client, error) {
	if a.server == "" {
		return nil, fmt.Errorf("--argocd-server (or ARGOCD_SERVER) is required")
	}
	env := a.tokenEnv
	if env == "" {
		env = "ARGOCD_AUTH_TOKEN"
	}
	envToken := os.Getenv(env)
	token := func() string { return envToken }
	if envToken == "" && a.tokenFile == "" {
		if a.tokenFrom != "" {
			return nil, fmt.Errorf("no Argo CD token: give the argocd entry's tokenFile, or tokenEnv naming a variable that holds it (%s is empty)", env)
		}
		return nil, fmt.Errorf("no Argo CD token: give --argocd-token-file FILE or set %s", env)
	}
	if a.tokenFile != "" {
		f, err := secretfile.Open(a.tokenFile)
		if err != nil {
			from := a.tokenFrom
			if from == "" {
				from = "--argocd-token-file"
			}
			return nil, fmt.Errorf("read %s: %w", from, errors.Unwrap(err))
		}
		token = f.Token // read again when the file changes: a rotated token needs no restart
	}
	server := a.server
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	return argocd.New(argocd.Config{BaseURL: server, TokenFunc: token, CAFile: a.caFile, Insecure: a.insecure, Timeout: a.timeout})
}

// cmdSnapshot writes the snapshot of one live application.
func cmdSnapshot(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("snapshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af argoFlags
	af.register(fs)
	appNS := fs.String("app-namespace", "", "namespace of the Application (apps in any namespace)")
	output := registerOutput(fs, "json", "yaml")
	var fileShort, fileLong string
	fs.StringVar(&fileLong, "output-file", "", "file to write the snapshot to (default: standard output)")
	fs.StringVar(&fileShort, "f", "", "same as --output-file")
	renders := fs.Bool("renders", true, "render the application twice more (noCache) to check determinism")
	if err := parseWithApp(fs, args); err != nil {
		return exitUsage, err
	}
	format, out, err := snapshotOutput(fs, output, fileShort, fileLong, stderr)
	if err != nil {
		return exitUsage, err
	}
	c, err := af.client()
	if err != nil {
		return exitUsage, err
	}
	s, err := liveSnapshot(ctx, c, *appNS, fs.Arg(0), *renders)
	if err != nil {
		return exitUsage, err
	}
	clusterCtx, err := af.cluster(ctx, stderr)
	if err != nil {
		return exitUsage, err
	}
	if clusterCtx != nil {
		collect.AddClusterContext(s, clusterCtx(s))
	}
	if af.repoFiles {
		addRepoFiles(ctx, s, stderr)
	}
	var raw []byte
	if format == "yaml" {
		raw, err = jsonAsYAML(s)
	} else {
		raw, err = indentJSON(s)
	}
	if err != nil {
		return exitUsage, fmt.Errorf("encode snapshot: %w", err)
	}
	if out == "" {
		_, err = stdout.Write(raw)
	} else {
		err = writeAtomically(out, raw)
	}
	if err != nil {
		return exitUsage, err
	}
	return exitClean, nil
}

// snapshotOutput is the snapshot's format and file. -o, --output and
// --format take the format; -f and --output-file the file. Before -o took
// the format it took the file: a value of -o that is no format but names a
// file (it has a dot or a slash: web.json, ./web) is still written there,
// in the format its extension says, with a note on stderr; any other value
// is refused with how to name a file.
func snapshotOutput(fs *flag.FlagSet, output *outputFlag, fileShort, fileLong string, stderr io.Writer) (format, file string, err error) {
	file = fileShort
	switch {
	case fileShort != "" && fileLong != "" && fileShort != fileLong:
		return "", "", fmt.Errorf("-f %q and --output-file %q disagree: give the file once", fileShort, fileLong)
	case fileShort == "":
		file = fileLong
	}
	names, values := output.given()
	for i, v := range values {
		if v == "json" || v == "yaml" {
			continue
		}
		flagged := flagName(names[i])
		if names[i] != "o" || !strings.ContainsAny(v, "./"+string(os.PathSeparator)) {
			return "", "", fmt.Errorf("%s %q: want json or yaml; to write the snapshot to a file, use -f %s", flagged, v, v)
		}
		if file != "" {
			return "", "", fmt.Errorf("-o %q and -f %q both name a file (-o now takes the format, json or yaml): give the file once, with -f", v, file)
		}
		file = v
		format = "json"
		if strings.HasSuffix(v, ".yaml") || strings.HasSuffix(v, ".yml") {
			format = "yaml"
		}
		fmt.Fprintf(stderr, "driftfix snapshot: -o %s is read as a file, as before; use -f %s (-o now takes the format, json or yaml)\n", v, v)
		names = append(names[:i:i], names[i+1:]...)
		values = append(values[:i:i], values[i+1:]...)
		break
	}
	for i, v := range values {
		switch {
		case format != "" && v != format:
			return "", "", fmt.Errorf("%s %q disagrees with the file's extension (%s): give the output format once", flagName(names[i]), v, format)
		case format == "":
			if i > 0 && v != values[0] {
				return "", "", fmt.Errorf("%s %q and %s %q disagree: give the output format once", flagName(names[0]), values[0], flagName(names[i]), v)
			}
		}
	}
	if format == "" {
		format = "json"
		if len(values) > 0 {
			format = values[0]
		}
	}
	return format, file, nil
}

func liveSnapshot(ctx context.Context, c *argocd.Client, ns, name string, renders bool) (*drift.Snapshot, error) {
	settings, err := c.Settings(ctx)
	if err != nil {
		return nil, err
	}
	return c.Snapshot(ctx, ns, name, argocd.SnapshotOptions{Renders: renders, Settings: &settings})
}

// addRepoFiles reads the application's source repository at the compared
// revision into the snapshot. A repository that cannot be read is reported on
// stderr and left out: the diagnosis does not need it, only fixes do.
func addRepoFiles(ctx context.Context, s *drift.Snapshot, stderr io.Writer) {
	srcs := drift.Sources(s.Application)
	if len(srcs) == 0 || srcs[0].RepoURL == "" {
		return
	}
	rev := drift.Str(s.Application, "status", "sync", "revision")
	if rev == "" {
		rev = drift.Str(s.Application, "spec", "source", "targetRevision")
	}
	files, err := gitrepo.Files(ctx, srcs[0].RepoURL, rev, gitrepo.Limits{})
	if err != nil {
		fmt.Fprintf(stderr, "driftfix: repository files not collected: %v\n", err)
		return
	}
	s.Repo.Files = files
}

// parseWithApp parses flags that may come before or after the one APP argument.
func parseWithApp(fs *flag.FlagSet, args []string) error {
	var app string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		if app != "" {
			return fmt.Errorf("unexpected argument %q: give one application", fs.Arg(0))
		}
		app = fs.Arg(0)
		rest = fs.Args()[1:]
	}
	if app == "" {
		return fmt.Errorf("name the application: driftfix %s APP", fs.Name())
	}
	return fs.Parse(append(append([]string{}, args...), "--", app)[len(args):])
}

func writeAtomically(path string, data []byte) error {
	tmp := path + ".driftfix-tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// cmdScan lists the stuck applications with their causes.
func cmdScan(ctx context.Context, args []string, stdout, stderr io.Writer, now time.Time) (int, error) {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af argoFlags
	af.register(fs)
	after := fs.Duration("stuck-after", collect.DefaultStuckAfter, "how long an application must stay OutOfSync after a successful sync (0s: at once)")
	output := registerOutput(fs, "text", "json", "yaml")
	alwaysRefresh := fs.Bool("always-refresh", false, "refresh every stuck candidate, even one whose Git revision still names the commit Argo CD compared")
	if err := fs.Parse(args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() > 0 {
		return exitUsage, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	format, err := output.value()
	if err != nil {
		return exitUsage, err
	}
	if *after < 0 {
		return exitUsage, fmt.Errorf("--stuck-after %s: want zero or more", *after)
	}
	c, err := af.client()
	if err != nil {
		return exitUsage, err
	}
	clusterCtx, err := af.cluster(ctx, stderr)
	if err != nil {
		return exitUsage, err
	}
	opts := collect.ScanOptions{StuckAfter: *after, ClusterContext: clusterCtx}
	if af.repoFiles && !*alwaysRefresh {
		opts.GitCommit = gitrepo.Reader{}.Resolve
	}
	opts.Diagnose = func(s *drift.Snapshot) (*drift.Report, *drift.Comparison, error) {
		return pipeline.DiagnoseCompared(s, drift.Sensitivity{})
	}
	results, scanned, err := collect.Scan(ctx, c, now, opts)
	if err != nil {
		return exitUsage, err
	}
	type result struct {
		Application string         `json:"application"`
		Namespace   string         `json:"namespace"`
		Why         string         `json:"why"`
		Causes      map[string]int `json:"causes"`
		Findings    int            `json:"findings"`
		Error       string         `json:"error,omitempty"`
	}
	type uncompared struct {
		Application string `json:"application"`
		Namespace   string `json:"namespace"`
		SyncStatus  string `json:"syncStatus"`
		Message     string `json:"message"` // Argo CD's, "" when none was read
	}
	cannot := []uncompared{}
	for _, a := range scanned {
		if a.CannotCompare {
			cannot = append(cannot, uncompared{Application: a.Name, Namespace: a.Namespace, SyncStatus: a.SyncStatus, Message: a.ComparisonError})
		}
	}
	var stuck []result
	for _, sr := range results {
		r := result{Application: sr.App.Name, Namespace: sr.App.Namespace, Why: sr.Why, Causes: map[string]int{}}
		if sr.Err != nil {
			r.Error = sr.Err.Error()
		} else {
			r.Findings = len(sr.Report.Findings)
			for _, f := range sr.Report.Findings {
				r.Causes[string(f.Cause)]++
			}
		}
		stuck = append(stuck, r)
	}
	if format != "text" {
		if stuck == nil {
			stuck = []result{}
		}
		v := struct {
			Scanned       int          `json:"scanned"`
			Stuck         []result     `json:"stuck"`
			CannotCompare []uncompared `json:"cannotCompare"`
		}{len(scanned), stuck, cannot}
		var raw []byte
		if format == "yaml" {
			raw, err = jsonAsYAML(v)
		} else {
			raw, err = indentJSON(v)
		}
		if err == nil {
			_, err = stdout.Write(raw)
		}
		if err != nil {
			return exitUsage, fmt.Errorf("write the scan: %w", err)
		}
	} else {
		fmt.Fprintf(stdout, "%d applications scanned, %d stuck OutOfSync.\n", len(scanned), len(stuck))
		if len(stuck) > 0 {
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "\nAPPLICATION\tFINDINGS\tCAUSES\tSINCE")
			for _, r := range stuck {
				var cs []string
				for c, n := range r.Causes {
					cs = append(cs, fmt.Sprintf("%s×%d", c, n))
				}
				sort.Strings(cs)
				causes := strings.Join(cs, ", ")
				if r.Error != "" {
					causes = "error: " + r.Error
				}
				fmt.Fprintf(tw, "%s/%s\t%d\t%s\t%s\n", r.Namespace, r.Application, r.Findings, causes, r.Why)
			}
			tw.Flush()
		}
		if len(cannot) > 0 {
			noun := "applications"
			if len(cannot) == 1 {
				noun = "application"
			}
			fmt.Fprintf(stdout, "\nArgo CD cannot compare %d %s (not drift; nothing is proposed for them):\n", len(cannot), noun)
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "APPLICATION\tSYNC STATUS\tARGO CD SAYS")
			for _, u := range cannot {
				says := "(no message was read)"
				if u.Message != "" {
					says = templates.Terminal(u.Message)
				}
				fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", templates.Terminal(u.Namespace), templates.Terminal(u.Application), templates.Terminal(u.SyncStatus), says)
			}
			tw.Flush()
		}
	}
	if len(stuck) > 0 {
		return exitDrift, nil
	}
	return exitClean, nil
}
