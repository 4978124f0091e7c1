package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

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
// file, the ARGOCD_AUTH_TOKEN environment variable or the argocd CLI's
// context, never from a flag.
type argoFlags struct {
	cmd                       *cobra.Command // the command the flags are on; nil for the policy's instances
	server, tokenFile, caFile string
	tokenEnv                  string // environment variable with the token, default ARGOCD_AUTH_TOKEN
	insecure, plaintext       bool
	grpcWeb                   bool
	timeout                   time.Duration
	// argocdConfig and argocdContext name the argocd CLI's config file and
	// context to read when neither flag nor variable names the server.
	argocdConfig, argocdContext string

	kubeconfig, kubeContext, argoNamespace string
	noKube, repoFiles                      bool
	// dryRunEvidence asks the API server, for each differing resource, what
	// a dry-run apply of its Git manifest would store (needs patch).
	dryRunEvidence bool
	dryRunBudget   int
	// tokenFrom names where tokenFile came from, in errors (default the flag).
	tokenFrom string
	// source says where the server and token came from, for errors.
	source string
	// schemeAssumed: the server was given as host:port and https:// assumed.
	schemeAssumed bool
	// serverFrom names ARGOCD_OPTS when the server came from it, and
	// optsToken is ARGOCD_OPTS's --auth-token (applyArgocdOpts).
	serverFrom, optsToken string
	// list narrows the applications listed (scan's --selector, --project
	// and --app-namespace).
	list argocd.ListFilter
}

func (a *argoFlags) register(cmd *cobra.Command) {
	a.registerServer(cmd)
	fs := cmd.Flags()
	fs.StringVar(&a.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster the applications run in (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	fs.StringVar(&a.kubeContext, "kube-context", "", "kubeconfig context to use")
	fs.StringVar(&a.argoNamespace, "argocd-namespace", "argocd", "namespace of argocd-cm")
	fs.BoolVar(&a.noKube, "no-kube", false, "do not read HPAs, webhooks, namespaces and CRDs from Kubernetes")
	fs.BoolVar(&a.repoFiles, "repo-files", true, "read the source repository's manifests at the compared revision (file:// and https://)")
	fs.BoolVar(&a.dryRunEvidence, "dry-run-evidence", false, "server-side dry-run apply (dryRun=All) each differing resource's Git manifest and keep what the API server would store; needs patch on those kinds")
	fs.IntVar(&a.dryRunBudget, "dry-run-budget", kube.DefaultDryRunBudget, "most dry-run applies per scan, with --dry-run-evidence")
	_ = cmd.MarkFlagFilename("kubeconfig")
}

// registerServer registers the flags that reach argocd-server alone.
func (a *argoFlags) registerServer(cmd *cobra.Command) {
	a.cmd = cmd
	fs := cmd.Flags()
	fs.StringVar(&a.server, "argocd-server", "", "argocd-server address: https://HOST, http://HOST with --plaintext, or HOST:PORT as the argocd CLI takes it (default: the server $ARGOCD_OPTS gives, else $ARGOCD_SERVER, else the argocd CLI's current context)")
	fs.StringVar(&a.server, "server", "", "same as --argocd-server (the argocd CLI's name)")
	fs.StringVar(&a.tokenFile, "argocd-token-file", "", "file holding the Argo CD API token (default: the auth token $ARGOCD_OPTS gives, else $ARGOCD_AUTH_TOKEN, else the argocd CLI's context)")
	fs.StringVar(&a.caFile, "argocd-ca-file", "", "PEM file of the CA that signed argocd-server's certificate")
	fs.BoolVar(&a.insecure, "argocd-insecure", false, "skip TLS verification (self-signed test servers only)")
	fs.BoolVar(&a.insecure, "insecure", false, "same as --argocd-insecure (the argocd CLI's name)")
	fs.BoolVar(&a.plaintext, "plaintext", false, "argocd-server speaks HTTP without TLS: the token crosses the network in clear text (the policy's insecurePlaintext)")
	fs.BoolVar(&a.grpcWeb, "grpc-web", false, "accepted as the argocd CLI takes it; driftfix always uses Argo CD's REST API over HTTP/1.1, which passes where gRPC-Web does")
	fs.StringVar(&a.argocdConfig, "argocd-config", "", "the argocd CLI's config file (default: $ARGOCD_CONFIG_DIR/config, else ~/.config/argocd/config)")
	fs.StringVar(&a.argocdContext, "argocd-context", "", "context of the argocd CLI's config to use (default: its current-context)")
	fs.DurationVar(&a.timeout, "argocd-timeout", 30*time.Second, "timeout of each argocd-server request")
	_ = fs.MarkHidden("grpc-web")
	_ = cmd.MarkFlagFilename("argocd-token-file")
	_ = cmd.MarkFlagFilename("argocd-ca-file", "pem", "crt")
	_ = cmd.MarkFlagFilename("argocd-config")
}

// named says whether an argocd-server is named for this run: a flag, or
// $ARGOCD_SERVER, or $ARGOCD_OPTS's --server, or an argocd CLI context asked
// for by name. A run that names none reads no network.
func (a *argoFlags) named() bool {
	if a.cmd != nil && (a.serverGiven(a.cmd) || a.cmd.Flags().Changed("argocd-context")) {
		return true
	}
	return os.Getenv("ARGOCD_SERVER") != "" || strings.Contains(os.Getenv("ARGOCD_OPTS"), "--server")
}

// serverGiven says whether --argocd-server or --server was typed.
func (a *argoFlags) serverGiven(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("argocd-server") || cmd.Flags().Changed("server")
}

// addAppNamespace registers -N/--app-namespace (argocd's) and its hidden
// kubectl-style alias -n/--namespace.
func addAppNamespace(cmd *cobra.Command) *string {
	var ns string
	cmd.Flags().StringVarP(&ns, "app-namespace", "N", "", "namespace of the Application (apps in any namespace); NAMESPACE/APP says the same")
	cmd.Flags().StringVarP(&ns, "namespace", "n", "", "same as --app-namespace")
	_ = cmd.Flags().MarkHidden("namespace")
	return &ns
}

// The forms of Kubernetes names: an object's (RFC 1123 subdomain) and a
// namespace's (RFC 1123 label).
var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// appName splits NAMESPACE/APP, Argo CD's form of an application in any
// namespace (as `argocd app get ns/name`), from the application argument;
// --app-namespace may say the namespace too, but not another one.
func appName(arg, flagNS string) (ns, name string, err error) {
	ns, name, qualified := strings.Cut(arg, "/")
	if !qualified {
		ns, name = flagNS, arg
	}
	orFile := ""
	if isFile(arg) {
		orFile = "; to diagnose a snapshot file, use driftfix diagnose --snapshot " + arg
	}
	switch {
	case name == "" || (qualified && ns == "") || strings.Contains(name, "/"):
		return "", "", fmt.Errorf("application %q: want APP or NAMESPACE/APP%s", arg, orFile)
	case !dnsSubdomain.MatchString(name) || len(name) > 253:
		return "", "", fmt.Errorf("application %q: %q is no Kubernetes object name (lower case letters, digits, '-' and '.')%s", arg, name, orFile)
	case ns != "" && (!dnsLabel.MatchString(ns) || len(ns) > 63):
		return "", "", fmt.Errorf("application %q: %q is no Kubernetes namespace (lower case letters, digits and '-')%s", arg, ns, orFile)
	case qualified && flagNS != "" && flagNS != ns:
		return "", "", fmt.Errorf("application %q is in namespace %q, but --app-namespace says %q: give the namespace once", arg, ns, flagNS)
	}
	return ns, name, nil
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
		how := "use --kubeconfig, or --no-kube to silence this"
		if a.cmd == nil {
			how = "set kubeconfig in the policy's argocd entry"
		}
		fmt.Fprintf(stderr, "driftfix: cluster context not collected (%v); HPAs, webhooks, namespaces and CRDs are unknown to this diagnosis (%s)\n", err, how)
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

// client builds the argocd-server client. The server comes from
// --argocd-server (or --server), else --server in $ARGOCD_OPTS, else
// $ARGOCD_SERVER, else the argocd CLI's context; the token from
// --argocd-token-file, else --auth-token in $ARGOCD_OPTS, else
// $ARGOCD_AUTH_TOKEN, else the argocd CLI's context for that server, the
// order the argocd CLI takes them in. What was used is kept for errors.
func (a *argoFlags) client() (*argocd.Client, error) {
	env := a.tokenEnv
	if env == "" {
		env = "ARGOCD_AUTH_TOKEN"
	}
	envToken := os.Getenv(env)
	if a.cmd != nil && os.Getenv("ARGOCD_OPTS") != "" {
		unused, err := a.applyArgocdOpts(os.Getenv("ARGOCD_OPTS"))
		if err != nil {
			return nil, err
		}
		if len(unused) > 0 {
			fmt.Fprintf(a.cmd.ErrOrStderr(), "driftfix: ARGOCD_OPTS %s: not used by driftfix\n", strings.Join(unused, " "))
		}
	}
	var token func() string
	var serverFrom, tokenFrom string
	switch {
	case a.cmd != nil && a.cmd.Flags().Changed("argocd-server"):
		serverFrom = "--argocd-server"
	case a.cmd != nil && a.cmd.Flags().Changed("server"):
		serverFrom = "--server"
	case a.cmd != nil && a.serverFrom != "":
		serverFrom = a.serverFrom
	case a.cmd == nil && a.server != "":
		serverFrom = "the argocd entry's server"
	case a.cmd != nil && os.Getenv("ARGOCD_SERVER") != "":
		a.server, serverFrom = os.Getenv("ARGOCD_SERVER"), "ARGOCD_SERVER"
	}
	var cliCtx *argocd.CLIContext
	if a.cmd != nil && (serverFrom == "" || (envToken == "" && a.tokenFile == "" && a.optsToken == "")) {
		cc, err := a.cliContext(serverFrom == "")
		if err != nil {
			return nil, err
		}
		cliCtx = cc
	}
	if serverFrom != "" && strings.TrimSpace(a.server) == "" {
		return nil, fmt.Errorf("no Argo CD server: %s is empty", serverFrom)
	}
	if serverFrom == "" {
		if cliCtx == nil {
			return nil, fmt.Errorf("no Argo CD server: give --argocd-server URL, set ARGOCD_SERVER, or run argocd login first (driftfix reads the argocd CLI's current context)")
		}
		if cliCtx.Core {
			return nil, fmt.Errorf("the argocd CLI's context %q (%s) is --core, without argocd-server; driftfix reads argocd-server's API: give --argocd-server URL", cliCtx.Name, cliCtx.File)
		}
		if cliCtx.Server == "port-forward" {
			return nil, fmt.Errorf("the argocd CLI's context %q (%s) reaches argocd-server by --port-forward, which driftfix does not do: run kubectl -n argocd port-forward svc/argocd-server 8080:443 and give --argocd-server localhost:8080 --insecure", cliCtx.Name, cliCtx.File)
		}
		a.server = cliCtx.URL()
		a.plaintext = a.plaintext || cliCtx.PlainText
		a.insecure = a.insecure || cliCtx.Insecure
		serverFrom = fmt.Sprintf("the argocd CLI's context %q in %s", cliCtx.Name, cliCtx.File)
	}
	switch {
	case a.tokenFile != "":
		f, err := secretfile.Open(a.tokenFile)
		if err != nil {
			from := a.tokenFrom
			if from == "" {
				from = "--argocd-token-file"
			}
			return nil, fmt.Errorf("read %s: %w", from, errors.Unwrap(err))
		}
		token = f.Token // read again when the file changes: a rotated token needs no restart
		tokenFrom = "--argocd-token-file"
		if a.tokenFrom != "" {
			tokenFrom = a.tokenFrom
		}
	case a.optsToken != "":
		t := a.optsToken
		token = func() string { return t }
		tokenFrom = "ARGOCD_OPTS --auth-token"
	case envToken != "":
		token = func() string { return envToken }
		tokenFrom = env
	case cliCtx != nil && cliCtx.Token != "":
		t := cliCtx.Token
		token = func() string { return t }
		tokenFrom = fmt.Sprintf("the argocd CLI's context %q in %s", cliCtx.Name, cliCtx.File)
	case a.tokenFrom != "":
		return nil, fmt.Errorf("no Argo CD token: give the argocd entry's tokenFile, or tokenEnv naming a variable that holds it (%s is empty)", env)
	default:
		return nil, fmt.Errorf("no Argo CD token: give --argocd-token-file FILE or set %s (or run argocd login: driftfix reads the argocd CLI's current context)", env)
	}
	if cliCtx != nil && cliCtx.Token != "" && tokenFrom == serverFrom {
		a.source = serverFrom
	} else {
		a.source = "server from " + serverFrom + ", token from " + tokenFrom
	}
	server, err := a.serverURL()
	if err != nil {
		return nil, err
	}
	cfg := argocd.Config{BaseURL: server, TokenFunc: token, CAFile: a.caFile, Insecure: a.insecure, Timeout: a.timeout, List: a.list}
	if cliCtx != nil && strings.HasPrefix(a.source, "the argocd CLI") {
		cfg.ClientCert, cfg.ClientKey = cliCtx.ClientCert, cliCtx.ClientKey
	}
	c, err := argocd.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, a.source)
	}
	return c, nil
}

// serverURL is the server as a URL. HOST:PORT without a scheme is https://
// as the argocd CLI reads it, or http:// with --plaintext; http:// needs
// --plaintext, as the policy's http:// server needs insecurePlaintext.
func (a *argoFlags) serverURL() (string, error) {
	server := strings.TrimSpace(a.server)
	flagged := "--argocd-server"
	switch {
	case a.cmd == nil:
		flagged = "the argocd entry's server"
	case a.serverFrom != "" && !a.serverGiven(a.cmd):
		flagged = a.serverFrom
	}
	scheme, rest, ok := strings.Cut(server, "://")
	if !ok {
		if a.plaintext {
			return "http://" + server, nil
		}
		a.schemeAssumed = true
		return "https://" + server, nil
	}
	switch {
	case scheme == "http" && !a.plaintext && a.cmd != nil:
		return "", fmt.Errorf("%s %s is plain http, which sends the API token in clear text: add --plaintext to mean it (the policy's insecurePlaintext: true), or use https://%s", flagged, server, rest)
	case scheme == "https" && a.plaintext:
		return "", fmt.Errorf("%s %s is https, but --plaintext says the server has no TLS: give one of them", flagged, server)
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("%s %q: want https://HOST, http://HOST with --plaintext, or HOST:PORT", flagged, server)
	}
	return server, nil
}

// explain adds to an error from argocd-server where the server and token
// came from and, when TLS was assumed for a server that does not speak it,
// what to type.
func (a *argoFlags) explain(err error) error {
	if err == nil {
		return nil
	}
	hint := ""
	switch {
	case a.schemeAssumed && notTLS(err):
		hint = fmt.Sprintf("; %s has no scheme, so https:// was assumed (as the argocd CLI does): for a server without TLS, add --plaintext or write http://%s with --plaintext", a.server, a.server)
	case errors.Is(err, argocd.ErrUnauthorized) && strings.Contains(a.source, "argocd CLI"):
		hint = "; the argocd CLI's token has expired or was revoked: run argocd login again"
	}
	if a.source == "" {
		return err
	}
	return fmt.Errorf("%w (%s%s)", err, a.source, hint)
}

// notTLS says whether err looks like a TLS handshake with a server that
// answered in plain HTTP or hung up: connection reset, EOF, or a record
// that is no TLS.
func notTLS(err error) bool {
	var rec tls.RecordHeaderError
	if errors.As(err, &rec) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection reset") || strings.Contains(s, "EOF") || strings.Contains(s, "server gave HTTP response") || strings.Contains(s, "first record does not look like a TLS handshake")
}

// cliContext reads the argocd CLI's context; with required unset, a
// missing config file is no error (nil).
func (a *argoFlags) cliContext(required bool) (*argocd.CLIContext, error) {
	path := a.argocdConfig
	if path == "" {
		p, err := argocd.CLIConfigPath()
		if err != nil {
			if required {
				return nil, err
			}
			return nil, nil
		}
		path = p
	}
	cfg, err := argocd.ReadCLIConfig(path)
	switch {
	case errors.Is(err, argocd.ErrNoCLIConfig) && a.argocdConfig == "" && a.argocdContext == "":
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%w (from --argocd-config or the argocd CLI's default)", err)
	}
	if !required && a.argocdContext == "" {
		// Only the token is wanted: argocd's, for the server given.
		host := strings.TrimPrefix(strings.TrimPrefix(a.server, "https://"), "http://")
		cc, err := cfg.ContextFor(host, path)
		if err != nil || cc == nil || cc.Token == "" {
			return nil, err
		}
		if a.plaintext && !cc.PlainText {
			return nil, fmt.Errorf("the argocd CLI's token for %s (context %q in %s) was given to a server with TLS; driftfix does not send it in clear text with --plaintext: give --argocd-token-file FILE", host, cc.Name, path)
		}
		return &argocd.CLIContext{Name: cc.Name, File: path, Token: cc.Token}, nil
	}
	return cfg.Context(a.argocdContext, path)
}

// snapshotCmd writes the snapshot of one live application.
func (c *cli) snapshotCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot [NAMESPACE/]APP",
		Short: "Write what a diagnosis reads of one live application, as a file to diagnose offline",
		Example: `  driftfix snapshot guestbook -f guestbook.json
  driftfix snapshot team-a/guestbook -o yaml > guestbook.yaml`,
		Args: exactlyOneApp,
	}
	var af argoFlags
	af.register(cmd)
	appNS := addAppNamespace(cmd)
	output := c.addOutput(cmd, "json", "yaml")
	var files []given
	cmd.Flags().VarP(&recorded{name: "output-file", values: &files}, "output-file", "f", "file to write the snapshot to (default: standard output)")
	_ = cmd.MarkFlagFilename("output-file", "json", "yaml", "yml")
	renders := cmd.Flags().Bool("renders", true, "render the application twice more (noCache) to check determinism")
	cmd.RunE = c.runE(func(cmd *cobra.Command, args []string) (int, error) {
		return c.snapshot(args[0], &af, *appNS, output, typedAs(c.args, files, map[string]string{"output-file": "f"}), *renders)
	})
	return cmd
}

// exactlyOneApp accepts one application argument and says what to type
// otherwise.
func exactlyOneApp(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return fmt.Errorf("name the application: %s APP (or NAMESPACE/APP)", cmd.CommandPath())
	case len(args) > 1:
		return fmt.Errorf("unexpected argument %q: give one application", args[1])
	}
	return nil
}

func (c *cli) snapshot(app string, af *argoFlags, appNS string, output *outputs, files []given, renders bool) (int, error) {
	ctx, stdout, stderr := c.ctx, c.stdout, c.stderr
	format, out, err := snapshotOutput(output, files, stderr)
	if err != nil {
		return exitUsage, err
	}
	ns, name, err := appName(app, appNS)
	if err != nil {
		return exitUsage, err
	}
	client, err := af.client()
	if err != nil {
		return exitUsage, err
	}
	s, err := liveSnapshot(ctx, client, ns, name, renders)
	if err != nil {
		return exitUsage, af.explain(err)
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
func snapshotOutput(output *outputs, files []given, stderr io.Writer) (format, file string, err error) {
	for _, f := range files[min(1, len(files)):] {
		if f.value != files[0].value {
			return "", "", fmt.Errorf("%s %q and %s %q disagree: give the file once", flagName(files[0].name), files[0].value, flagName(f.name), f.value)
		}
	}
	if len(files) > 0 {
		file = files[0].value
	}
	var names, values []string
	for _, g := range output.given() {
		names, values = append(names, g.name), append(values, g.value)
	}
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

// scanCmd lists the stuck applications with their causes.
func (c *cli) scanCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scan",
		Short: "List the applications stuck OutOfSync after a successful sync, with their causes",
		Long: `Lists every application that stayed OutOfSync for --stuck-after after a
successful sync, with the causes of its differing fields. Applications
OutOfSync for less time are counted, not diagnosed.`,
		Example: `  driftfix scan
  driftfix scan --stuck-after 0s -o wide
  driftfix scan -l team=payments -p prod -p staging
  driftfix scan -o name | xargs -n1 driftfix diagnose
  argocd driftfix scan      # as the argocd CLI's plugin`,
		Args: noArgs,
	}
	var af argoFlags
	af.register(cmd)
	after := cmd.Flags().Duration("stuck-after", collect.DefaultStuckAfter, "how long an application must stay OutOfSync after a successful sync (0s: at once)")
	output := c.addOutput(cmd, "text", "json", "yaml", "wide", "name")
	alwaysRefresh := cmd.Flags().Bool("always-refresh", false, "refresh every stuck candidate, even one whose Git revision still names the commit Argo CD compared")
	selector := cmd.Flags().StringP("selector", "l", "", "only applications whose labels match this selector (key=value, key!=value, key in (a,b), key), as argocd app list -l")
	projects := cmd.Flags().StringArrayP("project", "p", nil, "only applications of this project (repeatable)")
	appNS := addAppNamespace(cmd)
	cmd.RunE = c.runE(func(cmd *cobra.Command, args []string) (int, error) {
		f, err := listFilter(*selector, *projects, *appNS)
		if err != nil {
			return exitUsage, err
		}
		af.list = f
		return c.scan(&af, *after, output, *alwaysRefresh, c.now())
	})
	return cmd
}

// listFilter checks scan's --selector, --project and --app-namespace before
// they reach argocd-server, each error naming the flag.
func listFilter(selector string, projects []string, ns string) (argocd.ListFilter, error) {
	if _, err := labels.Parse(selector); err != nil {
		return argocd.ListFilter{}, fmt.Errorf("--selector %q: %w", selector, err)
	}
	for _, p := range projects {
		if !dnsSubdomain.MatchString(p) || len(p) > 253 {
			return argocd.ListFilter{}, fmt.Errorf("--project %q: want an Argo CD project name (lower case letters, digits, '-' and '.')", p)
		}
	}
	if ns != "" && (!dnsLabel.MatchString(ns) || len(ns) > 63) {
		return argocd.ListFilter{}, fmt.Errorf("--app-namespace %q: want a Kubernetes namespace (lower case letters, digits and '-')", ns)
	}
	return argocd.ListFilter{Selector: selector, Projects: projects, AppNamespace: ns}, nil
}

// noArgs refuses positional arguments, naming the first.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q: %s takes flags only", args[0], cmd.CommandPath())
	}
	return nil
}

func (c *cli) scan(af *argoFlags, after time.Duration, output *outputs, alwaysRefresh bool, now time.Time) (int, error) {
	ctx, stdout, stderr := c.ctx, c.stdout, c.stderr
	format, err := output.value()
	if err != nil {
		return exitUsage, err
	}
	if after < 0 {
		return exitUsage, fmt.Errorf("--stuck-after %s: want zero or more", after)
	}
	client, err := af.client()
	if err != nil {
		return exitUsage, err
	}
	clusterCtx, err := af.cluster(ctx, stderr)
	if err != nil {
		return exitUsage, err
	}
	opts := collect.ScanOptions{StuckAfter: after, ClusterContext: clusterCtx}
	if af.repoFiles && !alwaysRefresh {
		opts.GitCommit = gitrepo.Reader{}.Resolve
	}
	opts.Diagnose = func(s *drift.Snapshot) (*drift.Report, *drift.Comparison, error) {
		return pipeline.DiagnoseCompared(s, drift.Sensitivity{})
	}
	results, scanned, err := collect.Scan(ctx, client, now, opts)
	if err != nil {
		return exitUsage, af.explain(err)
	}
	rep := newScanReport(results, scanned, now, after)
	switch {
	case format == "name":
		// One NAMESPACE/APP per stuck application, as argocd app list -o
		// name prints them and driftfix diagnose takes them.
		var buf bytes.Buffer
		for _, r := range rep.Stuck {
			fmt.Fprintf(&buf, "%s/%s\n", templates.Terminal(r.Namespace), templates.Terminal(r.Application))
		}
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return exitUsage, fmt.Errorf("write the scan: %w", err)
		}
	case format == "json" || format == "yaml":
		if rep.Stuck == nil {
			rep.Stuck = []scanStuck{}
		}
		var raw []byte
		if format == "yaml" {
			raw, err = jsonAsYAML(rep)
		} else {
			raw, err = indentJSON(rep)
		}
		if err == nil {
			_, err = stdout.Write(raw)
		}
		if err != nil {
			return exitUsage, fmt.Errorf("write the scan: %w", err)
		}
	default:
		rep.writeText(stdout, format == "wide", after)
	}
	if len(rep.Stuck) > 0 {
		return exitDrift, nil
	}
	return exitClean, nil
}

// scanReport is what driftfix scan prints: how many applications it
// scanned, the stuck ones diagnosed, the ones OutOfSync but not stuck, and
// the ones Argo CD cannot compare.
type scanReport struct {
	Scanned       int              `json:"scanned"`
	Stuck         []scanStuck      `json:"stuck"`
	NotYetStuck   []scanWaiting    `json:"outOfSyncNotStuck"`
	CannotCompare []scanUncompared `json:"cannotCompare"`
}

// scanStuck is one stuck application: why it is stuck and its findings by
// cause, or the error that stopped its diagnosis.
type scanStuck struct {
	Application string         `json:"application"`
	Namespace   string         `json:"namespace"`
	Why         string         `json:"why"`
	Causes      map[string]int `json:"causes"`
	Findings    int            `json:"findings"`
	Error       string         `json:"error,omitempty"`
}

// scanUncompared is an application Argo CD cannot compare.
type scanUncompared struct {
	Application string `json:"application"`
	Namespace   string `json:"namespace"`
	SyncStatus  string `json:"syncStatus"`
	Message     string `json:"message"` // Argo CD's, "" when none was read
}

// scanWaiting is an application OutOfSync but not stuck: what the user sees
// in Argo CD and the scan does not diagnose, with why (most often: younger
// than --stuck-after).
type scanWaiting struct {
	Application string `json:"application"`
	Namespace   string `json:"namespace"`
	Why         string `json:"why"`
}

// newScanReport sorts the scanned applications into the report's groups.
func newScanReport(results []collect.ScanResult, scanned []argocd.AppSummary, now time.Time, after time.Duration) scanReport {
	rep := scanReport{Scanned: len(scanned), NotYetStuck: []scanWaiting{}, CannotCompare: []scanUncompared{}}
	for _, a := range scanned {
		if a.CannotCompare {
			rep.CannotCompare = append(rep.CannotCompare, scanUncompared{Application: a.Name, Namespace: a.Namespace, SyncStatus: a.SyncStatus, Message: a.ComparisonError})
		}
	}
	isResult := map[string]bool{}
	for _, sr := range results {
		isResult[sr.App.Namespace+"/"+sr.App.Name] = true
	}
	for _, a := range scanned {
		if a.SyncStatus != "OutOfSync" || a.CannotCompare || isResult[a.Namespace+"/"+a.Name] {
			continue
		}
		_, why := collect.Stuck(a, now, after)
		rep.NotYetStuck = append(rep.NotYetStuck, scanWaiting{Application: a.Name, Namespace: a.Namespace, Why: why})
	}
	for _, sr := range results {
		r := scanStuck{Application: sr.App.Name, Namespace: sr.App.Namespace, Why: sr.Why, Causes: map[string]int{}}
		if sr.Err != nil {
			r.Error = sr.Err.Error()
		} else {
			r.Findings = len(sr.Report.Findings)
			for _, f := range sr.Report.Findings {
				r.Causes[string(f.Cause)]++
			}
		}
		rep.Stuck = append(rep.Stuck, r)
	}
	return rep
}

// causesText is the stuck application's causes with their counts, or its
// error.
func (r scanStuck) causesText() string {
	var cs []string
	for c, n := range r.Causes {
		cs = append(cs, fmt.Sprintf("%s×%d", c, n))
	}
	sort.Strings(cs)
	if r.Error != "" {
		return "error: " + r.Error
	}
	return strings.Join(cs, ", ")
}

// writeText writes the report for a terminal: the counts, the stuck
// applications (a table when wide), the ones not stuck yet and the ones
// Argo CD cannot compare.
func (rep scanReport) writeText(stdout io.Writer, wide bool, after time.Duration) {
	stuck, notStuck, cannot := rep.Stuck, rep.NotYetStuck, rep.CannotCompare
	fmt.Fprintf(stdout, "%d applications scanned, %d stuck OutOfSync", rep.Scanned, len(stuck))
	if len(notStuck) > 0 {
		fmt.Fprintf(stdout, "; %d more OutOfSync but not stuck (yet)", len(notStuck))
	}
	fmt.Fprintln(stdout, ".")
	if len(stuck) > 0 && wide {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nAPPLICATION\tFINDINGS\tCAUSES\tSINCE")
		for _, r := range stuck {
			fmt.Fprintf(tw, "%s/%s\t%d\t%s\t%s\n", templates.Terminal(r.Namespace), templates.Terminal(r.Application), r.Findings, templates.Terminal(r.causesText()), templates.Terminal(r.Why))
		}
		tw.Flush()
	} else if len(stuck) > 0 {
		var buf bytes.Buffer
		for _, r := range stuck {
			fmt.Fprintf(&buf, "\n%s/%s: %d %s\n", templates.Terminal(r.Namespace), templates.Terminal(r.Application), r.Findings, plural(r.Findings, "finding", "findings"))
			writeWrapped(&buf, "  causes  ", templates.Terminal(r.causesText()))
			writeWrapped(&buf, "  since   ", templates.Terminal(r.Why))
		}
		stdout.Write(buf.Bytes())
	}
	if len(notStuck) > 0 {
		var buf bytes.Buffer
		buf.WriteByte('\n')
		writeWrapped(&buf, "", fmt.Sprintf("OutOfSync, not stuck (yet), not diagnosed: --stuck-after %s is the wait after a successful sync; 0s skips it:", after))
		for _, w := range notStuck {
			writeWrapped(&buf, "  "+templates.Terminal(w.Namespace+"/"+w.Application)+": ", templates.Terminal(w.Why))
		}
		stdout.Write(buf.Bytes())
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
