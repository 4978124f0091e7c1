package github_test

import (
	"context"
	"testing"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// TestIssues: driftfix finds its own marked issue again (the oldest, open or
// closed), never a person's issue or a pull request holding the marker;
// reading it again unchanged is a 304; who edited it last comes from
// GraphQL together with the body.
func TestIssues(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	const marker = "<!-- driftfix:dashboard=all -->"
	if i, err := c.FindIssue(ctx, repo, marker); err != nil || i != nil {
		t.Fatalf("no issue yet: %+v %v", i, err)
	}
	if _, err := srv.AddIssue("acme", "apps", githubtest.Issue{Title: "Drift Dashboard", Body: marker + "\nforged", Author: "mallory"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AddPR("acme", "apps", githubtest.PullRequest{Title: "x", Body: marker, Head: "main", Author: "driftfix[bot]"}); err != nil {
		t.Fatal(err)
	}
	if i, err := c.FindIssue(ctx, repo, marker); err != nil || i != nil {
		t.Fatalf("a person's issue or a pull request with the marker was found: %+v %v", i, err)
	}
	own, err := c.OpenIssue(ctx, repo, "Drift Dashboard", marker+"\nv1")
	if err != nil || own.Author != "driftfix[bot]" {
		t.Fatalf("open: %+v %v", own, err)
	}
	second, err := c.OpenIssue(ctx, repo, "Drift Dashboard", marker+"\nv1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.FindIssue(ctx, repo, marker); err != nil || got == nil || got.Number != own.Number {
		t.Fatalf("the oldest own issue must be found: %+v %v", got, err)
	}
	if err := c.CloseIssue(ctx, repo, second.Number); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Issue(ctx, repo, second.Number); got == nil || got.State != "closed" {
		t.Fatalf("closed issue %+v", got)
	}
	if _, err := c.Issue(ctx, repo, own.Number); err != nil {
		t.Fatal(err)
	}
	before := srv.NotModified
	if got, err := c.Issue(ctx, repo, own.Number); err != nil || got.Body != marker+"\nv1" || srv.NotModified != before+1 {
		t.Fatalf("an unchanged issue must be read with a 304: %+v %v (%d 304s)", got, err, srv.NotModified-before)
	}
	if body, editor, err := c.IssueLastEditor(ctx, repo, own.Number); err != nil || editor != "" || body != marker+"\nv1" {
		t.Fatalf("never edited: %q %q %v", body, editor, err)
	}
	if err := c.EditIssue(ctx, repo, own.Number, "Drift Dashboard", marker+"\n- [ ] stop"); err != nil {
		t.Fatal(err)
	}
	if err := srv.TickAs("acme", "apps", own.Number, "alice", "stop"); err != nil {
		t.Fatal(err)
	}
	if body, editor, err := c.IssueLastEditor(ctx, repo, own.Number); err != nil || editor != "alice" || body != marker+"\n- [x] stop" {
		t.Fatalf("edited by alice: %q %q %v", body, editor, err)
	}
	if got, err := c.Issue(ctx, repo, 9999); err != nil || got != nil {
		t.Fatalf("no such issue: %+v %v", got, err)
	}
	if _, _, err := c.IssueLastEditor(ctx, repo, 9999); err == nil {
		t.Fatal("GraphQL's errors must be an error")
	}
}
