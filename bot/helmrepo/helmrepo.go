// Package helmrepo fetches Helm charts from chart repositories (an
// index.yaml and its archives over HTTP(S)) and OCI registries, as Argo
// CD's repo-server and `helm dependency build` fetch them, for `driftfix
// predict`: the CLI's own process fetches, and renders (remediations/render,
// each in a process without network) run on the fetched archives.
//
// It resolves a version as Argo CD resolves a Helm source's targetRevision:
// an exact version is taken as written; anything else is a semver range
// (Masterminds' syntax, as Argo CD and Helm read it: "1.2.*", ">=1.0 <2",
// "^1.2", "*") and the highest version of the repository's index (or the
// registry's tags) that meets it is taken. A fetch is bounded: each archive
// and index by its own size cap, all bytes of a run by a total, each
// request by a timeout; an archive the index gives a digest for is checked
// against it. Archives are kept in a cache folder by (repository, chart,
// version), so a chart version is downloaded once.
//
// Credentials are none by default. RepositoryConfig names Helm's
// repositories.yaml (its entries' username, password, caFile, certFile,
// keyFile, insecure_skip_tls_verify and pass_credentials_all are used for
// the repository of the same URL); RegistryConfig names Helm's registry
// config.json (the Docker config format `helm registry login` writes).
package helmrepo

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/registry"
	"sigs.k8s.io/yaml"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/driftfix/driftfix/remediations/render"
)

// The defaults of Options' bounds.
const (
	DefaultMaxArchiveBytes = 20 << 20
	DefaultMaxIndexBytes   = 100 << 20
	DefaultMaxTotalBytes   = 1 << 30
	DefaultTimeout         = 2 * time.Minute
)

// Options configure a Fetcher; zero bounds take the defaults above, a
// negative one is no bound.
type Options struct {
	// CacheDir keeps fetched archives by (repository, chart, version);
	// "" keeps none beyond the Fetcher's life.
	CacheDir string
	// MaxArchiveBytes bounds one chart archive (and any one response of an
	// OCI registry); MaxIndexBytes one repository's index.yaml;
	// MaxTotalBytes every byte a Fetcher downloads.
	MaxArchiveBytes, MaxIndexBytes, MaxTotalBytes int64
	// Timeout bounds one request.
	Timeout time.Duration
	// RepositoryConfig is Helm's repositories.yaml, for the credentials
	// and TLS settings of chart repositories; "" is none.
	RepositoryConfig string
	// RegistryConfig is Helm's registry config.json, for the credentials
	// of OCI registries; "" is none.
	RegistryConfig string
}

// Fetcher fetches charts; safe for concurrent use. Each repository's index
// is read once per Fetcher, each chart version once.
type Fetcher struct {
	opt   Options
	repos *repositoryFile
	total counter
	base  http.RoundTripper

	mu      sync.Mutex
	indexes map[string]*once[*Index]
	charts  map[string]*once[fetched]
	clients map[string]*http.Client
	oci     map[bool]*registry.Client

	cacheWarn sync.Once
}

type fetched struct {
	version string
	archive []byte
}

type once[T any] struct {
	o   sync.Once
	v   T
	err error
}

// New is a Fetcher with the options, its credentials files read.
func New(o Options) (*Fetcher, error) {
	if o.MaxArchiveBytes == 0 {
		o.MaxArchiveBytes = DefaultMaxArchiveBytes
	}
	if o.MaxIndexBytes == 0 {
		o.MaxIndexBytes = DefaultMaxIndexBytes
	}
	if o.MaxTotalBytes == 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	f := &Fetcher{opt: o, indexes: map[string]*once[*Index]{}, charts: map[string]*once[fetched]{},
		clients: map[string]*http.Client{}, oci: map[bool]*registry.Client{}}
	f.total.max = o.MaxTotalBytes
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true // an archive is compressed already; sizes count what is sent
	f.base = t
	if o.RepositoryConfig != "" {
		data, err := os.ReadFile(o.RepositoryConfig)
		if err != nil {
			return nil, fmt.Errorf("read the Helm repository config %s: %w", o.RepositoryConfig, err)
		}
		var rf repositoryFile
		if err := yaml.Unmarshal(data, &rf); err != nil {
			return nil, fmt.Errorf("read the Helm repository config %s: %w", o.RepositoryConfig, err)
		}
		f.repos = &rf
	}
	if o.RegistryConfig != "" {
		if _, err := os.Stat(o.RegistryConfig); err != nil {
			return nil, fmt.Errorf("read the Helm registry config %s: %w", o.RegistryConfig, err)
		}
	}
	return f, nil
}

// LimitError is a download over one of the Fetcher's bounds.
type LimitError struct {
	What  string // "chart archive", "index", "the downloads of this run"
	Limit int64
	Flag  string // the flag that raises it
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s over the size cap of %s (%s)", e.What, humanBytes(e.Limit), e.Flag)
}

// DigestError is an archive whose digest is not the one its index gives.
type DigestError struct {
	URL, Want, Got string
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("archive %s has digest sha256:%s, but the repository's index gives sha256:%s: refused", e.URL, e.Got, e.Want)
}

// Fetch fetches the chart ref names: the version its Version resolves to
// and the chart's archive.
func (f *Fetcher) Fetch(ctx context.Context, ref render.ChartRef) (string, []byte, error) {
	kind, err := kindOf(ref)
	if err != nil {
		return "", nil, err
	}
	key := kind + "\x00" + render.RepositoryIdentity(ref.Repository) + "\x00" + ref.Chart + "\x00" + ref.Version
	f.mu.Lock()
	e := f.charts[key]
	if e == nil {
		e = &once[fetched]{}
		f.charts[key] = e
	}
	f.mu.Unlock()
	e.o.Do(func() {
		switch kind {
		case "http":
			e.v, e.err = f.fetchHTTP(ctx, ref)
		default:
			e.v, e.err = f.fetchOCI(ctx, ref)
		}
	})
	return e.v.version, e.v.archive, e.err
}

// kindOf says how ref's repository is reached: "http" (a chart
// repository), "oci" (a registry). A repository named by its alias in
// Helm's repositories.yaml ("@name", "alias:name") is refused: Argo CD
// does not resolve those either.
func kindOf(ref render.ChartRef) (string, error) {
	r := strings.TrimSpace(ref.Repository)
	switch {
	case r == "":
		return "", errors.New("no repository URL")
	case strings.HasPrefix(r, "http://"), strings.HasPrefix(r, "https://"):
		if ref.Chart == "" {
			return "", errors.New("a chart repository source needs a chart name")
		}
		return "http", nil
	case strings.HasPrefix(r, "oci://"):
		return "oci", nil
	case strings.HasPrefix(r, "@"), strings.HasPrefix(r, "alias:"):
		return "", fmt.Errorf("repository %s is an alias of Helm's repositories.yaml, which names no URL here: write the repository's URL", r)
	case strings.Contains(r, "://"):
		return "", fmt.Errorf("repository %s: only http(s):// chart repositories and OCI registries are fetched", r)
	}
	// Argo CD's form of a Helm OCI source: a registry path without a scheme.
	if ref.Chart == "" {
		return "", fmt.Errorf("repository %s has no scheme and the source no chart", r)
	}
	return "oci", nil
}

// fetchHTTP fetches a chart of a chart repository: its index, the version
// resolved in it, the archive (checked against the index's digest).
func (f *Fetcher) fetchHTTP(ctx context.Context, ref render.ChartRef) (fetched, error) {
	if isVersion(ref.Version) {
		if a, ok := f.cached(ref, ref.Version); ok {
			return fetched{ref.Version, a}, nil
		}
	}
	idx, err := f.index(ctx, ref.Repository)
	if err != nil {
		return fetched{}, err
	}
	entries := idx.Entries[ref.Chart]
	if len(entries) == 0 {
		return fetched{}, fmt.Errorf("the repository's index has no chart %s", ref.Chart)
	}
	var tags []string
	for _, e := range entries {
		tags = append(tags, e.Version)
	}
	want, err := Resolve(ref.Version, tags)
	if err != nil {
		return fetched{}, err
	}
	cv, err := idx.Get(ref.Chart, want)
	if err != nil {
		return fetched{}, err
	}
	if a, ok := f.cached(ref, cv.Version); ok && (cv.Digest == "" || digestOf(a) == strings.TrimPrefix(cv.Digest, "sha256:")) {
		return fetched{cv.Version, a}, nil
	}
	if len(cv.URLs) == 0 {
		return fetched{}, fmt.Errorf("the index gives no URL for %s %s", ref.Chart, cv.Version)
	}
	u, err := resolveURL(ref.Repository, cv.URLs[0])
	if err != nil {
		return fetched{}, fmt.Errorf("the index's URL for %s %s: %w", ref.Chart, cv.Version, err)
	}
	a, err := f.get(ctx, ref.Repository, u, "the chart archive "+u, f.opt.MaxArchiveBytes, "--chart-max-bytes")
	if err != nil {
		return fetched{}, err
	}
	if want := strings.TrimPrefix(cv.Digest, "sha256:"); want != "" {
		if got := digestOf(a); !strings.EqualFold(got, want) {
			return fetched{}, &DigestError{URL: u, Want: want, Got: got}
		}
	}
	f.keep(ref, cv.Version, a)
	return fetched{cv.Version, a}, nil
}

// index reads a chart repository's index.yaml, once per Fetcher.
func (f *Fetcher) index(ctx context.Context, repoURL string) (*Index, error) {
	k := render.RepositoryIdentity(repoURL)
	f.mu.Lock()
	e := f.indexes[k]
	if e == nil {
		e = &once[*Index]{}
		f.indexes[k] = e
	}
	f.mu.Unlock()
	e.o.Do(func() {
		u, err := url.Parse(strings.TrimSuffix(repoURL, "/") + "/index.yaml")
		if err != nil {
			e.err = fmt.Errorf("repository URL %s: %w", repoURL, err)
			return
		}
		data, err := f.get(ctx, repoURL, u.String(), "the index "+u.String(), f.opt.MaxIndexBytes, "--chart-max-index-bytes")
		if err != nil {
			e.err = err
			return
		}
		e.v, e.err = ParseIndex(data)
	})
	return e.v, e.err
}

// isVersion says whether a revision is an exact version (Argo CD takes it
// as written, without reading the index).
func isVersion(s string) bool {
	_, err := semver.NewVersion(s)
	return err == nil
}

// Resolve is the version a targetRevision or dependency version names
// among a repository's versions, as Argo CD resolves it: an exact version
// as written; a semver range the highest version meeting it (versions that
// are not semver are skipped); anything else only a version of that exact
// name.
func Resolve(revision string, versions []string) (string, error) {
	if v, err := semver.NewVersion(revision); err == nil {
		return v.Original(), nil
	}
	c, err := semver.NewConstraint(revision)
	if err != nil {
		for _, v := range versions {
			if v == revision {
				return v, nil
			}
		}
		return "", fmt.Errorf("version %q is neither a version nor a semver range (%v)", revision, err)
	}
	var best *semver.Version
	for _, t := range versions {
		v, err := semver.NewVersion(t)
		if err != nil {
			continue
		}
		if c.Check(v) && (best == nil || v.GreaterThan(best)) {
			best = v
		}
	}
	if best == nil {
		return "", fmt.Errorf("no version meets %q among the %d the repository has", revision, len(versions))
	}
	return best.Original(), nil
}

// fetchOCI fetches a chart of an OCI registry with Helm's registry client:
// its tags read for a range, the chart layer pulled (its digest checked
// by the client).
func (f *Fetcher) fetchOCI(_ context.Context, ref render.ChartRef) (fetched, error) {
	base := strings.TrimPrefix(strings.TrimSuffix(ref.Repository, "/"), "oci://")
	if ref.Chart != "" {
		base += "/" + ref.Chart
	}
	host, _, _ := strings.Cut(base, "/")
	c, err := f.ociClient(loopback(host))
	if err != nil {
		return fetched{}, err
	}
	version := ref.Version
	switch {
	case strings.HasPrefix(version, "sha256:"):
	case isVersion(version):
		version = strings.ReplaceAll(version, "+", "_")
	default:
		tags, err := c.Tags(base)
		if err != nil {
			return fetched{}, fmt.Errorf("list the tags of %s: %w", base, err)
		}
		if version, err = Resolve(ref.Version, tags); err != nil {
			return fetched{}, err
		}
	}
	resolved := strings.ReplaceAll(version, "_", "+")
	if a, ok := f.cached(ref, resolved); ok && !strings.HasPrefix(version, "sha256:") {
		return fetched{resolved, a}, nil
	}
	target := base + ":" + version
	if strings.HasPrefix(version, "sha256:") {
		target = base + "@" + version
	}
	res, err := c.Pull(target, registry.PullOptWithChart(true))
	if err != nil {
		return fetched{}, fmt.Errorf("pull %s: %w", target, err)
	}
	if res.Chart == nil || len(res.Chart.Data) == 0 {
		return fetched{}, fmt.Errorf("pull %s: no chart layer", target)
	}
	if res.Chart.Meta != nil && res.Chart.Meta.Version != "" {
		resolved = res.Chart.Meta.Version
	}
	f.keep(ref, resolved, res.Chart.Data)
	return fetched{resolved, res.Chart.Data}, nil
}

// ociClient is Helm's registry client over the Fetcher's bounded transport,
// with the registry config's credentials or none; plain HTTP for a
// registry on the loopback interface (as Docker and Helm treat localhost),
// HTTPS otherwise.
func (f *Fetcher) ociClient(plain bool) (*registry.Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.oci[plain]; c != nil {
		return c, nil
	}
	hc := &http.Client{Transport: &bounded{base: f.base, total: &f.total, max: f.opt.MaxArchiveBytes, flag: "--chart-max-bytes"}, Timeout: f.opt.Timeout}
	authz := &auth.Client{Client: hc, Cache: auth.NewCache()}
	if f.opt.RegistryConfig != "" {
		store, err := credentials.NewStore(f.opt.RegistryConfig, credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("read the Helm registry config %s: %w", f.opt.RegistryConfig, err)
		}
		authz.Credential = credentials.Credential(store)
	}
	opts := []registry.ClientOption{registry.ClientOptHTTPClient(hc), registry.ClientOptAuthorizer(*authz), registry.ClientOptCredentialsFile(os.DevNull)}
	if plain {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("make the OCI registry client: %w", err)
	}
	f.oci[plain] = c
	return c, nil
}

// loopback says whether a registry host is on the loopback interface.
func loopback(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// get downloads one URL of a chart repository within max bytes, with the
// repository's credentials (same host only, unless the entry passes them
// everywhere).
func (f *Fetcher) get(ctx context.Context, repoURL, u, what string, max int64, flag string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	entry := f.entry(repoURL)
	client, err := f.client(entry, max, flag)
	if err != nil {
		return nil, err
	}
	if entry != nil && entry.Username != "" && entry.Password != "" {
		ru, _ := url.Parse(repoURL)
		if entry.PassCredentialsAll || (ru != nil && ru.Scheme == req.URL.Scheme && ru.Host == req.URL.Host) {
			req.SetBasicAuth(entry.Username, entry.Password)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", kindOfWhat(what), err) // the error names the URL
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read %s: %s", what, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			le.What = what
			return nil, le
		}
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return data, nil
}

// kindOfWhat is what a download is without its URL ("index", "chart
// archive").
func kindOfWhat(what string) string {
	if i := strings.LastIndex(what, " "); i > 0 {
		return what[:i]
	}
	return what
}

// entry is repositories.yaml's entry for the repository's URL, if any.
func (f *Fetcher) entry(repoURL string) *repositoryEntry {
	if f.repos == nil {
		return nil
	}
	for _, e := range f.repos.Repositories {
		if e != nil && render.RepositoryIdentity(e.URL) == render.RepositoryIdentity(repoURL) {
			return e
		}
	}
	return nil
}

// client is the HTTP client for a repository entry's TLS settings, bounded
// at max bytes a response.
func (f *Fetcher) client(e *repositoryEntry, max int64, flag string) (*http.Client, error) {
	key := fmt.Sprint(max)
	if e != nil {
		key += "\x00" + e.URL
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.clients[key]; c != nil {
		return c, nil
	}
	base := f.base
	if e != nil && (e.CAFile != "" || e.CertFile != "" || e.InsecureSkipTLSverify) {
		t := f.base.(*http.Transport).Clone()
		cfg := &tls.Config{InsecureSkipVerify: e.InsecureSkipTLSverify} //nolint:gosec // as the repository's entry asks
		if e.CAFile != "" {
			pem, err := os.ReadFile(e.CAFile)
			if err != nil {
				return nil, fmt.Errorf("read the CA file of repository %s: %w", e.URL, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("the CA file %s of repository %s holds no certificate", e.CAFile, e.URL)
			}
			cfg.RootCAs = pool
		}
		if e.CertFile != "" && e.KeyFile != "" {
			cert, err := tls.LoadX509KeyPair(e.CertFile, e.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("read the client certificate of repository %s: %w", e.URL, err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		t.TLSClientConfig = cfg
		base = t
	}
	c := &http.Client{Transport: &bounded{base: base, total: &f.total, max: max, flag: flag}, Timeout: f.opt.Timeout}
	f.clients[key] = c
	return c, nil
}

// cached is the archive the cache keeps for (repository, chart, version).
func (f *Fetcher) cached(ref render.ChartRef, version string) ([]byte, bool) {
	if f.opt.CacheDir == "" {
		return nil, false
	}
	data, err := os.ReadFile(f.cachePath(ref, version))
	if err != nil || len(data) == 0 || (f.opt.MaxArchiveBytes > 0 && int64(len(data)) > f.opt.MaxArchiveBytes) {
		return nil, false
	}
	return data, true
}

// keep writes an archive to the cache (atomically; a failure only costs a
// download next time).
func (f *Fetcher) keep(ref render.ChartRef, version string, data []byte) {
	if f.opt.CacheDir == "" {
		return
	}
	p := f.cachePath(ref, version)
	if err := os.MkdirAll(f.opt.CacheDir, 0o700); err != nil {
		f.warnCache(err)
		return
	}
	tmp, err := os.CreateTemp(f.opt.CacheDir, ".tmp-*")
	if err != nil {
		f.warnCache(err)
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}

// warnCache logs, once per Fetcher, that the cache cannot be written.
func (f *Fetcher) warnCache(err error) {
	f.cacheWarn.Do(func() {
		slog.Warn("fetched charts are not kept: the chart cache cannot be written", "dir", f.opt.CacheDir, "err", err)
	})
}

// cachePath is the cache file of (repository, chart, version).
func (f *Fetcher) cachePath(ref render.ChartRef, version string) string {
	sum := sha256.Sum256([]byte(render.RepositoryIdentity(ref.Repository) + "\x00" + ref.Chart + "\x00" + version))
	name := ref.Chart
	if name == "" {
		name = filepath.Base(strings.TrimPrefix(ref.Repository, "oci://"))
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, name)
	return filepath.Join(f.opt.CacheDir, hex.EncodeToString(sum[:12])+"-"+name+".tgz")
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// counter counts the bytes a Fetcher downloads against its total.
type counter struct {
	mu  sync.Mutex
	n   int64
	max int64
}

func (c *counter) add(n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += n
	return c.max < 0 || c.n <= c.max
}

// bounded is a transport whose response bodies stop with a *LimitError past
// max bytes each, or past the Fetcher's total.
type bounded struct {
	base  http.RoundTripper
	total *counter
	max   int64
	flag  string
}

func (b *bounded) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if b.max >= 0 && resp.ContentLength > b.max {
		resp.Body.Close()
		return nil, &LimitError{What: "response of " + req.URL.String(), Limit: b.max, Flag: b.flag}
	}
	resp.Body = &boundedBody{rc: resp.Body, b: b, what: req.URL.String()}
	return resp, nil
}

type boundedBody struct {
	rc   io.ReadCloser
	b    *bounded
	n    int64
	what string
}

func (r *boundedBody) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.n += int64(n)
	if r.b.max >= 0 && r.n > r.b.max {
		return n, &LimitError{What: "response of " + r.what, Limit: r.b.max, Flag: r.b.flag}
	}
	if !r.b.total.add(int64(n)) {
		return n, &LimitError{What: "the downloads of this run", Limit: r.b.total.max, Flag: "--chart-max-total-bytes"}
	}
	return n, err
}

func (r *boundedBody) Close() error { return r.rc.Close() }

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
