// Package github opens, updates and closes driftfix's pull requests through
// the GitHub REST API (go-github), as a GitHub App (ghinstallation: App JWT,
// one installation looked up per repository) or with a token to try it out.
// Commits are made through the Git data API, so GitHub signs them as the App.
// It knows nothing about causes: it writes the files and text it is given.
package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/driftfix/driftfix/bot/githost"
	gh "github.com/google/go-github/v89/github"
)

// Config says how to reach GitHub and as whom.
type Config struct {
	// AppID and PrivateKey (PEM) select GitHub App mode.
	AppID      int64
	PrivateKey []byte
	// Token selects token mode (a fine-grained token, for trying driftfix out).
	Token string
	// TokenFunc, when set, is asked for the token on every request (a token
	// file read again when it changes); it replaces Token.
	TokenFunc func() string
	// BaseURL is the API of a GitHub Enterprise Server, e.g.
	// https://github.example.com/api/v3/; empty for github.com.
	BaseURL string
	// Transport carries every request (default http.DefaultTransport).
	Transport http.RoundTripper
	// Retries bounds the retries of one call on 5xx and rate limits (default 4).
	Retries int
	// MaxWait is the longest driftfix waits for a rate limit before giving
	// the call up for this cycle (default 2m).
	MaxWait time.Duration
	// Backoff is the first wait after a 5xx, doubled each time (default 1s).
	Backoff time.Duration
	Logger  *slog.Logger
}

// Client talks to one GitHub (github.com or an Enterprise Server).
type Client struct {
	cfg     Config
	apps    *gh.Client // authenticated as the App (JWT), nil in token mode
	atr     *ghinstallation.AppsTransport
	token   *gh.Client // token mode
	base    string     // API base URL, ending in /
	log     *slog.Logger
	secrets []string
	tokenFn func() string // token mode: the current token

	mu    sync.Mutex
	login string                               // the bot's account, once looked up
	ident [2]string                            // its commits' author name and email, once looked up (commits.go)
	inst  map[string]*gh.Client                // by owner/name
	itr   map[string]*ghinstallation.Transport // by owner/name: its installation token (token.go)
	calls map[string]int
	errs  map[string]int
}

// New builds a client. It checks the App key or the token but makes no call.
func New(cfg Config) (*Client, error) {
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.Retries == 0 {
		cfg.Retries = 4
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = 2 * time.Minute
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = time.Second
	}
	c := &Client{cfg: cfg, log: cfg.Logger, inst: map[string]*gh.Client{}, calls: map[string]int{}, errs: map[string]int{}}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	tr := &conditional{next: cfg.Transport, cache: map[string]cached{}}
	opts := func(rt http.RoundTripper) []gh.ClientOptionsFunc {
		o := []gh.ClientOptionsFunc{gh.WithTransport(rt), gh.WithUserAgent("driftfix")}
		if cfg.BaseURL != "" {
			o = append(o, gh.WithEnterpriseURLs(cfg.BaseURL, cfg.BaseURL))
		}
		return o
	}
	probe, err := gh.NewClient(opts(tr)...)
	if err != nil {
		return nil, fmt.Errorf("github: base URL %q: %w", cfg.BaseURL, err)
	}
	c.base = probe.BaseURL()
	if cfg.TokenFunc == nil && cfg.Token != "" {
		tok := cfg.Token
		cfg.TokenFunc = func() string { return tok }
	}
	if cfg.TokenFunc != nil {
		c.tokenFn = cfg.TokenFunc
		cfg.Token = cfg.TokenFunc()
	}
	switch {
	case cfg.AppID != 0 && cfg.Token != "":
		return nil, errors.New("github: give either an App (appID and private key) or a token, not both")
	case cfg.AppID != 0:
		atr, err := ghinstallation.NewAppsTransport(tr, cfg.AppID, cfg.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("github: the App's private key is not a PEM RSA key: %w", err)
		}
		atr.BaseURL = strings.TrimRight(c.base, "/")
		c.atr = atr
		if c.apps, err = gh.NewClient(opts(atr)...); err != nil {
			return nil, fmt.Errorf("github: %w", err)
		}
		c.secrets = append(c.secrets, string(cfg.PrivateKey))
	case cfg.Token != "":
		if c.token, err = gh.NewClient(opts(&bearer{next: tr, token: cfg.TokenFunc})...); err != nil {
			return nil, fmt.Errorf("github: %w", err)
		}
	default:
		return nil, errors.New("github: no credentials: give an App ID and private key file, or a token in a file or the environment")
	}
	return c, nil
}

// bearer authenticates each request with the token as it is now, so a
// rotated token file is used without a restart.
type bearer struct {
	next  http.RoundTripper
	token func() string
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token())
	return b.next.RoundTrip(req)
}

// Calls returns how many requests were made per kind of call, retries included.
func (c *Client) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// Errors returns how many requests failed per kind of call (each attempt).
func (c *Client) Errors() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.errs)
}

// ParseRepo reads owner and name from a repository URL as Argo CD has it:
// https://host/owner/name(.git), ssh://git@host/owner/name, git@host:owner/name.git,
// or a file:// path ending in owner/name(.git) (local mirrors and tests).
func ParseRepo(repoURL string) (githost.Repo, error) {
	s := strings.TrimSpace(repoURL)
	if i := strings.Index(s, "@"); i >= 0 && !strings.Contains(s, "://") {
		if j := strings.Index(s[i:], ":"); j >= 0 {
			s = "ssh://" + s[:i+j] + "/" + s[i+j+1:]
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return githost.Repo{}, fmt.Errorf("repository URL %q is not a GitHub repository URL", repoURL)
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(strings.TrimRight(u.Path, "/"), ".git"), "/"), "/")
	if len(parts) < 2 || parts[len(parts)-1] == "" || parts[len(parts)-2] == "" {
		return githost.Repo{}, fmt.Errorf("repository URL %q does not end in owner/name", repoURL)
	}
	return githost.Repo{Owner: parts[len(parts)-2], Name: parts[len(parts)-1]}, nil
}

// Host is the web host this client's repositories live on: github.com, or
// the Enterprise Server's host from the configured API URL.
func (c *Client) Host() string {
	if c.cfg.BaseURL == "" {
		return "github.com"
	}
	if u, err := url.Parse(c.cfg.BaseURL); err == nil && u.Host != "" {
		return strings.ToLower(u.Host)
	}
	return c.cfg.BaseURL
}

// Repo reads a repository URL as Argo CD has it (see ParseRepo) as one of
// this host's repositories.
func (c *Client) Repo(repoURL string) (githost.Repo, error) {
	r, err := ParseRepo(repoURL)
	if err != nil {
		return githost.Repo{}, err
	}
	r.Host = c.Host()
	return r, nil
}

// client returns a client for a repository: in App mode, one for the
// installation that covers it, looked up once.
func (c *Client) client(ctx context.Context, r githost.Repo) (*gh.Client, error) {
	if c.token != nil {
		return c.token, nil
	}
	c.mu.Lock()
	cl := c.inst[r.String()]
	c.mu.Unlock()
	if cl != nil {
		return cl, nil
	}
	inst, _, err := fetch(ctx, c, "find installation", func(ctx context.Context) (*gh.Installation, *gh.Response, error) {
		return c.apps.Apps.GetRepositoryInstallation(ctx, r.Owner, r.Name)
	})
	if err != nil {
		var er *gh.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("%w on %s; install it there first", ErrNotInstalled, r)
		}
		return nil, fmt.Errorf("github: find the App's installation on %s: %w", r, err)
	}
	itr := ghinstallation.NewFromAppsTransport(c.atr, inst.GetID())
	cl, err = gh.NewClient(gh.WithTransport(itr), gh.WithUserAgent("driftfix"), gh.WithURLs(&c.base, &c.base))
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	c.mu.Lock()
	c.inst[r.String()] = cl
	if c.itr == nil {
		c.itr = map[string]*ghinstallation.Transport{}
	}
	c.itr[r.String()] = itr
	c.mu.Unlock()
	return cl, nil
}

// call runs one API call, retrying 5xx and connection errors with backoff,
// waiting out secondary rate limits (403/429 with Retry-After) and a
// primary limit that resets soon; a longer wait gives up with githost.ErrRateLimited.
func (c *Client) call(ctx context.Context, what string, f func(context.Context) (*gh.Response, error)) error {
	backoff := c.cfg.Backoff
	for attempt := 0; ; attempt++ {
		resp, err := f(ctx)
		c.mu.Lock()
		c.calls[what]++
		if err != nil && !notFound(err) { // a 404 answers "no such branch", not a failure
			c.errs[what]++
		}
		c.mu.Unlock()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var wait time.Duration
		var ab *gh.AbuseRateLimitError
		var rl *gh.RateLimitError
		var er *gh.ErrorResponse
		switch {
		case errors.As(err, &ab):
			wait = time.Minute // GitHub's advice when no Retry-After is given
			if ab.RetryAfter != nil {
				wait = max(*ab.RetryAfter, time.Second)
			}
			if wait > c.cfg.MaxWait {
				return fmt.Errorf("%w: %s: secondary rate limit, GitHub asks to wait %s", githost.ErrRateLimited, what, wait)
			}
			c.log.Warn("github secondary rate limit, waiting", "call", what, "wait", wait.String())
		case errors.As(err, &rl):
			wait = time.Until(rl.Rate.Reset.Time) + time.Second
			if wait > c.cfg.MaxWait {
				return fmt.Errorf("%w: %s: the hourly limit of %d requests is used up until %s", githost.ErrRateLimited, what, rl.Rate.Limit, rl.Rate.Reset.Time.UTC().Format(time.RFC3339))
			}
			c.log.Warn("github rate limit, waiting for reset", "call", what, "wait", wait.String())
		case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode < 500:
			if perr := permissionError(what, err); perr != nil {
				return c.redact(perr)
			}
			return c.redact(fmt.Errorf("github: %s: %w", what, err))
		default: // 5xx or no answer
			if resp != nil && resp.StatusCode < 500 && resp.StatusCode != 0 {
				return c.redact(fmt.Errorf("github: %s: %w", what, err))
			}
			wait = backoff
			backoff *= 2
			c.log.Warn("github call failed, retrying", "call", what, "error", c.redact(err).Error())
		}
		if attempt >= c.cfg.Retries {
			return c.redact(fmt.Errorf("github: %s: gave up after %d attempts: %w", what, attempt+1, err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// fetch is call for an API call that returns a value.
func fetch[T any](ctx context.Context, c *Client, what string, f func(context.Context) (T, *gh.Response, error)) (T, *gh.Response, error) {
	var v T
	var resp *gh.Response
	err := c.call(ctx, what, func(ctx context.Context) (*gh.Response, error) {
		var err error
		v, resp, err = f(ctx)
		return resp, err
	})
	return v, resp, err
}

func (c *Client) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	secrets := c.secrets
	if c.tokenFn != nil {
		secrets = append(slices.Clone(secrets), c.tokenFn())
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			return errors.New(strings.ReplaceAll(msg, s, "[redacted]"))
		}
	}
	return err
}

func toPR(p *gh.PullRequest) githost.PullRequest {
	pr := githost.PullRequest{Number: p.GetNumber(), URL: p.GetHTMLURL(), Title: p.GetTitle(), Body: p.GetBody(),
		Branch: p.GetHead().GetRef(), Base: p.GetBase().GetRef(), State: p.GetState(), Merged: p.GetMerged() || p.MergedAt != nil,
		Draft: p.GetDraft(), HeadSHA: p.GetHead().GetSHA(), MergeCommitSHA: p.GetMergeCommitSHA(),
		HeadRepo: p.GetHead().GetRepo().GetFullName(), Author: p.GetUser().GetLogin()}
	if p.ClosedAt != nil {
		pr.ClosedAt = p.ClosedAt.Time
	}
	if p.MergedAt != nil {
		pr.MergedAt = p.MergedAt.Time
	}
	for _, l := range p.Labels {
		pr.Labels = append(pr.Labels, l.GetName())
	}
	return pr
}

// Login returns the account driftfix writes as: "<app-slug>[bot]" for a
// GitHub App, the token's user in token mode. It is looked up once.
func (c *Client) Login(ctx context.Context) (string, error) {
	c.mu.Lock()
	login := c.login
	c.mu.Unlock()
	if login != "" {
		return login, nil
	}
	if c.apps != nil {
		app, _, err := fetch(ctx, c, "get app", func(ctx context.Context) (*gh.App, *gh.Response, error) {
			return c.apps.Apps.Get(ctx, "")
		})
		if err != nil {
			return "", fmt.Errorf("github: look up the App's account: %w", err)
		}
		if app.GetSlug() == "" {
			return "", errors.New("github: look up the App's account: GitHub gave no slug")
		}
		login = app.GetSlug() + "[bot]"
	} else {
		u, _, err := fetch(ctx, c, "get user", func(ctx context.Context) (*gh.User, *gh.Response, error) {
			return c.token.Users.Get(ctx, "")
		})
		if err != nil {
			return "", fmt.Errorf("github: look up the token's user: %w", err)
		}
		if u.GetLogin() == "" {
			return "", errors.New("github: look up the token's user: GitHub gave no login")
		}
		login = u.GetLogin()
	}
	c.mu.Lock()
	c.login = login
	c.mu.Unlock()
	return login, nil
}

// FindPR returns the newest pull request from branch, open or closed, or nil.
func (c *Client) FindPR(ctx context.Context, r githost.Repo, branch string) (*githost.PullRequest, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	found, _, err := fetch(ctx, c, "find pull request", func(ctx context.Context) ([]*gh.PullRequest, *gh.Response, error) {
		return cl.PullRequests.List(ctx, r.Owner, r.Name, &gh.PullRequestListOptions{State: "all", Head: r.Owner + ":" + branch, ListOptions: gh.ListOptions{PerPage: 10}})
	})
	if err != nil {
		return nil, fmt.Errorf("look for the pull request of %s in %s: %w", branch, r, err)
	}
	var best *gh.PullRequest
	for _, p := range found {
		if p.GetHead().GetRef() == branch && (best == nil || p.GetNumber() > best.GetNumber()) {
			best = p
		}
	}
	if best == nil {
		return nil, nil
	}
	pr := toPR(best)
	return &pr, nil
}

// GetPR reads one pull request.
func (c *Client) GetPR(ctx context.Context, r githost.Repo, number int) (*githost.PullRequest, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	p, _, err := fetch(ctx, c, "get pull request", func(ctx context.Context) (*gh.PullRequest, *gh.Response, error) {
		return cl.PullRequests.Get(ctx, r.Owner, r.Name, number)
	})
	if err != nil {
		return nil, fmt.Errorf("read pull request %s#%d: %w", r, number, err)
	}
	pr := toPR(p)
	return &pr, nil
}

// Holds reports whether revision holds commit: it is that commit or a later
// one on top of it (GitHub's compare says identical or ahead). An unknown
// commit or revision is not held.
func (c *Client) Holds(ctx context.Context, r githost.Repo, revision, commit string) (bool, error) {
	if revision == commit {
		return true, nil
	}
	cl, err := c.client(ctx, r)
	if err != nil {
		return false, err
	}
	cmp, _, err := fetch(ctx, c, "compare commits", func(ctx context.Context) (*gh.CommitsComparison, *gh.Response, error) {
		return cl.Repositories.CompareCommits(ctx, r.Owner, r.Name, commit, revision, &gh.ListOptions{PerPage: 1})
	})
	if notFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("compare %s with %s in %s: %w", revision, commit, r, err)
	}
	return cmp.GetStatus() == "identical" || cmp.GetStatus() == "ahead", nil
}

// OpenPRs lists the open pull requests whose branch starts with prefix.
func (c *Client) OpenPRs(ctx context.Context, r githost.Repo, prefix string) ([]githost.PullRequest, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	var out []githost.PullRequest
	opt := &gh.PullRequestListOptions{State: "open", ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		page, resp, err := fetch(ctx, c, "list pull requests", func(ctx context.Context) ([]*gh.PullRequest, *gh.Response, error) {
			return cl.PullRequests.List(ctx, r.Owner, r.Name, opt)
		})
		if err != nil {
			return nil, fmt.Errorf("list open pull requests of %s: %w", r, err)
		}
		for _, p := range page {
			if strings.HasPrefix(p.GetHead().GetRef(), prefix) {
				out = append(out, toPR(p))
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// DefaultBranch returns the repository's default branch.
func (c *Client) DefaultBranch(ctx context.Context, r githost.Repo) (string, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return "", err
	}
	repo, _, err := fetch(ctx, c, "get repository", func(ctx context.Context) (*gh.Repository, *gh.Response, error) {
		return cl.Repositories.Get(ctx, r.Owner, r.Name)
	})
	if err != nil {
		return "", fmt.Errorf("read repository %s: %w", r, err)
	}
	return repo.GetDefaultBranch(), nil
}
