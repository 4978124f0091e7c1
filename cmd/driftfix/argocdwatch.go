package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/driftfix/driftfix/bot"
	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/plan"
)

// watchFlags are run's flags for Argo CD's application watch stream and
// Argo CD Notifications.
type watchFlags struct {
	watch                 bool
	relist                time.Duration
	notifyFile, notifyEnv string
}

func (w *watchFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&w.watch, "argocd-watch", true, "follow each Argo CD instance's application watch stream: an application that turns OutOfSync after a sync is re-checked at once, and cycles read only what changed; a refused stream leaves the list polled")
	fs.DurationVar(&w.relist, "argocd-relist", time.Hour, "with the watch stream, read the application list whole at least this often")
	fs.StringVar(&w.notifyFile, "argocd-notify-secret-file", "", "shared secret Argo CD Notifications sends in the X-Driftfix-Secret header (a file, read again when it changes): serves POST /argocd on --webhook-listen (deploy/argocd/)")
	fs.StringVar(&w.notifyEnv, "argocd-notify-secret-env", "", "environment variable holding that secret, instead of --argocd-notify-secret-file")
}

// notifySecret is the notification secret, or nil when none is configured.
func (w watchFlags) notifySecret() (func() string, error) {
	if w.notifyFile == "" && w.notifyEnv == "" {
		return nil, nil
	}
	if w.notifyFile != "" && w.notifyEnv != "" {
		return nil, errors.New("give --argocd-notify-secret-file or --argocd-notify-secret-env, not both")
	}
	sec, err := secret(w.notifyFile, w.notifyEnv, "the Argo CD notification secret")
	if err != nil {
		return nil, err
	}
	if sec() == "" {
		return nil, errors.New("the Argo CD notification secret is empty")
	}
	return sec, nil
}

func instanceNames(r *bot.Runner) []string {
	var names []string
	for _, in := range r.ArgoCD() {
		names = append(names, in.Name)
	}
	return names
}

// watchArgoCD follows the watch stream of each instance the runner scans,
// queueing an App unit for each application that turns OutOfSync after a
// sync, until ctx ends, while this replica leads (nil: always). A policy
// reload that replaces the instances replaces their watchers.
func watchArgoCD(ctx context.Context, r *bot.Runner, q *events.Queue, f watchFlags, leading *atomic.Bool, log *slog.Logger) {
	var stop context.CancelFunc
	var watched []*argocd.Client
	check := time.NewTicker(10 * time.Second)
	defer check.Stop()
	for {
		// Only the replica that runs cycles follows the streams: a
		// standby would hold them open for nothing.
		var ins []plan.Instance
		if leading == nil || leading.Load() {
			ins = r.ArgoCD()
		}
		if !sameClients(ins, watched) {
			if stop != nil {
				stop()
			}
			var wctx context.Context
			wctx, stop = context.WithCancel(ctx)
			watched = watched[:0]
			for _, in := range ins {
				watched = append(watched, in.Client)
				go (&argocd.Watcher{Client: in.Client, Instance: in.Name, Log: log, Relist: f.relist,
					State: func(s string) { r.Metrics.WatchState(in.Name, s) },
					OutOfSync: func(a argocd.AppSummary) {
						w := events.Work{Kind: events.App, App: plan.AppKey(in.Name, a.Namespace, a.Name), At: a.OperationFinished, Delivery: "argocd watch"}
						if _, err := q.Add(w); err != nil {
							log.Warn("application event dropped: the next cycle catches up", "app", w.App, "error", err.Error())
						}
					}}).Run(wctx)
			}
		}
		select {
		case <-ctx.Done():
			if stop != nil {
				stop()
			}
			return
		case <-check.C:
		}
	}
}

func sameClients(ins []plan.Instance, watched []*argocd.Client) bool {
	if len(ins) != len(watched) {
		return false
	}
	for i, in := range ins {
		if in.Client != watched[i] {
			return false
		}
	}
	return true
}
