package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github"
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
