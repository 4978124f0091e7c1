package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/driftfix/driftfix/bot"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/kube"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/secretfile"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/state"
)

// secret returns a secret from a file (trimmed, read again whenever the
// file changes, so a rotated token needs no restart) or an environment
// variable.
func secret(file, env, what string) (func() string, error) {
	if file != "" {
		f, err := secretfile.Open(file)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		return f.Token, nil
	}
	if env != "" {
		v := os.Getenv(env)
		if v == "" {
			return nil, fmt.Errorf("%s: environment variable %s is empty", what, env)
		}
		return func() string { return v }, nil
	}
	return func() string { return "" }, nil
}

// buildRunner makes the bot a policy file describes. Without publishing it
// plans only: no GitHub, Slack or state is touched.
func buildRunner(ctx context.Context, cfg *config.Config, publishing bool, log *slog.Logger) (*bot.Runner, func(), error) {
	r := &bot.Runner{Config: cfg, Log: log, Metrics: bot.NewMetrics(), Charts: botCharts(ctx, newLineLogger(log, slog.LevelWarn))}
	// The GitHub client also reads repositories on its host (a dry run
	// included), so it is made before the instances.
	var gh *github.Client
	var ghKey []byte // the credential gh was made with, which seals the memo
	if g := cfg.GitHub; publishing || g.AppID != 0 || g.TokenFile != "" || g.TokenEnv != "" {
		var err error
		if gh, ghKey, err = gitHub(cfg.GitHub, log); err != nil {
			return nil, nil, err
		}
	}
	access, err := repoAccess(cfg.RepoCredentials, gh)
	if err != nil {
		return nil, nil, err
	}
	git := gitrepo.Reader{Limits: gitrepo.Limits{MaxFetchBytes: cfg.Limits.RepoFetchBytes, MaxTotalBytes: cfg.Limits.RepoBytes}, Access: access}
	notes := newLineLogger(log, slog.LevelWarn) // plain-text notes become log lines
	for _, a := range cfg.ArgoCD {
		in, err := instance(ctx, a, git, notes)
		if err != nil {
			return nil, nil, err
		}
		r.Instances = append(r.Instances, in)
		r.Metrics.Watch("argocd", a.Name, in.Client)
	}
	if !publishing {
		return r, func() {}, nil
	}
	p := &publish.Publisher{Config: cfg, Log: log}
	sl, err := slackNotifier(cfg.Slack, log)
	if err != nil {
		return nil, nil, err
	}
	// The ports: each Git host and notifier is one line here.
	if gh != nil {
		p.Hosts = append(p.Hosts, gh)
		r.Metrics.Watch("github", "", gh)
	}
	if sl != nil {
		p.Notifier = sl
		r.Metrics.Watch("slack", "", sl)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.StateFile), 0o700); err != nil {
		return nil, nil, fmt.Errorf("state directory: %w", err)
	}
	rows, err := rowSeal(ghKey, cfg.Slack, log)
	if err != nil {
		return nil, nil, err
	}
	st, err := state.OpenWith(ctx, cfg.StateFile, state.Options{Log: log, Seal: rows})
	if err != nil {
		return nil, nil, err
	}
	p.Store = st
	r.Metrics.WatchStore(st)
	r.Publisher = p
	r.MemoSeal = memoSeal(ghKey, log)
	return r, func() { st.Close() }, nil
}

// memoSeal seals the diagnoses kept in the state store with the GitHub
// credential (key) and this build's digest (memo.Seal), or is nil
// without a credential: then they are kept in the process only.
func memoSeal(key []byte, log *slog.Logger) *memo.Seal {
	if len(key) == 0 {
		log.Info("no GitHub credential to seal kept diagnoses with: they are kept in the process only")
		return nil
	}
	build, err := memo.BuildDigest()
	if err != nil {
		log.Warn("diagnoses are kept in the process only", "error", err.Error())
		return nil
	}
	seal, err := memo.NewSeal(key, build)
	if err != nil {
		log.Warn("diagnoses are kept in the process only", "error", err.Error())
		return nil
	}
	return &seal
}

// rowSeal seals the state store's rows that lead driftfix to act (queued
// digests, requests, rejections, cooldowns, snoozes) with the GitHub
// credential, as the memo's records, or else the Slack token; without
// either, with a secret of this process only (kept across policy
// reloads), so that no row another process wrote is acted on.
func rowSeal(key []byte, sl config.Slack, log *slog.Logger) (memo.Seal, error) {
	if len(key) == 0 && (sl.TokenFile != "" || sl.TokenEnv != "") {
		tok, err := secret(sl.TokenFile, sl.TokenEnv, "the Slack token")
		if err != nil {
			return memo.Seal{}, err
		}
		key = []byte("slack token\x00" + tok())
	}
	if len(key) > 0 {
		return memo.NewSeal(key, [32]byte{}) // a row's seal does not depend on the build
	}
	processSeal.once.Do(func() {
		log.Info("no GitHub credential or Slack token to seal the state's rows with: queued digests, requests and snoozes are kept for this process only")
		processSeal.seal, processSeal.err = memo.ProcessSeal()
	})
	return processSeal.seal, processSeal.err
}

// processSeal is rowSeal's seal without a credential, one per process.
var processSeal struct {
	once sync.Once
	seal memo.Seal
	err  error
}

// gitHub is the GitHub client the policy configures, and the credential it
// is made with (the App's private key, or the token as read now), or nil
// without credentials.
func gitHub(g config.GitHub, log *slog.Logger) (*github.Client, []byte, error) {
	switch {
	case g.AppID != 0:
		key, err := os.ReadFile(g.PrivateKeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("read the GitHub App's private key: %w", err)
		}
		c, err := github.New(github.Config{AppID: g.AppID, PrivateKey: key, BaseURL: g.BaseURL, Logger: log})
		return c, key, err
	case g.TokenFile != "" || g.TokenEnv != "":
		tok, err := secret(g.TokenFile, g.TokenEnv, "the GitHub token")
		if err != nil {
			return nil, nil, err
		}
		c, err := github.New(github.Config{TokenFunc: tok, BaseURL: g.BaseURL, Logger: log})
		return c, []byte(tok()), err
	}
	log.Warn("no GitHub App or token configured: fixes are planned and reported, no pull request is opened")
	return nil, nil, nil
}

// slackNotifier is the Slack client the policy configures, or nil without a token.
func slackNotifier(s config.Slack, log *slog.Logger) (*slack.Notifier, error) {
	if s.TokenFile == "" && s.TokenEnv == "" {
		return nil, nil
	}
	tok, err := secret(s.TokenFile, s.TokenEnv, "the Slack token")
	if err != nil {
		return nil, err
	}
	return slack.New(slack.Config{TokenFunc: tok, APIURL: s.APIURL, Logger: log})
}

// botFlags are the flags run and once share: the policy file and the log level.
type botFlags struct{ file, level *string }

func registerBotFlags(cmd *cobra.Command, level string) botFlags {
	fs := cmd.Flags()
	b := botFlags{file: fs.String("config", "", "policy file (see deploy/driftfix.example.yaml)"),
		level: fs.String("log-level", level, "debug, info, warn or error")}
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	_ = cmd.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions([]string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
	return b
}

// load makes the logger, routes every other log into it (routeLogs) and
// reads the policy file, after the flags are parsed. A policy it refuses is
// logged, each problem on its own line with the line and key.
func (b botFlags) load(stderr io.Writer) (*config.Config, *slog.Logger, error) {
	log, err := newLogger(stderr, *b.level)
	if err != nil {
		return nil, nil, err
	}
	routeLogs(log)
	if *b.file == "" {
		return nil, nil, fmt.Errorf("--config FILE is required")
	}
	cfg, err := config.Load(*b.file)
	var es config.Errors
	switch {
	case errors.As(err, &es):
		for _, e := range es {
			log.Error("invalid policy", "file", *b.file, "line", e.Line, "key", e.Key, "problem", e.Msg)
		}
		return nil, nil, loggedError{fmt.Errorf("%d %s in %s", len(es), plural(len(es), "problem", "problems"), *b.file)}
	case err != nil:
		log.Error("read the policy", "file", *b.file, "error", err.Error())
		return nil, nil, loggedError{err}
	}
	return cfg, log, nil
}

// runCmd runs cycles on the config's schedule and serves health and metrics.
func (c *cli) runCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "run --config FILE",
		Short:   "Run the bot: cycles on the policy's schedule, /healthz, /readyz and /metrics",
		Example: "  driftfix run --config driftfix.yaml --leader-elect",
		Args:    noArgs,
	}
	fs := cmd.Flags()
	bf := registerBotFlags(cmd, "info")
	listen := fs.String("listen", ":8080", "address of /healthz, /readyz and /metrics")
	dryRun := fs.Bool("dry-run", false, "plan and log, write nothing (no PR, no digest, no state)")
	atStart := fs.Bool("run-at-start", true, "run a cycle at start, then on the schedule")
	leaderElect := fs.Bool("leader-elect", false, "run cycles only while holding a Lease, so several replicas never work at once")
	leaseNS := fs.String("lease-namespace", "", "namespace of the Lease (default: $POD_NAMESPACE, else the service account's)")
	leaseName := fs.String("lease-name", "driftfix", "name of the Lease")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig for the Lease (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	var wh webhookFlags
	wh.register(fs)
	_ = cmd.MarkFlagFilename("webhook-secret-file")
	cmd.RunE = c.runE(func(*cobra.Command, []string) (int, error) {
		return runBot(c.ctx, c.stderr, bf, *listen, *dryRun, *atStart, *leaderElect, *leaseNS, *leaseName, *kubeconfig, wh)
	})
	return cmd
}

func runBot(ctx context.Context, stderr io.Writer, bf botFlags, listen string, dryRun, atStart, leaderElect bool, leaseNS, leaseName, kubeconfig string, wh webhookFlags) (int, error) {
	cfg, log, err := bf.load(stderr)
	if err != nil {
		return exitUsage, err
	}
	// From here on every failure is a log line.
	fail := func(err error) (int, error) {
		log.Error("driftfix run failed", "error", err.Error())
		return exitUsage, loggedError{err}
	}
	r, closeAll, err := buildRunner(ctx, cfg, !dryRun && !cfg.DryRun, log)
	if err != nil {
		return fail(err)
	}
	r.OwnClose(closeAll)
	defer r.Close()
	pw := &policyWatch{file: *bf.file, dryRun: dryRun, log: log, metrics: r.Metrics, used: cfg.Digest}
	r.Reload = pw.reload
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go checkPolicy(ctx, r, wh.policyEvery)
	if err := wh.audit.start(ctx, cfg, log); err != nil {
		return fail(err)
	}
	r.Instances, pw.audit = withAudit(r.Instances, wh.audit.store), wh.audit.store
	var leading atomic.Bool
	leading.Store(!leaderElect)
	whSrv, err := serveWebhooks(ctx, r, wh, &leading, log)
	if err != nil {
		return fail(err)
	}
	auditSrv, err := wh.audit.serveTLS(log)
	if err != nil {
		return fail(err)
	}
	r.RunAtStart = atStart
	r.Metrics.SetBuild(version, buildRevision())
	r.Metrics.SetLeader(!leaderElect)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fail(fmt.Errorf("listen on %s: %w", listen, err))
	}
	var stopping atomic.Bool
	srv := &http.Server{Handler: serveMux(r, &stopping), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	log.Info("driftfix running", "version", version, "revision", buildRevision(), "schedule", cfg.Schedule, "listen", ln.Addr().String(),
		"instances", len(r.Instances), "dry_run", r.Publisher == nil, "leader_elect", leaderElect)
	if leaderElect {
		err = lead(ctx, r, kubeconfig, leaseNS, leaseName, log, &leading)
	} else {
		err = r.Serve(ctx)
	}
	stopping.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if whSrv != nil {
		whSrv.Shutdown(sctx)
	}
	if auditSrv != nil {
		auditSrv.Shutdown(sctx)
	}
	if err != nil {
		return fail(err)
	}
	log.Info("driftfix stopped")
	return exitClean, nil
}

// serveMux serves /healthz (the process answers), /readyz (it is not
// stopping and its last cycle could scan at least one Argo CD instance) and
// /metrics.
func serveMux(r *bot.Runner, stopping *atomic.Bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if stopping.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		h := r.Health()
		switch {
		case h.Down != nil:
			http.Error(w, "not ready: "+h.Down.Error(), http.StatusServiceUnavailable)
		case h.Last.IsZero():
			fmt.Fprintln(w, "ready; no cycle has finished yet")
		default:
			fmt.Fprintf(w, "ready; last cycle finished %s\n", h.Last.UTC().Format(time.RFC3339))
		}
	})
	mux.Handle("/metrics", r.Metrics.Handler())
	return mux
}

// lead runs the bot while this replica holds the Lease.
func lead(ctx context.Context, r *bot.Runner, kubeconfig, namespace, name string, log *slog.Logger, leading *atomic.Bool) error {
	rc, err := kube.RESTConfig(kube.Config{Kubeconfig: kubeconfig})
	if err != nil {
		return fmt.Errorf("--leader-elect: %w", err)
	}
	if namespace == "" {
		namespace = os.Getenv("POD_NAMESPACE")
	}
	if namespace == "" {
		b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
		if err != nil {
			return fmt.Errorf("--leader-elect: give --lease-namespace (no POD_NAMESPACE and no service account namespace)")
		}
		namespace = strings.TrimSpace(string(b))
	}
	host, _ := os.Hostname()
	identity := fmt.Sprintf("%s_%d", host, os.Getpid())
	var serveErr error
	err = kube.Lead(ctx, rc, namespace, name, identity, log, func(lctx context.Context) {
		r.Metrics.SetLeader(true)
		leading.Store(true)
		defer func() { leading.Store(false); r.Metrics.SetLeader(false) }()
		serveErr = r.Serve(lctx)
	})
	if serveErr != nil {
		return serveErr
	}
	return err
}
