package github_test

import (
	"context"
	"testing"

	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// TestLoginAndOwn: the bot's account is the App's "<slug>[bot]" or the
// token's user, looked up once; a PR is its own only from the repository
// itself and opened by that account.
func TestLoginAndOwn(t *testing.T) {
	ctx := context.Background()
	srv, _ := emulator(t)
	app := appClient(t, srv)
	tok, err := github.New(github.Config{Token: srv.UserToken, BaseURL: srv.API})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    *github.Client
		want string
	}{{app, "driftfix[bot]"}, {tok, "octo-user"}} {
		for i := 0; i < 3; i++ {
			if got, err := tc.c.Login(ctx); err != nil || got != tc.want {
				t.Fatalf("login %q, %v; want %q", got, err, tc.want)
			}
		}
	}
	if n := srv.CallCount("GET /app") + srv.CallCount("GET /user"); n != 2 {
		t.Errorf("the account must be looked up once per client, got %d calls", n)
	}
	repo := github.Repo{Owner: "acme", Name: "apps"}
	fork, _ := srv.AddPR("acme", "apps", githubtest.PullRequest{Title: "t", Head: "driftfix/x", HeadRepo: "mallory/apps", Author: "driftfix[bot]"})
	person, _ := srv.AddPR("acme", "apps", githubtest.PullRequest{Title: "t", Head: "driftfix/y", Author: "alice"})
	own, _ := srv.AddPR("acme", "apps", githubtest.PullRequest{Title: "t", Head: "driftfix/z", Author: "driftfix[bot]"})
	for n, want := range map[int]bool{fork: false, person: false, own: true} {
		pr, err := app.GetPR(ctx, repo, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := pr.Own(repo, "driftfix[bot]"); got != want {
			t.Errorf("#%d (head %s, author %s): own %v, want %v", n, pr.HeadRepo, pr.Author, got, want)
		}
	}
}
