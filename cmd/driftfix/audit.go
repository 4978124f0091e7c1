package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/driftfix/driftfix/bot/audit"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/plan"
)

// auditPath is where the API server's audit webhook backend posts.
const auditPath = "/audit"

// auditFlags are run's flags for the API server's audit events
// (docs/audit.md); the policy's audit key bounds what is kept.
type auditFlags struct {
	tokenFile, tokenEnv, logFile string
	maxBody                      int64
	fromStart                    bool
	// listen, certFile and keyFile serve the receiver over TLS on its own
	// address (the API server sends a token or a client certificate only
	// over HTTPS); clientCA and clientNames accept its client certificate.
	listen, certFile, keyFile, clientCA string
	clientNames                         []string

	store *audit.Store // made by start
}

func (a *auditFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&a.tokenFile, "audit-token-file", "", "the bearer token in the kubeconfig of the API server's audit webhook (a file, read again when it changes): serves POST "+auditPath+" on --webhook-listen, or over TLS on --audit-listen with --audit-tls-cert-file")
	fs.StringVar(&a.tokenEnv, "audit-token-env", "", "environment variable holding the audit webhook's token, instead of --audit-token-file")
	fs.StringVar(&a.logFile, "audit-log-file", "", "an audit log file to follow, as the API server writes it in JSON lines (rotation-safe)")
	fs.Int64Var(&a.maxBody, "audit-max-body", audit.DefaultMaxBody, "largest audit batch read, in bytes (larger is refused with 413)")
	fs.BoolVar(&a.fromStart, "audit-log-from-start", false, "read --audit-log-file from its start, not its end")
	fs.StringVar(&a.certFile, "audit-tls-cert-file", "", "serve POST "+auditPath+" over TLS on --audit-listen with this certificate (PEM); without it the receiver is plain HTTP on --webhook-listen, for a TLS proxy in front")
	fs.StringVar(&a.keyFile, "audit-tls-key-file", "", "the private key of --audit-tls-cert-file (PEM)")
	fs.StringVar(&a.listen, "audit-listen", ":8444", "address of the TLS audit receiver (with --audit-tls-cert-file)")
	fs.StringVar(&a.clientCA, "audit-client-ca-file", "", "accept the API server's client certificate signed by these CAs (PEM), instead of or beside the token (with --audit-tls-cert-file)")
	fs.StringSliceVar(&a.clientNames, "audit-client-name", []string{"kube-apiserver"}, "common names of the client certificates --audit-client-ca-file accepts")
}

func (a *auditFlags) enabled() bool {
	return a.tokenFile != "" || a.tokenEnv != "" || a.logFile != "" || a.certFile != ""
}

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
	log.Info("audit events are read", "webhook", a.tokenFile != "" || a.tokenEnv != "" || a.certFile != "", "log_file", a.logFile)
	return nil
}

// receiver is the webhook backend's receiver, nil without a token or a
// client certificate check.
func (a *auditFlags) receiver(log *slog.Logger) (*audit.Handler, error) {
	if a.store == nil {
		return nil, nil
	}
	h := &audit.Handler{MaxBody: a.maxBody, Store: a.store, Log: log}
	if a.tokenFile != "" || a.tokenEnv != "" {
		tok, err := secret(a.tokenFile, a.tokenEnv, "the audit webhook's token")
		if err != nil {
			return nil, err
		}
		if tok() == "" {
			return nil, fmt.Errorf("the audit webhook's token in %s%s is empty", a.tokenFile, a.tokenEnv)
		}
		h.Token = tok
	}
	if a.clientCA != "" {
		names := map[string]bool{}
		for _, n := range a.clientNames {
			names[n] = true
		}
		h.ClientCert = func(cn string) bool { return names[cn] }
	}
	if h.Token == nil && h.ClientCert == nil {
		if a.certFile != "" {
			return nil, errors.New("--audit-tls-cert-file needs --audit-token-file (or --audit-token-env) or --audit-client-ca-file: the receiver takes no unauthenticated events")
		}
		return nil, nil
	}
	if h.ClientCert != nil && a.certFile == "" {
		return nil, errors.New("--audit-client-ca-file needs --audit-tls-cert-file: client certificates are checked over TLS")
	}
	return h, nil
}

// handler is the receiver served on --webhook-listen (plain HTTP, for a
// TLS proxy in front), nil when it has its own TLS listener or none.
func (a *auditFlags) handler(log *slog.Logger) (http.Handler, error) {
	if a.certFile != "" {
		return nil, nil
	}
	h, err := a.receiver(log)
	if h == nil || err != nil {
		return nil, err
	}
	return h, nil
}

// serveTLS serves the receiver over TLS on --audit-listen, nil without
// --audit-tls-cert-file.
func (a *auditFlags) serveTLS(log *slog.Logger) (*http.Server, error) {
	if a.certFile == "" {
		return nil, nil
	}
	h, err := a.receiver(log)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(a.certFile, a.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--audit-tls-cert-file: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if a.clientCA != "" {
		pem, err := os.ReadFile(a.clientCA)
		if err != nil {
			return nil, fmt.Errorf("--audit-client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--audit-client-ca-file %s: no PEM certificate in it", a.clientCA)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	ln, err := net.Listen("tcp", a.listen)
	if err != nil {
		return nil, fmt.Errorf("--audit-listen %s: %w", a.listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle(auditPath, h)
	srv := &http.Server{Handler: mux, TLSConfig: cfg, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go srv.ServeTLS(ln, "", "")
	log.Info("audit receiver listening over TLS", "listen", ln.Addr().String(), "path", auditPath, "token", h.Token != nil, "client_certificates", h.ClientCert != nil)
	return srv, nil
}

// withAudit makes each instance's cluster context carry the kept writes of
// a snapshot's objects (audit.Store.Context), which the classifiers match
// to their managedFields; instances are returned unchanged without a store.
func withAudit(ins []plan.Instance, st *audit.Store) []plan.Instance {
	if st == nil {
		return ins
	}
	out := make([]plan.Instance, len(ins))
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
