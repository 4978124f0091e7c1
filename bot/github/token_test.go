package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/gitrepo"
)

// TestGitToken: the token Git reads a repository with is the App's
// installation token for its owner, minted again once it has expired; an
// owner without the App says so with ErrNotInstalled.
func TestGitToken(t *testing.T) {
	srv, _ := emulator(t)
	srv.SetTokenTTL(time.Second) // ghinstallation mints again within a minute of expiry
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	first, err := c.GitToken(ctx, repo)
	if err != nil || !strings.HasPrefix(first, "ghs_") {
		t.Fatalf("installation token %q, %v", first, err)
	}
	mints := srv.CallCount("POST /app/installations/{id}/access_tokens")
	time.Sleep(1100 * time.Millisecond)
	second, err := c.GitToken(ctx, repo)
	if err != nil || second == first || srv.CallCount("POST /app/installations/{id}/access_tokens") != mints+1 {
		t.Fatalf("an expired token was not minted again: %v (%d mints before, %d after)", err, mints, srv.CallCount("POST /app/installations/{id}/access_tokens"))
	}
	if _, err := c.GitToken(ctx, githost.Repo{Owner: "nobody", Name: "x"}); !errors.Is(err, github.ErrNotInstalled) {
		t.Errorf("owner without the App: %v", err)
	}
	if got := c.GitTokenName("acme"); !strings.Contains(got, "installation token for acme") {
		t.Errorf("GitTokenName %q", got)
	}

	tc, err := github.New(github.Config{Token: srv.UserToken, BaseURL: srv.API})
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := tc.GitToken(ctx, repo); err != nil || tok != srv.UserToken {
		t.Errorf("token mode gives %v and not its token", err)
	}
}

func TestHostRepo(t *testing.T) {
	c, err := github.New(github.Config{Token: "t", BaseURL: "https://ghe.example.com:8443/api/v3/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url  string
		want string
	}{
		{"https://ghe.example.com:8443/acme/apps.git", "acme/apps"},
		{"https://GHE.example.com:8443/acme/apps", "acme/apps"},
		{"https://ghe.example.com/acme/apps.git", ""},     // another port: another host
		{"http://ghe.example.com:8443/acme/apps.git", ""}, // never a token in clear text
		{"git@ghe.example.com:acme/apps.git", ""},         // an installation token is not an SSH key
		{"https://ghe.example.com.evil.test:8443/acme/apps", ""},
	} {
		r, ok := c.HostRepo(tc.url)
		if got := ""; ok {
			got = r.String()
			if got != tc.want {
				t.Errorf("HostRepo(%s) = %s, want %q", tc.url, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("HostRepo(%s) is not on the host, want %s", tc.url, tc.want)
		}
	}
	dotcom, _ := github.New(github.Config{Token: "t"})
	if r, ok := dotcom.HostRepo("https://github.com/acme/apps.git"); !ok || r.String() != "acme/apps" {
		t.Errorf("github.com: %v %v", r, ok)
	}
}

// TestEmulatorGitOverHTTPS: the emulator answers Git as GitHub does for a
// private repository: 401 without a token or with a bad one, 404 for an
// installation token of another owner, the files with the owner's
// installation token or the user token.
func TestEmulatorGitOverHTTPS(t *testing.T) {
	srv, err := githubtest.NewTLSServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	for _, o := range []string{"acme", "other"} {
		if _, err := githubtest.NewRepo(dir, o, "apps", map[string]string{"deploy.yaml": "replicas: 1\n"}); err != nil {
			t.Fatal(err)
		}
		if err := srv.AddRepo(dir, o, "apps"); err != nil {
			t.Fatal(err)
		}
		srv.SetPrivate(o, "apps", true)
	}
	c, err := github.New(github.Config{AppID: srv.AppID, PrivateKey: srv.PrivateKeyPEM, BaseURL: srv.API, Transport: srv.Client().Transport})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	acme, err := c.GitToken(ctx, githost.Repo{Owner: "acme", Name: "apps"})
	if err != nil {
		t.Fatal(err)
	}
	read := func(owner, token string) error {
		access := func(context.Context, string) (gitrepo.Access, error) {
			a := gitrepo.Access{CABundle: srv.CertificatePEM(), Via: "none given"}
			if token != "" {
				a.Auth, a.Via = &githttp.BasicAuth{Username: github.GitUser, Password: token}, "the test token"
			}
			return a, nil
		}
		_, err := gitrepo.Reader{Cache: gitrepo.NewCache(4, 1<<20), Access: access}.Files(ctx, srv.GitURL(owner, "apps"), "main")
		return err
	}
	for _, tc := range []struct {
		name, owner, token, want string
	}{
		{"anonymous", "acme", "", "asks for credentials"},
		{"bad token", "acme", "ghs_nope", "refused the test token"},
		{"another owner's installation", "other", acme, "does not exist, or the test token may not read it"},
		{"the owner's installation", "acme", acme, ""},
		{"the user token", "other", srv.UserToken, ""},
	} {
		err := read(tc.owner, tc.token)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		case err != nil && tc.token != "" && strings.Contains(err.Error(), tc.token):
			t.Errorf("%s: the token is in the error", tc.name)
		}
	}
}
