package github_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

func emulator(t *testing.T) (*githubtest.Server, string) {
	t.Helper()
	srv, err := githubtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	if _, err := githubtest.NewRepo(dir, "acme", "apps", map[string]string{"shop/deploy.yaml": "replicas: 3\n", "README.md": "apps\n"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddRepo(dir, "acme", "apps"); err != nil {
		t.Fatal(err)
	}
	return srv, dir
}

func appClient(t *testing.T, srv *githubtest.Server) *github.Client {
	t.Helper()
	c, err := github.New(github.Config{AppID: srv.AppID, PrivateKey: srv.PrivateKeyPEM, BaseURL: srv.API, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseRepo(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "https://github.com/acme/apps.git", want: "acme/apps"},
		{in: "https://github.com/acme/apps", want: "acme/apps"},
		{in: "git@github.com:acme/apps.git", want: "acme/apps"},
		{in: "ssh://git@github.example.com/acme/apps", want: "acme/apps"},
		{in: "file:///tmp/x/acme/apps.git", want: "acme/apps"},
		{in: "https://github.com/acme", err: "does not end in owner/name"},
		{in: "apps", err: "not a GitHub repository URL"},
	} {
		r, err := github.ParseRepo(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || r.String() != tc.want {
			t.Errorf("%s: %v %v, want %s", tc.in, r, err, tc.want)
		}
	}
}

// TestPullRequestLifecycle opens, finds, updates and closes a pull request
// as the App, with commits written to the real repository.
func TestPullRequestLifecycle(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	base, err := c.DefaultBranch(ctx, repo)
	if err != nil || base != "main" {
		t.Fatalf("default branch %q %v", base, err)
	}
	branch := "driftfix/shop/hpa-replicas-abc"
	if pr, err := c.FindPR(ctx, repo, branch); err != nil || pr != nil {
		t.Fatalf("no githost.PullRequest yet: %v %v", pr, err)
	}
	files := map[string]githost.Change{"shop/deploy.yaml": {Synced: []byte("replicas: 3\n"), Content: []byte("# replicas owned by the HPA\n")}}
	changed, created, err := c.Push(ctx, repo, base, branch, "Stop declaring replicas", files)
	if err != nil || !changed || !created {
		t.Fatalf("push: %v %v %v", changed, created, err)
	}
	if got, _ := srv.File("acme", "apps", branch, "shop/deploy.yaml"); got != "# replicas owned by the HPA\n" {
		t.Fatalf("branch holds %q", got)
	}
	if got, _ := srv.File("acme", "apps", branch, "README.md"); got != "apps\n" {
		t.Fatalf("other files must stay: %q", got)
	}
	if got, _ := srv.File("acme", "apps", "main", "shop/deploy.yaml"); got != "replicas: 3\n" {
		t.Fatalf("main must not change: %q", got)
	}
	// The same content again changes nothing.
	if changed, _, err := c.Push(ctx, repo, base, branch, "Stop declaring replicas", files); err != nil || changed {
		t.Fatalf("second push changed %v %v", changed, err)
	}
	pr, err := c.OpenPR(ctx, repo, githost.NewPullRequest{Branch: branch, Base: base, Title: "t", Body: "b", Draft: true, Labels: []string{"driftfix"}, Reviewers: []string{"alice"}, Assignees: []string{"bob"}})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.PullRequests("acme", "apps")
	if len(got) != 1 || !got[0].Draft || got[0].Labels[0] != "driftfix" || got[0].Reviewers[0] != "alice" || got[0].Assignees[0] != "bob" {
		t.Fatalf("PR %+v", got)
	}
	found, err := c.FindPR(ctx, repo, branch)
	if err != nil || found == nil || found.Number != pr.Number || found.State != "open" {
		t.Fatalf("find: %+v %v", found, err)
	}
	if err := c.EditPR(ctx, repo, pr.Number, "t2", "b2"); err != nil {
		t.Fatal(err)
	}
	if err := c.ClosePR(ctx, repo, pr.Number, branch, "drift is gone"); err != nil {
		t.Fatal(err)
	}
	got = srv.PullRequests("acme", "apps")
	if got[0].State != "closed" || got[0].ClosedBy != "bot" || got[0].Title != "t2" || got[0].Body != "b2" {
		t.Fatalf("closed githost.PullRequest %+v", got[0])
	}
	if cs := srv.Comments("acme", "apps", pr.Number); len(cs) != 1 || cs[0].Body != "drift is gone" {
		t.Fatalf("comments %+v", cs)
	}
	if _, err := srv.File("acme", "apps", branch, "README.md"); err == nil {
		t.Fatal("the branch of a closed githost.PullRequest must be deleted")
	}
	if srv.Calls["POST /app/installations/{id}/access_tokens"] != 1 || srv.Calls["GET /repos/{owner}/{repo}/installation"] != 1 {
		t.Errorf("one installation lookup and one token expected: %v", srv.Calls)
	}
}

// TestMergeMovesBase: a person merging applies the branch onto main.
func TestMergeMovesBase(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	for i, f := range []string{"a.yaml", "b.yaml"} {
		if _, _, err := c.Push(ctx, repo, "main", "fix-"+f, "m", map[string]githost.Change{f: {Content: []byte(f)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.OpenPR(ctx, repo, githost.NewPullRequest{Branch: "fix-" + f, Base: "main", Title: f, Body: "b"}); err != nil {
			t.Fatal(err)
		}
		_ = i
	}
	for n := 1; n <= 2; n++ {
		if err := srv.Merge("acme", "apps", n); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a.yaml", "b.yaml", "README.md"} {
		if _, err := srv.File("acme", "apps", "main", f); err != nil {
			t.Errorf("main lacks %s after both merges: %v", f, err)
		}
	}
	pr, err := c.GetPR(ctx, repo, 2)
	if err != nil || !pr.Merged || pr.State != "closed" {
		t.Fatalf("merged githost.PullRequest reads %+v %v", pr, err)
	}
}

func TestRetriesAndLimits(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	srv.FailNext(502, 403, 429, 500)
	start := time.Now()
	if _, err := c.DefaultBranch(ctx, repo); err != nil {
		t.Fatalf("5xx and secondary limits must be retried: %v", err)
	}
	if srv.Secondary != 2 || time.Since(start) < 2*time.Second {
		t.Errorf("secondary limits must be waited out (Retry-After: 1): %d answers in %s", srv.Secondary, time.Since(start))
	}
	// The same GET again is conditional and answered 304.
	before := srv.NotModified
	if b, err := c.DefaultBranch(ctx, repo); err != nil || b != "main" || srv.NotModified != before+1 {
		t.Errorf("conditional GET: %q %v, 304s %d→%d", b, err, before, srv.NotModified)
	}
	// A primary limit that resets later than driftfix waits gives up.
	srv.SetRateLimit(0, time.Now().Add(time.Hour))
	_, err := c.FindPR(ctx, repo, "x")
	if !errors.Is(err, githost.ErrRateLimited) || !strings.Contains(err.Error(), "used up until") {
		t.Fatalf("rate limit: %v", err)
	}
}

func TestAuthErrors(t *testing.T) {
	srv, _ := emulator(t)
	ctx := context.Background()
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	wrong := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(other)})
	c, err := github.New(github.Config{AppID: srv.AppID, PrivateKey: wrong, BaseURL: srv.API})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DefaultBranch(ctx, githost.Repo{Owner: "acme", Name: "apps"})
	if err == nil || !strings.Contains(err.Error(), "public key") {
		t.Fatalf("a JWT signed with another key must be refused: %v", err)
	}
	c = appClient(t, srv)
	if _, err := c.DefaultBranch(ctx, githost.Repo{Owner: "acme", Name: "nope"}); err == nil || !strings.Contains(err.Error(), "not installed on acme/nope") {
		t.Fatalf("missing installation: %v", err)
	}
	if _, err := github.New(github.Config{AppID: 1, PrivateKey: []byte("not a key")}); err == nil || !strings.Contains(err.Error(), "private key") {
		t.Fatalf("bad key: %v", err)
	}
	if _, err := github.New(github.Config{}); err == nil || !strings.Contains(err.Error(), "no credentials") {
		t.Fatalf("no credentials: %v", err)
	}
	// Token mode works, and a wrong token's error does not carry the token.
	tc, err := github.New(github.Config{Token: srv.UserToken, BaseURL: srv.API})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := tc.DefaultBranch(ctx, githost.Repo{Owner: "acme", Name: "apps"}); err != nil || b != "main" {
		t.Fatalf("token mode: %q %v", b, err)
	}
	bad := "github_pat_wrong_secret_value"
	tc, _ = github.New(github.Config{Token: bad, BaseURL: srv.API})
	_, err = tc.DefaultBranch(ctx, githost.Repo{Owner: "acme", Name: "apps"})
	if err == nil || strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "Bad credentials") {
		t.Fatalf("bad token: %v", err)
	}
}

// FuzzParseRepo: any repository URL either names a non-empty owner and
// name without slashes, or is refused with an error; never a panic.
func FuzzParseRepo(f *testing.F) {
	for _, s := range []string{"https://github.com/acme/apps.git", "git@github.com:acme/apps.git", "ssh://git@h/a/b", "file:///x/a/b.git", "a@b:c", "https://x/", "://", "@:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, err := github.ParseRepo(in)
		if err != nil {
			return
		}
		if r.Owner == "" || r.Name == "" || strings.Contains(r.Owner+r.Name, "/") {
			t.Fatalf("%q parsed as %+v", in, r)
		}
	})
}
