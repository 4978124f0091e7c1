package github_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// TestRecentSubjects: the subjects of a branch's newest commits, newest
// first, first lines only, at most n, merge commits left out.
func TestRecentSubjects(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	for i, msg := range []string{"feat(shop): add the cart\n\nbody", "fix: typo", "Update README.md"} {
		if err := srv.CommitMessage("acme", "apps", "main", "f.txt", strings.Repeat("x", i+1), "dev", msg); err != nil {
			t.Fatal(err)
		}
	}
	// a merged pull request adds a merge commit
	if err := srv.CommitFile("acme", "apps", "topic", "g.txt", "g", "dev"); err != nil {
		t.Fatal(err)
	}
	n, err := srv.AddPR("acme", "apps", githubtest.PullRequest{Head: "topic", Base: "main", Title: "t", Author: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Merge("acme", "apps", n); err != nil {
		t.Fatal(err)
	}
	got, err := c.RecentSubjects(ctx, repo, "main", 3)
	if want := []string{"Edit g.txt", "Update README.md", "fix: typo"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("RecentSubjects = %q %v, want %q", got, err, want)
	}
	if _, err := c.RecentSubjects(ctx, repo, "no-such-branch", 3); err == nil {
		t.Error("a branch that is not there must be an error")
	}
}

// TestCommitIdentity: the name and email the sign-off uses are the author
// GitHub writes on the commits the App pushes.
func TestCommitIdentity(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	name, email, err := c.CommitIdentity(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]githost.Change{"shop/deploy.yaml": {Synced: []byte("replicas: 3\n"), Content: []byte("# owned by the HPA\n")}}
	if _, _, err := c.Push(ctx, repo, "main", "driftfix/x", "fix(shop): x", files); err != nil {
		t.Fatal(err)
	}
	cs, err := srv.Commits("acme", "apps", "driftfix/x")
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].AuthorName != name || cs[0].AuthorEmail != email || !strings.HasSuffix(email, "+driftfix[bot]@users.noreply.127.0.0.1") {
		t.Errorf("identity %s <%s>, commit author %s <%s>", name, email, cs[0].AuthorName, cs[0].AuthorEmail)
	}
	before := srv.CallCount("GET /users/{username}")
	if n2, e2, err := c.CommitIdentity(ctx, repo); err != nil || n2 != name || e2 != email || srv.CallCount("GET /users/{username}") != before {
		t.Errorf("a second look-up must come from memory: %s %s %v", n2, e2, err)
	}
}

// TestTeamReviewers: a reviewer written org/team is requested as a team,
// by its slug; a login as a person.
func TestTeamReviewers(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	files := map[string]githost.Change{"shop/deploy.yaml": {Synced: []byte("replicas: 3\n"), Content: []byte("# owned by the HPA\n")}}
	if _, _, err := c.Push(ctx, repo, "main", "driftfix/t", "fix: t", files); err != nil {
		t.Fatal(err)
	}
	if _, err := c.OpenPR(ctx, repo, githost.NewPullRequest{Branch: "driftfix/t", Base: "main", Title: "t", Body: "b", Reviewers: []string{"alice", "acme/sre"}}); err != nil {
		t.Fatal(err)
	}
	got := srv.PullRequests("acme", "apps")
	if len(got) != 1 || !slices.Equal(got[0].Reviewers, []string{"alice"}) || !slices.Equal(got[0].TeamReviewers, []string{"sre"}) {
		t.Errorf("reviewers %v, teams %v", got[0].Reviewers, got[0].TeamReviewers)
	}
}
