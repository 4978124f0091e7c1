package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/driftfix/driftfix/bot"
	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/slack"
)

// webhookFlags are run's flags for GitHub's webhook deliveries and for
// reading a changed policy.
type webhookFlags struct {
	secretFile, secretEnv, listen string
	maxBody                       int64
	queue                         int
	pushDelay, policyEvery        time.Duration
	// slackSecretFile and slackSecretEnv hold the Slack app's signing
	// secret: with one, the digest's buttons are served at /slack/actions.
	slackSecretFile, slackSecretEnv string
	slackMaxBody                    int64
	argo                            watchFlags
	audit                           auditFlags
}

func (w *webhookFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&w.secretFile, "webhook-secret-file", "", "the GitHub App's webhook secret (a file, read again when it changes): serves GitHub's deliveries on --webhook-listen; without it (or --webhook-secret-env) driftfix only polls")
	fs.StringVar(&w.secretEnv, "webhook-secret-env", "", "environment variable holding the webhook secret, instead of --webhook-secret-file")
	fs.StringVar(&w.listen, "webhook-listen", ":8081", "address of the webhook receiver, POST /webhook (expose only this port to GitHub)")
	fs.Int64Var(&w.maxBody, "webhook-max-body", events.DefaultMaxBody, "largest delivery read, in bytes (larger is refused with 413)")
	fs.IntVar(&w.queue, "webhook-queue", events.DefaultQueueSize, "most units of work waiting; a delivery beyond it is refused with 503 and the next cycle catches up")
	fs.DurationVar(&w.pushDelay, "push-delay", bot.DefaultPushDelay, "after a push to a branch an application tracks, wait this long (for Argo CD to compare the commit) before the cycle that re-checks it")
	fs.DurationVar(&w.policyEvery, "policy-check", 5*time.Second, "how often the policy file is compared with the one in use (also at each cycle and unit of work)")
	fs.StringVar(&w.slackSecretFile, "slack-signing-secret-file", "", "the Slack app's signing secret (a file, read again when it changes): serves the digest's buttons at POST /slack/actions on --webhook-listen")
	fs.StringVar(&w.slackSecretEnv, "slack-signing-secret-env", "", "environment variable holding the Slack signing secret, instead of --slack-signing-secret-file")
	fs.Int64Var(&w.slackMaxBody, "slack-max-body", slack.DefaultMaxInteraction, "largest Slack interactivity request read, in bytes (larger is refused with 413)")
	w.argo.register(fs)
	w.audit.register(fs)
}

// checkPolicy compares the policy file with the one in use every interval
// until ctx ends, so a refused change is reported without waiting for a
// cycle.
func checkPolicy(ctx context.Context, r *bot.Runner, every time.Duration) {
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.CheckPolicy(ctx)
		}
	}
}

// leaderOnly does work only while this replica runs cycles: another
// replica's deliveries are left to the leader's next cycle.
type leaderOnly struct {
	r       *bot.Runner
	leading *atomic.Bool
	log     *slog.Logger
}

func (l leaderOnly) Do(ctx context.Context, w events.Work) error {
	if !l.leading.Load() {
		l.log.Info("event left to the leader's next cycle: this replica does not hold the Lease", "work", w.String(), "delivery", w.Delivery)
		return nil
	}
	return l.r.Do(ctx, w)
}

// serveWebhooks starts the work queue, the Argo CD watch streams (unless
// --argocd-watch=false), and the receiver of GitHub's deliveries, Slack's
// button presses and Argo CD's notifications, each when its secret is
// configured; the server is nil without any.
func serveWebhooks(ctx context.Context, r *bot.Runner, w webhookFlags, leading *atomic.Bool, log *slog.Logger) (*http.Server, error) {
	hooks := w.secretFile != "" || w.secretEnv != ""
	buttons := w.slackSecretFile != "" || w.slackSecretEnv != ""
	if !hooks {
		log.Info("no webhook secret configured (--webhook-secret-file): driftfix polls GitHub on its schedule only")
	}
	if people, groups := r.SlackActors(); !buttons && len(people)+len(groups) > 0 {
		log.Warn("the policy names who may press the digest's buttons (slack.people, slack.actors.userGroups) but no Slack signing secret is configured (--slack-signing-secret-file): the buttons are shown and every press fails")
	}
	notify, err := w.argo.notifySecret()
	if err != nil {
		return nil, err
	}
	auditH, err := w.audit.handler(log)
	if err != nil {
		return nil, err
	}
	q := &events.Queue{Handler: leaderOnly{r, leading, log}, Max: w.queue, Log: log}
	if !hooks && !buttons && notify == nil && auditH == nil {
		if w.argo.watch {
			go q.Run(ctx)
			go watchArgoCD(ctx, r, q, w.argo, leading, log)
		}
		return nil, nil
	}
	r.SetPushDelay(w.pushDelay)
	mux := http.NewServeMux()
	var paths []string
	if hooks {
		if w.secretFile != "" && w.secretEnv != "" {
			return nil, errors.New("give --webhook-secret-file or --webhook-secret-env, not both")
		}
		sec, err := secret(w.secretFile, w.secretEnv, "the webhook secret")
		if err != nil {
			return nil, err
		}
		if sec() == "" {
			return nil, fmt.Errorf("the webhook secret in %s is empty", w.secretFile)
		}
		mux.Handle("/webhook", &events.Receiver{Secret: sec, MaxBody: w.maxBody, Deliveries: r, Watches: r.Watches, Queue: q, Log: log, Seen: r.Metrics.Delivery})
		paths = append(paths, "/webhook")
	}
	if buttons {
		in, err := slackButtons(r, q, w, leading, log)
		if err != nil {
			return nil, err
		}
		mux.Handle(slackActionsPath, in)
		paths = append(paths, slackActionsPath)
	}
	if notify != nil {
		mux.Handle("/argocd", &events.Notifications{Secret: notify, Instances: func() []string { return instanceNames(r) }, Queue: q, Log: log, Seen: r.Metrics.Delivery})
		paths = append(paths, "/argocd")
	}
	if auditH != nil {
		mux.Handle(auditPath, auditH)
		paths = append(paths, auditPath)
	}
	ln, err := net.Listen("tcp", w.listen)
	if err != nil {
		return nil, fmt.Errorf("--webhook-listen %s: %w", w.listen, err)
	}
	go q.Run(ctx)
	if w.argo.watch {
		go watchArgoCD(ctx, r, q, w.argo, leading, log)
	}
	mux.HandleFunc("/", func(rw http.ResponseWriter, _ *http.Request) {
		http.Error(rw, "driftfix receives GitHub's webhook deliveries at POST /webhook, Slack's button presses at POST "+slackActionsPath+" and Argo CD's notifications at POST /argocd and the API server's audit events at POST "+auditPath+" (each when its secret is configured)", http.StatusNotFound)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	log.Info("webhook receiver listening", "listen", ln.Addr().String(), "paths", strings.Join(paths, ","), "github", hooks, "slack_buttons", buttons, "argocd_notifications", notify != nil, "audit", auditH != nil)
	return srv, nil
}

// slackActionsPath is where Slack's interactivity requests come (the Slack
// app's Interactivity Request URL).
const slackActionsPath = "/slack/actions"

// slackButtons serves the digest's buttons, checked with the Slack app's
// signing secret.
func slackButtons(r *bot.Runner, q *events.Queue, w webhookFlags, leading *atomic.Bool, log *slog.Logger) (*slack.Interactions, error) {
	if w.slackSecretFile != "" && w.slackSecretEnv != "" {
		return nil, errors.New("give --slack-signing-secret-file or --slack-signing-secret-env, not both")
	}
	sec, err := secret(w.slackSecretFile, w.slackSecretEnv, "the Slack signing secret")
	if err != nil {
		return nil, err
	}
	if sec() == "" {
		return nil, fmt.Errorf("the Slack signing secret in %s is empty", w.slackSecretFile)
	}
	in := &slack.Interactions{Secret: sec, MaxBody: w.slackMaxBody, Actors: r.SlackActors, Actions: bot.SlackActions{Runner: r, Queue: q, Leading: leading.Load}, Log: log, Seen: r.Metrics.SlackPress}
	people, groups := r.SlackActors()
	// The bot token reads user groups' members (usergroups:read).
	if in.Slack, err = slackNotifier(r.Config.Slack, log); err != nil && len(groups) > 0 {
		return nil, fmt.Errorf("slack.actors.userGroups: %w", err)
	}
	if len(people)+len(groups) == 0 {
		log.Warn("the Slack signing secret is set but the policy names nobody who may press the digest's buttons (slack.people, slack.actors.userGroups): every press is refused")
	}
	return in, nil
}
