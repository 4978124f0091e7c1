// Package argocd reads applications from argocd-server's REST API, with small
// types for only what driftfix uses. It never writes: listing, getting,
// managed resources, manifests, settings and events are all GETs.
package argocd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Config says how to reach argocd-server.
type Config struct {
	// BaseURL is the server's address, e.g. https://argocd.example.com.
	BaseURL string
	// Token is a bearer token of an account with `applications, get`.
	Token string
	// TokenFunc, when set, is asked for the token on every request (a token
	// file read again when it changes, so rotation needs no restart); it
	// replaces Token.
	TokenFunc func() string
	// CAFile is a PEM bundle to trust for a server with its own CA.
	CAFile string
	// Insecure skips TLS verification (self-signed test servers only).
	Insecure bool
	// ClientCert and ClientKey are a PEM client certificate and its key, for
	// an argocd-server that asks for one (argocd --client-crt).
	ClientCert, ClientKey []byte
	// Timeout bounds each request (default 30s).
	Timeout time.Duration
	// Retries is how often a 5xx or connection error is retried (default 3).
	Retries int
	// Backoff is the first wait between retries, doubled each time (default 500ms).
	Backoff time.Duration
	// HTTPClient replaces the client built from the fields above.
	HTTPClient *http.Client
	// Logger receives one line per retried call; the token is never logged.
	Logger *slog.Logger
	// List narrows ListApplications on the server, as `argocd app list`
	// narrows it.
	List ListFilter
}

// ListFilter is what argocd-server's application list is narrowed by: its
// selector, projects and appNamespace query parameters.
type ListFilter struct {
	// Selector is a Kubernetes label selector on the Applications.
	Selector string
	// Projects keeps the applications of these projects only.
	Projects []string
	// AppNamespace keeps the applications of this namespace only.
	AppNamespace string
}

// addTo sets the filter as the list and the watch stream take it: selector,
// projects (repeated) and appNamespace query parameters.
func (f ListFilter) addTo(q url.Values) {
	if f.Selector != "" {
		q.Set("selector", f.Selector)
	}
	for _, p := range f.Projects {
		q.Add("projects", p)
	}
	if f.AppNamespace != "" {
		q.Set("appNamespace", f.AppNamespace)
	}
}

// Client is an argocd-server REST client.
type Client struct {
	filter  ListFilter
	base    *url.URL
	token   func() string
	http    *http.Client
	retries int
	backoff time.Duration
	log     *slog.Logger

	mu    sync.Mutex
	calls map[string]int
	errs  map[string]int
	// listed are the summaries of the last list (shared with the caller,
	// who does not change them), each with the digest of the item it was
	// read from (AppSummary.Listed): an item listed again byte for byte is
	// not decoded again.
	listed []AppSummary
	// header is what every call sends, for the token headerToken: built
	// once per token, and only read after.
	header      http.Header
	headerToken string
	// watch is what the application watch stream keeps between lists
	// (watch.go); nil while no Watcher runs.
	watch *watchState
	// only is the one application a client from Only lists; fresh
	// (namespace, name) the one it reads again when it lists.
	only  []AppSummary
	fresh [2]string
}

// Errors a caller branches on.
var (
	ErrUnauthorized = errors.New("argocd: the token was rejected")
	ErrForbidden    = errors.New("argocd: permission denied")
	ErrNotFound     = errors.New("argocd: not found")
)

// New builds a client from cfg.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("argocd: server URL %q must look like https://argocd.example.com", cfg.BaseURL)
	}
	if cfg.TokenFunc == nil {
		tok := cfg.Token
		cfg.TokenFunc = func() string { return tok }
	}
	if cfg.TokenFunc() == "" {
		return nil, errors.New("argocd: no token: give the account's API token in a file or the environment")
	}
	c := &Client{filter: cfg.List, base: u, token: cfg.TokenFunc, http: cfg.HTTPClient, retries: cfg.Retries, backoff: cfg.Backoff, log: cfg.Logger, calls: map[string]int{}, errs: map[string]int{}}
	if c.retries == 0 {
		c.retries = 3
	}
	if c.backoff == 0 {
		c.backoff = 500 * time.Millisecond
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.http == nil {
		tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.Insecure} //nolint:gosec // explicit opt-in for test servers
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, fmt.Errorf("argocd: read CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("argocd: CA file %s has no PEM certificate", cfg.CAFile)
			}
			tlsCfg.RootCAs = pool
		}
		if len(cfg.ClientCert) > 0 || len(cfg.ClientKey) > 0 {
			pair, err := tls.X509KeyPair(cfg.ClientCert, cfg.ClientKey)
			if err != nil {
				return nil, fmt.Errorf("argocd: client certificate: %w", err)
			}
			tlsCfg.Certificates = []tls.Certificate{pair}
		}
		timeout := cfg.Timeout
		if timeout == 0 {
			timeout = 30 * time.Second
		}
		c.http = &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment,
			DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext, MaxIdleConnsPerHost: 16,
			// The application list runs to tens of megabytes on a large
			// fleet: read it in 64 KiB, not the default 4 KiB, per call.
			ReadBufferSize: 64 << 10}}
	}
	return c, nil
}

// Calls returns how many requests were made per endpoint (retries included),
// keyed like "GET /api/v1/applications/{name}/managed-resources".
func (c *Client) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// Errors returns how many requests failed per endpoint (each failed attempt).
func (c *Client) Errors() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.errs)
}

// get fetches path with query into out, retrying 5xx and connection errors
// with exponential backoff. endpoint names the call for counting and errors.
func (c *Client) get(ctx context.Context, endpoint, path string, q url.Values, out any) error {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = q.Encode()
	wait := c.backoff
	var lastErr error
	for attempt := 0; attempt <= c.retries; attempt++ {
		if attempt > 0 {
			c.log.Warn("argocd call failed, retrying", "endpoint", endpoint, "attempt", attempt, "err", lastErr.Error())
			select {
			case <-ctx.Done():
				return fmt.Errorf("argocd %s: %w (last error: %v)", endpoint, ctx.Err(), lastErr)
			case <-time.After(wait):
			}
			wait *= 2
		}
		c.mu.Lock()
		c.calls[endpoint]++
		c.mu.Unlock()
		retry, err := c.do(ctx, endpoint, u.String(), out)
		if err == nil {
			return nil
		}
		c.mu.Lock()
		c.errs[endpoint]++
		c.mu.Unlock()
		if !retry {
			return err
		}
		lastErr = err
	}
	return fmt.Errorf("argocd %s: giving up after %d attempts: %w", endpoint, c.retries+1, lastErr)
}

func (c *Client) do(ctx context.Context, endpoint, u string, out any) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, fmt.Errorf("argocd %s: %w", endpoint, err)
	}
	token := c.token()
	req.Header = c.headerFor(token)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("argocd %s: %w", endpoint, ctx.Err())
		}
		return true, fmt.Errorf("argocd %s: %w", endpoint, redact(err, token))
	}
	defer resp.Body.Close()
	if d, ok := out.(streamDecoder); ok && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		body := &readErr{r: io.LimitReader(resp.Body, 256<<20)}
		if err := d.decodeStream(body); err != nil {
			if body.err != nil {
				return true, fmt.Errorf("argocd %s: read response: %w", endpoint, body.err)
			}
			return false, fmt.Errorf("argocd %s: decode response: %w", endpoint, err)
		}
		return false, nil
	}
	buf := bodies.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBody {
			bodies.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, 256<<20)); err != nil {
		return true, fmt.Errorf("argocd %s: read response: %w", endpoint, err)
	}
	body := buf.Bytes()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return false, fmt.Errorf("%w (%s answered 401): the token is missing, expired or revoked", ErrUnauthorized, endpoint)
	case resp.StatusCode == http.StatusForbidden:
		return false, fmt.Errorf("%w (%s answered 403): the account needs the RBAC permission `p, <role>, applications, get, */*, allow` (or the app's project/namespace)", ErrForbidden, endpoint)
	case resp.StatusCode == http.StatusNotFound:
		return false, fmt.Errorf("%w: %s answered 404 (%s)", ErrNotFound, endpoint, serverMessage(body))
	case resp.StatusCode >= 500:
		return true, fmt.Errorf("argocd %s: server error %d (%s)", endpoint, resp.StatusCode, serverMessage(body))
	case resp.StatusCode >= 300:
		return false, fmt.Errorf("argocd %s: unexpected status %d (%s)", endpoint, resp.StatusCode, serverMessage(body))
	}
	decode := func() error { return json.Unmarshal(body, out) }
	if d, ok := out.(bodyDecoder); ok {
		decode = func() error { return d.decodeBody(body) }
	}
	if err := decode(); err != nil {
		return false, fmt.Errorf("argocd %s: decode response: %w", endpoint, err)
	}
	return false, nil
}

// headerFor returns the headers of a call made with token. Calls share
// them: net/http only reads a request's headers (a RoundTripper must not
// change the request; the client copies them for a redirect, and has no
// cookie jar, which would add to them).
func (c *Client) headerFor(token string) http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.header == nil || c.headerToken != token {
		c.header = http.Header{"Authorization": {"Bearer " + token}, "Accept": {"application/json"}}
		c.headerToken = token
	}
	return c.header
}

// readErr remembers a failed read (not the end of the body), so that a
// streamed answer cut short is retried like a body that could not be read.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// serverMessage extracts the gRPC-gateway error message, or a short body.
func serverMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil {
		if e.Message != "" {
			return e.Message
		}
		if e.Error != "" {
			return e.Error
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// redact removes the token from an error, should a transport ever echo it.
func redact(err error, token string) error {
	if token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "[token]"))
}
