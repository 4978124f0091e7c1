package github_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// TestLabeledBy: who applied a label is the actor of its last labeled
// event, read from the issue events across pages; a label no event shows
// applied has no one, and label names compare without case, as GitHub's do.
func TestLabeledBy(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		steps func(srv *githubtest.Server, n int)
		want  string
	}{
		{"never labelled", func(*githubtest.Server, int) {}, ""},
		{"one label", func(s *githubtest.Server, n int) { s.LabelAs("acme", "apps", n, "triager", "driftfix/ignore") }, "triager"},
		{"other labels only", func(s *githubtest.Server, n int) { s.LabelAs("acme", "apps", n, "ops", "bug") }, ""},
		{"case of the name", func(s *githubtest.Server, n int) { s.LabelAs("acme", "apps", n, "ops", "DriftFix/Ignore") }, "ops"},
		{"removed and applied again", func(s *githubtest.Server, n int) {
			s.LabelAs("acme", "apps", n, "ops", "driftfix/ignore")
			s.UnlabelAs("acme", "apps", n, "triager", "driftfix/ignore")
			s.LabelAs("acme", "apps", n, "github-actions[bot]", "driftfix/ignore")
		}, "github-actions[bot]"},
		{"past the first pages", func(s *githubtest.Server, n int) {
			for i := 0; i < 130; i++ {
				s.LabelAs("acme", "apps", n, "ops", "driftfix/ignore")
				s.UnlabelAs("acme", "apps", n, "ops", "driftfix/ignore")
			}
			s.LabelAs("acme", "apps", n, "triager", "driftfix/ignore")
		}, "triager"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := emulator(t)
			app := appClient(t, srv)
			n, err := srv.AddPR("acme", "apps", githubtest.PullRequest{Title: "t", Head: "driftfix/z", Author: "driftfix[bot]"})
			if err != nil {
				t.Fatal(err)
			}
			tc.steps(srv, n)
			got, event, err := app.LabeledBy(ctx, githost.Repo{Owner: "acme", Name: "apps"}, n, "driftfix/ignore")
			if err != nil || got != tc.want || (got != "") != (event != 0) {
				t.Fatalf("LabeledBy = %q, event %d, %v; want %q", got, event, err, tc.want)
			}
		})
	}
}

// TestIssueEventsWireShape: the emulator lists issue events as GitHub
// does: oldest first, each with its id, event, actor.login and label.name.
func TestIssueEventsWireShape(t *testing.T) {
	srv, _ := emulator(t)
	n, _ := srv.AddPR("acme", "apps", githubtest.PullRequest{Title: "t", Head: "driftfix/z", Author: "driftfix[bot]"})
	srv.LabelAs("acme", "apps", n, "triager", "driftfix/ignore")
	srv.UnlabelAs("acme", "apps", n, "ops", "driftfix/ignore")
	req, _ := http.NewRequest(http.MethodGet, srv.API+"repos/acme/apps/issues/1/events", nil)
	req.Header.Set("Authorization", "Bearer "+srv.UserToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []struct {
		ID    int64  `json:"id"`
		Event string `json:"event"`
		Actor struct {
			Login, Type string
		} `json:"actor"`
		Label struct{ Name string } `json:"label"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&events); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	if len(events) != 2 || events[0].Event != "labeled" || events[0].Actor.Login != "triager" || events[0].Actor.Type != "User" ||
		events[0].Label.Name != "driftfix/ignore" || events[1].Event != "unlabeled" || events[1].ID <= events[0].ID {
		t.Fatalf("events %+v", events)
	}
}

// TestPermissionRoles: the collaborator permission API's role_name names
// maintain and triage, which its permission field folds into write and
// read; a custom role reads as the base role it extends, and an App's bot
// account (a workflow's github-actions[bot]), which GitHub does not answer
// for, has none. Only admin, maintain and write can write.
func TestPermissionRoles(t *testing.T) {
	ctx := context.Background()
	srv, _ := emulator(t)
	app := appClient(t, srv)
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	for _, tc := range []struct {
		login, role, want string
		write             bool
	}{
		{"root", "admin", githost.PermissionAdmin, true},
		{"lead", "maintain", githost.PermissionMaintain, true},
		{"dev", "write", githost.PermissionWrite, true},
		{"triager", "triage", githost.PermissionTriage, false},
		{"reader", "read", githost.PermissionRead, false},
		{"auditor", "security-auditor", githost.PermissionRead, false},
		{"stranger", "", githost.PermissionNone, false},
		{"github-actions[bot]", "", githost.PermissionNone, false},
		{"deployer[bot]", "write", githost.PermissionWrite, true},
	} {
		if tc.role != "" {
			srv.SetPermission("acme", "apps", tc.login, tc.role)
		}
		got, err := app.Permission(ctx, repo, tc.login)
		if err != nil || got != tc.want || githost.CanWrite(got) != tc.write {
			t.Errorf("Permission(%s) = %q, %v; want %q (can write: %v)", tc.login, got, err, tc.want, tc.write)
		}
	}
}

// TestBodyLimit: GitHub takes at most 65,536 characters in a pull
// request's or an issue's body and answers more with a 422 validation
// error on the body field; the emulator does the same, so a body driftfix
// lets grow past it fails in tests as it would on GitHub.
func TestBodyLimit(t *testing.T) {
	ctx := context.Background()
	srv, _ := emulator(t)
	app := appClient(t, srv)
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	if _, _, err := app.Push(ctx, repo, "main", "driftfix/long", "m", map[string]githost.Change{"README.md": {Synced: []byte("apps\n"), Content: []byte("long\n")}}); err != nil {
		t.Fatal(err)
	}
	fits := strings.Repeat("é", 65536) // characters, not bytes
	pr, err := app.OpenPR(ctx, repo, githost.NewPullRequest{Branch: "driftfix/long", Base: "main", Title: "t", Body: fits})
	if err != nil {
		t.Fatalf("a body of 65,536 characters must be taken: %v", err)
	}
	for _, tc := range []struct {
		name string
		call func(body string) error
	}{
		{"edit a pull request", func(b string) error { return app.EditPR(ctx, repo, pr.Number, "t", b) }},
		{"open an issue", func(b string) error { _, err := app.OpenIssue(ctx, repo, "t", b); return err }},
	} {
		err := tc.call(fits + "x")
		if err == nil || !strings.Contains(err.Error(), "422") || !strings.Contains(err.Error(), "body is too long (maximum is 65536 characters)") {
			t.Errorf("%s: a body over the limit must be refused with GitHub's 422: %v", tc.name, err)
		}
	}
	if prs := srv.PullRequests("acme", "apps"); len(prs) != 1 || prs[0].Body != fits {
		t.Errorf("the refused edit changed the pull request")
	}
}
