package github_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github"
)

// headOf pushes a branch and opens its pull request, returning its head commit.
func headOf(t *testing.T, c *github.Client) string {
	t.Helper()
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	files := map[string]githost.Change{"shop/deploy.yaml": {Synced: []byte("replicas: 3\n"), Content: []byte("# replicas owned by the HPA\n")}}
	if _, _, err := c.Push(ctx, repo, "main", "driftfix/shop/x", "fix", files); err != nil {
		t.Fatal(err)
	}
	pr, err := c.OpenPR(ctx, repo, githost.NewPullRequest{Branch: "driftfix/shop/x", Base: "main", Title: "fix", Body: "b"})
	if err != nil || pr.HeadSHA == "" {
		t.Fatalf("open: %v %+v", err, pr)
	}
	return pr.HeadSHA
}

// TestCheckRunOnePerCommit: as an App, a check is one check run per name and
// commit, created once and then updated in place.
func TestCheckRunOnePerCommit(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	sha := headOf(t, c)
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	ctx := context.Background()
	ck := githost.Check{Name: "driftfix/verify", Success: false, Title: "1 path still differs", Summary: "s", Text: "| a | b |", DetailsURL: "https://argocd.example.com/applications/argocd/shop"}
	if err := c.SetCheck(ctx, repo, sha, ck); err != nil {
		t.Fatal(err)
	}
	ck.Success, ck.Title = true, "Fixes every path"
	if err := c.SetCheck(ctx, repo, sha, ck); err != nil {
		t.Fatal(err)
	}
	runs := srv.CheckRuns("acme", "apps", sha)
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want one updated in place: %+v", len(runs), runs)
	}
	r := runs[0]
	if r.Name != "driftfix/verify" || r.Conclusion != "success" || r.Status != "completed" || r.Title != "Fixes every path" || r.Updates != 1 || r.DetailsURL != ck.DetailsURL {
		t.Fatalf("check run %+v", r)
	}
	if n := len(srv.Statuses("acme", "apps", sha)); n != 0 {
		t.Fatalf("an App writes check runs, not %d statuses", n)
	}
}

// TestCheckTokenModeIsCommitStatus: a token cannot create check runs, so the
// check is a commit status whose description fits GitHub's 140 characters.
func TestCheckTokenModeIsCommitStatus(t *testing.T) {
	srv, _ := emulator(t)
	c, err := github.New(github.Config{Token: srv.UserToken, BaseURL: srv.API, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sha := headOf(t, c)
	long := "2 of 3 paths still differ: " + strings.Repeat("é", 200)
	if err := c.SetCheck(context.Background(), githost.Repo{Owner: "acme", Name: "apps"}, sha, githost.Check{Name: "driftfix/verify", Title: long, Summary: "s"}); err != nil {
		t.Fatal(err)
	}
	sts := srv.Statuses("acme", "apps", sha)
	if len(sts) != 1 || sts[0].State != "failure" || sts[0].Context != "driftfix/verify" || len(sts[0].Description) > 140 || !strings.HasPrefix(sts[0].Description, "2 of 3 paths") {
		t.Fatalf("statuses %+v", sts)
	}
	if n := len(srv.CheckRuns("acme", "apps", sha)); n != 0 {
		t.Fatalf("%d check runs from a token", n)
	}
}
