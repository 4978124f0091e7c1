package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/driftfix/driftfix/bot"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/kube"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/secretfile"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/state"
	"k8s.io/klog/v2"
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
func buildRunner(ctx context.Context, cfg *config.Config, publishing bool, log *slog.Logger, stderr io.Writer) (*bot.Runner, func(), error) {
	r := &bot.Runner{Config: cfg, Log: log, Metrics: bot.NewMetrics()}
	// The GitHub client also reads repositories on its host (a dry run
	// included), so it is made before the instances.
	var gh *github.Client
	if g := cfg.GitHub; publishing || g.AppID != 0 || g.TokenFile != "" || g.TokenEnv != "" {
		var err error
		if gh, err = gitHub(cfg.GitHub, log); err != nil {
			return nil, nil, err
		}
	}
	access, err := repoAccess(cfg.RepoCredentials, gh)
	if err != nil {
		return nil, nil, err
	}
	git := gitrepo.Reader{Limits: cycle.GitLimits(cfg.Limits), Access: access}
	for _, a := range cfg.ArgoCD {
		in, err := instance(ctx, a, git, stderr)
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
	st, err := state.OpenWith(ctx, cfg.StateFile, state.Options{Log: log})
	if err != nil {
		return nil, nil, err
	}
	p.Store = st
	r.Publisher = p
	return r, func() { st.Close() }, nil
}

// gitHub is the GitHub client the policy configures, or nil without
// credentials.
func gitHub(g config.GitHub, log *slog.Logger) (*github.Client, error) {
	switch {
	case g.AppID != 0:
		key, err := os.ReadFile(g.PrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("read the GitHub App's private key: %w", err)
		}
		return github.New(github.Config{AppID: g.AppID, PrivateKey: key, BaseURL: g.BaseURL, Logger: log})
	case g.TokenFile != "" || g.TokenEnv != "":
		tok, err := secret(g.TokenFile, g.TokenEnv, "the GitHub token")
		if err != nil {
			return nil, err
		}
		return github.New(github.Config{TokenFunc: tok, BaseURL: g.BaseURL, Logger: log})
	}
	log.Warn("no GitHub App or token configured: fixes are planned and reported, no pull request is opened")
	return nil, nil
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

func registerBotFlags(fs *flag.FlagSet, level string) botFlags {
	return botFlags{file: fs.String("config", "", "policy file (see deploy/driftfix.example.yaml)"),
		level: fs.String("log-level", level, "debug, info, warn or error")}
}

// load reads the policy file and makes the logger, after the flags are parsed.
func (b botFlags) load(stderr io.Writer) (*config.Config, *slog.Logger, error) {
	if *b.file == "" {
		return nil, nil, fmt.Errorf("--config FILE is required")
	}
	cfg, err := config.Load(*b.file)
	if err != nil {
		return nil, nil, err
	}
	log, err := newLogger(stderr, *b.level)
	if err != nil {
		return nil, nil, err
	}
	return cfg, log, nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// cmdRun runs cycles on the config's schedule and serves health and metrics.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bf := registerBotFlags(fs, "info")
	listen := fs.String("listen", ":8080", "address of /healthz, /readyz and /metrics")
	dryRun := fs.Bool("dry-run", false, "plan and log, write nothing (no PR, no digest, no state)")
	atStart := fs.Bool("run-at-start", true, "run a cycle at start, then on the schedule")
	leaderElect := fs.Bool("leader-elect", false, "run cycles only while holding a Lease, so several replicas never work at once")
	leaseNS := fs.String("lease-namespace", "", "namespace of the Lease (default: $POD_NAMESPACE, else the service account's)")
	leaseName := fs.String("lease-name", "driftfix", "name of the Lease")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig for the Lease (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	if err := fs.Parse(args); err != nil {
		return exitUsage, err
	}
	cfg, log, err := bf.load(stderr)
	if err != nil {
		return exitUsage, err
	}
	r, closeAll, err := buildRunner(ctx, cfg, !*dryRun && !cfg.DryRun, log, stderr)
	if err != nil {
		return exitUsage, err
	}
	defer closeAll()
	r.RunAtStart = *atStart
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return exitUsage, fmt.Errorf("listen on %s: %w", *listen, err)
	}
	var stopping atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if stopping.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		last := r.LastCycle()
		if last.IsZero() {
			fmt.Fprintln(w, "ready; no cycle has finished yet")
			return
		}
		fmt.Fprintf(w, "ready; last cycle finished %s\n", last.UTC().Format(time.RFC3339))
	})
	mux.Handle("/metrics", r.Metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	log.Info("driftfix running", "version", version, "schedule", cfg.Schedule, "listen", ln.Addr().String(), "instances", len(r.Instances), "dry_run", r.Publisher == nil)
	if *leaderElect {
		err = lead(ctx, r, *kubeconfig, *leaseNS, *leaseName, log)
	} else {
		err = r.Serve(ctx)
	}
	stopping.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if err != nil {
		return exitUsage, err
	}
	log.Info("driftfix stopped")
	return exitClean, nil
}

// lead runs the bot while this replica holds the Lease.
func lead(ctx context.Context, r *bot.Runner, kubeconfig, namespace, name string, log *slog.Logger) error {
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
	klog.SetSlogLogger(log) // client-go's leader election logs as driftfix does
	host, _ := os.Hostname()
	identity := fmt.Sprintf("%s_%d", host, os.Getpid())
	var serveErr error
	err = kube.Lead(ctx, rc, namespace, name, identity, log, func(lctx context.Context) { serveErr = r.Serve(lctx) })
	if serveErr != nil {
		return serveErr
	}
	return err
}
