package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/spf13/pflag"

	"github.com/driftfix/driftfix/bot/audit"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/drift"
)

// auditPath is where the API server's audit webhook backend posts.
const auditPath = "/audit"

// auditFlags are run's flags for the API server's audit events
// (docs/audit.md); the policy's audit key bounds what is kept.
type auditFlags struct {
	tokenFile, tokenEnv, logFile string
	maxBody                      int64
	fromStart                    bool

	store *audit.Store // made by start
}

func (a *auditFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&a.tokenFile, "audit-token-file", "", "the bearer token in the kubeconfig of the API server's audit webhook (a file, read again when it changes): serves POST "+auditPath+" on --webhook-listen")
	fs.StringVar(&a.tokenEnv, "audit-token-env", "", "environment variable holding the audit webhook's token, instead of --audit-token-file")
	fs.StringVar(&a.logFile, "audit-log-file", "", "an audit log file to follow, as the API server writes it in JSON lines (rotation-safe)")
	fs.Int64Var(&a.maxBody, "audit-max-body", audit.DefaultMaxBody, "largest audit batch read, in bytes (larger is refused with 413)")
	fs.BoolVar(&a.fromStart, "audit-log-from-start", false, "read --audit-log-file from its start, not its end")
}

func (a *auditFlags) enabled() bool { return a.tokenFile != "" || a.tokenEnv != "" || a.logFile != "" }

// auditOptions are the store's bounds the policy says.
func auditOptions(c config.Audit) audit.Options {
	return audit.Options{Retention: c.Retention, MaxRecords: c.MaxRecords, MaxBytes: c.MaxBytes}
}

// start makes the store and follows the log file until ctx ends; nothing
// without an audit flag.
func (a *auditFlags) start(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	if !a.enabled() {
		return nil
	}
	if a.tokenFile != "" && a.tokenEnv != "" {
		return errors.New("give --audit-token-file or --audit-token-env, not both")
	}
	a.store = audit.NewStore(auditOptions(cfg.Audit))
	if a.logFile != "" {
		go func() {
			err := audit.Follow(ctx, a.logFile, a.store, audit.FollowOptions{FromStart: a.fromStart, Log: log})
			if err != nil && !errors.Is(err, context.Canceled) {
				log.Error("the audit log is no longer read: diagnoses go on without it", "error", err.Error())
			}
		}()
	}
	log.Info("audit events are read", "webhook", a.tokenFile != "" || a.tokenEnv != "", "log_file", a.logFile)
	return nil
}

// handler is the webhook backend's receiver, nil without a token.
func (a *auditFlags) handler(log *slog.Logger) (http.Handler, error) {
	if a.store == nil || (a.tokenFile == "" && a.tokenEnv == "") {
		return nil, nil
	}
	tok, err := secret(a.tokenFile, a.tokenEnv, "the audit webhook's token")
	if err != nil {
		return nil, err
	}
	if tok() == "" {
		return nil, fmt.Errorf("the audit webhook's token in %s%s is empty", a.tokenFile, a.tokenEnv)
	}
	return &audit.Handler{Token: tok, MaxBody: a.maxBody, Store: a.store, Log: log}, nil
}

// withAudit makes each instance's cluster context carry the kept writes of
// a snapshot's objects (audit.Store.Context), which the classifiers match
// to their managedFields; instances are returned unchanged without a store.
func withAudit(ins []cycle.Instance, st *audit.Store) []cycle.Instance {
	if st == nil {
		return ins
	}
	out := make([]cycle.Instance, len(ins))
	for i, in := range ins {
		read, static := in.ReadCluster, in.Cluster
		in.ReadCluster = func(ctx context.Context) (func(*drift.Snapshot) []drift.Object, error) {
			cluster := static
			if read != nil {
				c, err := read(ctx)
				if err != nil {
					return nil, err
				}
				cluster = c
			}
			return func(s *drift.Snapshot) []drift.Object {
				var objs []drift.Object
				if cluster != nil {
					objs = cluster(s)
				}
				if o := st.Context(s); o != nil {
					objs = append(objs[:len(objs):len(objs)], o)
				}
				return objs
			}, nil
		}
		out[i] = in
	}
	return out
}
