package github_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/secretfile"
)

// TestLoginAndOwn: the bot's account is the App's "<slug>[bot]" or the
// token's user, looked up once; a githost.PullRequest is its own only from the repository
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
	repo := githost.Repo{Owner: "acme", Name: "apps"}
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

// TestPushRefusesRevertsAndForeignHeads: Push writes nothing when a file
// changed on the base since the synced content, nor over a branch whose head
// a person committed; ClosePR then keeps that branch.
func TestPushRefusesRevertsAndForeignHeads(t *testing.T) {
	ctx := context.Background()
	srv, _ := emulator(t)
	c := appClient(t, srv)
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	fix := map[string]githost.Change{"shop/deploy.yaml": {Synced: []byte("replicas: 3\n"), Content: []byte("# HPA\n")}}
	if err := srv.CommitFile("acme", "apps", "main", "shop/deploy.yaml", "replicas: 5\n", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Push(ctx, repo, "main", "driftfix/a", "m", fix); !errors.Is(err, githost.ErrFileChanged) {
		t.Fatalf("push over a changed file: %v", err)
	}
	if len(srv.Branches("acme", "apps")) != 1 {
		t.Fatalf("branches %v", srv.Branches("acme", "apps"))
	}
	fix["shop/deploy.yaml"] = githost.Change{Synced: []byte("replicas: 5\n"), Content: []byte("# HPA\n")}
	if _, _, err := c.Push(ctx, repo, "main", "driftfix/a", "m", fix); err != nil {
		t.Fatal(err)
	}
	if err := srv.CommitFile("acme", "apps", "driftfix/a", "README.md", "bob\n", "bob"); err != nil {
		t.Fatal(err)
	}
	fix["shop/deploy.yaml"] = githost.Change{Synced: []byte("replicas: 5\n"), Content: []byte("# HPA owns replicas\n")}
	if _, _, err := c.Push(ctx, repo, "main", "driftfix/a", "m", fix); !errors.Is(err, githost.ErrNotOurs) || !strings.Contains(err.Error(), "by bob") {
		t.Fatalf("push over bob's commit: %v", err)
	}
	if got, _ := srv.File("acme", "apps", "driftfix/a", "README.md"); got != "bob\n" {
		t.Fatalf("bob's commit was overwritten: %q", got)
	}
	n, err := c.OpenPR(ctx, repo, githost.NewPullRequest{Branch: "driftfix/a", Base: "main", Title: "t", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ClosePR(ctx, repo, n.Number, "driftfix/a", "closing"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(srv.Branches("acme", "apps"), "driftfix/a") {
		t.Error("a branch with bob's commit was deleted")
	}
}

// TestTokenRotation: in token mode a token read from a file again when it
// changes is used from the next request on, and never shows in an error.
func TestTokenRotation(t *testing.T) {
	ctx := context.Background()
	srv, _ := emulator(t)
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(srv.UserToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := secretfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := github.New(github.Config{TokenFunc: f.Token, BaseURL: srv.API, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	if _, err := c.DefaultBranch(ctx, repo); err != nil {
		t.Fatal(err)
	}
	const rotated = "github_pat_rotated_0123456789"
	srv.SetUserToken(rotated)
	if _, err := c.DefaultBranch(ctx, repo); err == nil {
		t.Fatal("the old token must be refused now")
	}
	if err := os.WriteFile(path, []byte(rotated+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DefaultBranch(ctx, repo); err != nil {
		t.Fatalf("the rotated token must be used without a restart: %v", err)
	}
	if _, err := c.GetPR(ctx, repo, 999); err == nil || strings.Contains(err.Error(), rotated) {
		t.Errorf("error %v", err)
	}
}

// TestReacted: driftfix's reaction to a command is found by its account,
// never by another's reaction of the same kind; reacting twice leaves one
// reaction, as on GitHub.
func TestReacted(t *testing.T) {
	ctx := context.Background()
	srv, _ := emulator(t)
	app := appClient(t, srv)
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	n, _ := srv.AddPR("acme", "apps", githubtest.PullRequest{Title: "t", Head: "driftfix/z", Author: "driftfix[bot]"})
	id := srv.CommentAs("acme", "apps", n, "ops", "MEMBER", "/driftfix recheck")
	if got, err := app.Reacted(ctx, repo, id, "driftfix[bot]"); err != nil || got {
		t.Fatalf("no reaction yet: %v %v", got, err)
	}
	srv.ReactAs("acme", "apps", id, "mallory", "+1")
	if got, err := app.Reacted(ctx, repo, id, "driftfix[bot]"); err != nil || got {
		t.Fatalf("another account's +1 is not driftfix's: %v %v", got, err)
	}
	for i := 0; i < 2; i++ {
		if err := app.React(ctx, repo, id, "+1"); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := app.Reacted(ctx, repo, id, "driftfix[bot]"); err != nil || !got {
		t.Fatalf("driftfix's reaction must be found: %v %v", got, err)
	}
	if cs := srv.Comments("acme", "apps", n); len(cs) != 1 || strings.Join(cs[0].Reactions, ",") != "+1 by mallory,+1 by driftfix[bot]" {
		t.Errorf("reactions %+v", cs)
	}
}

// TestHolds: a revision holds a commit when it is that commit or a later
// one on top of it, as GitHub's compare says; an older revision or an
// unknown one does not.
func TestHolds(t *testing.T) {
	ctx := context.Background()
	srv, _ := emulator(t)
	app := appClient(t, srv)
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	first := srv.Head("acme", "apps", "main")
	if err := srv.CommitFile("acme", "apps", "main", "README.md", "apps, again\n", "dev"); err != nil {
		t.Fatal(err)
	}
	second := srv.Head("acme", "apps", "main")
	unknown := strings.Repeat("0", 40)
	for _, tc := range []struct {
		revision, commit string
		want             bool
	}{
		{first, first, true},
		{second, first, true},
		{first, second, false},
		{second, unknown, false},
		{unknown, first, false},
	} {
		if got, err := app.Holds(ctx, repo, tc.revision, tc.commit); err != nil || got != tc.want {
			t.Errorf("Holds(%.7s, %.7s) = %v, %v; want %v", tc.revision, tc.commit, got, err, tc.want)
		}
	}
}
