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
)

// webhookFlags are run's flags for GitHub's webhook deliveries and for
// reading a changed policy.
type webhookFlags struct {
	secretFile, secretEnv, listen string
	maxBody                       int64
	queue                         int
	pushDelay, policyEvery        time.Duration
	argo                          watchFlags
}

func (w *webhookFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&w.secretFile, "webhook-secret-file", "", "the GitHub App's webhook secret (a file, read again when it changes): serves GitHub's deliveries on --webhook-listen; without it (or --webhook-secret-env) driftfix only polls")
	fs.StringVar(&w.secretEnv, "webhook-secret-env", "", "environment variable holding the webhook secret, instead of --webhook-secret-file")
	fs.StringVar(&w.listen, "webhook-listen", ":8081", "address of the webhook receiver, POST /webhook (expose only this port to GitHub)")
	fs.Int64Var(&w.maxBody, "webhook-max-body", events.DefaultMaxBody, "largest delivery read, in bytes (larger is refused with 413)")
	fs.IntVar(&w.queue, "webhook-queue", events.DefaultQueueSize, "most units of work waiting; a delivery beyond it is refused with 503 and the next cycle catches up")
	fs.DurationVar(&w.pushDelay, "push-delay", bot.DefaultPushDelay, "after a push to a branch an application tracks, wait this long (for Argo CD to compare the commit) before the cycle that re-checks it")
	fs.DurationVar(&w.policyEvery, "policy-check", 5*time.Second, "how often the policy file is compared with the one in use (also at each cycle and unit of work)")
	w.argo.register(fs)
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
// --argocd-watch=false), and the receiver of GitHub's deliveries and of
// Argo CD's notifications when a secret for them is configured; the
// server is nil without one.
func serveWebhooks(ctx context.Context, r *bot.Runner, w webhookFlags, leading *atomic.Bool, log *slog.Logger) (*http.Server, error) {
	gitHub := w.secretFile != "" || w.secretEnv != ""
	if w.secretFile != "" && w.secretEnv != "" {
		return nil, errors.New("give --webhook-secret-file or --webhook-secret-env, not both")
	}
	notify, err := w.argo.notifySecret()
	if err != nil {
		return nil, err
	}
	q := &events.Queue{Handler: leaderOnly{r, leading, log}, Max: w.queue, Log: log}
	if gitHub || notify != nil || w.argo.watch {
		go q.Run(ctx)
	}
	if w.argo.watch {
		go watchArgoCD(ctx, r, q, w.argo, leading, log)
	}
	if !gitHub && notify == nil {
		log.Info("no webhook secret configured (--webhook-secret-file): driftfix polls GitHub on its schedule only")
		return nil, nil
	}
	mux := http.NewServeMux()
	paths := []string{}
	if gitHub {
		sec, err := secret(w.secretFile, w.secretEnv, "the webhook secret")
		if err != nil {
			return nil, err
		}
		if sec() == "" {
			return nil, fmt.Errorf("the webhook secret in %s is empty", w.secretFile)
		}
		r.SetPushDelay(w.pushDelay)
		rc := &events.Receiver{Secret: sec, MaxBody: w.maxBody, Deliveries: r, Watches: r.Watches, Queue: q, Log: log, Seen: r.Metrics.Delivery}
		mux.Handle("/webhook", rc)
		paths = append(paths, "/webhook")
	}
	if notify != nil {
		mux.Handle("/argocd", &events.Notifications{Secret: notify, Instances: func() []string { return instanceNames(r) }, Queue: q, Log: log, Seen: r.Metrics.Delivery})
		paths = append(paths, "/argocd")
	}
	ln, err := net.Listen("tcp", w.listen)
	if err != nil {
		return nil, fmt.Errorf("--webhook-listen %s: %w", w.listen, err)
	}
	mux.HandleFunc("/", func(rw http.ResponseWriter, _ *http.Request) {
		http.Error(rw, "driftfix receives GitHub's webhook deliveries at POST /webhook and Argo CD's notifications at POST /argocd (each when its secret is configured)", http.StatusNotFound)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	log.Info("webhook receiver listening", "listen", ln.Addr().String(), "paths", strings.Join(paths, ","))
	return srv, nil
}
