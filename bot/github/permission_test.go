package github_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// TestInstallationPermissionsFromManifest: the emulator's installations
// hold the App manifest's permissions (deploy/github-app.yaml), and an
// installation token says so when minted, as GitHub's does.
func TestInstallationPermissionsFromManifest(t *testing.T) {
	srv, _ := emulator(t)
	want, err := githubtest.ManifestPermissions()
	if err != nil || len(want) == 0 {
		t.Fatalf("manifest permissions %v %v", want, err)
	}
	if got := srv.Permissions(); !maps.Equal(got, want) {
		t.Errorf("installation permissions %v, manifest %v", got, want)
	}
	c := appClient(t, srv)
	if _, err := c.DefaultBranch(context.Background(), githost.Repo{Owner: "acme", Name: "apps"}); err != nil {
		t.Fatal(err)
	}
	used := srv.PermissionsUsed()
	if len(used) != 1 || used[0].Route != "GET /repos/{owner}/{repo}" || used[0].Grant != (githubtest.Grant{Name: "metadata", Access: "read"}) {
		t.Errorf("reading a repository used %v, want metadata=read", used)
	}
}

// TestMissingPermission: a call the installation's permissions do not cover
// is refused with GitHub's 403 and body, and driftfix's error names the
// permission and where to grant it.
func TestMissingPermission(t *testing.T) {
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	for _, tc := range []struct {
		name, perm, level, need string // the installation holds perm at level ("": not at all)
		call                    func(context.Context, *github.Client) error
	}{
		{"open a pull request", "pull_requests", "read", "pull_requests=write", func(ctx context.Context, c *github.Client) error {
			_, err := c.OpenPR(ctx, repo, githost.NewPullRequest{Branch: "main", Base: "main", Title: "t", Body: "b"})
			return err
		}},
		{"commit a fix", "contents", "read", "contents=write", func(ctx context.Context, c *github.Client) error {
			_, _, err := c.Push(ctx, repo, "main", "driftfix/x", "m", map[string]githost.Change{"README.md": {Synced: []byte("apps\n"), Content: []byte("fixed\n")}})
			return err
		}},
		{"post a check", "checks", "read", "checks=write", func(ctx context.Context, c *github.Client) error {
			// Any commit will do: the refusal comes before the commit is looked up.
			return c.SetCheck(ctx, repo, strings.Repeat("a", 40), githost.Check{Name: "driftfix/verify", Success: true, Title: "t"})
		}},
		{"open the dashboard", "issues", "read", "issues=write", func(ctx context.Context, c *github.Client) error {
			_, err := c.OpenIssue(ctx, repo, "Drift Dashboard", "b")
			return err
		}},
		{"read the repository", "metadata", "", "metadata=read", func(ctx context.Context, c *github.Client) error {
			_, err := c.DefaultBranch(ctx, repo)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := emulator(t)
			perms := srv.Permissions()
			delete(perms, tc.perm)
			if tc.level != "" {
				perms[tc.perm] = tc.level
			}
			srv.SetPermissions(perms)
			err := tc.call(context.Background(), appClient(t, srv))
			if !errors.Is(err, github.ErrPermission) || !strings.Contains(err.Error(), tc.need) || !strings.Contains(err.Error(), "Resource not accessible by integration") {
				t.Errorf("error %v, want one naming %s", err, tc.need)
			}
		})
	}
}

// TestForbiddenAsGitHubAnswers: the refusal on the wire is GitHub's: 403,
// its message, and X-Accepted-GitHub-Permissions naming every set that
// would do (an issue's route on a pull request takes either permission; on
// an issue, issues alone).
func TestForbiddenAsGitHubAnswers(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	if _, _, err := c.Push(ctx, repo, "main", "driftfix/x", "m", map[string]githost.Change{"README.md": {Synced: []byte("apps\n"), Content: []byte("fixed\n")}}); err != nil {
		t.Fatal(err)
	}
	pr, err := c.OpenPR(ctx, repo, githost.NewPullRequest{Branch: "driftfix/x", Base: "main", Title: "t", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	is, err := c.OpenIssue(ctx, repo, "Drift Dashboard", "b")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.GitToken(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetPermissions(map[string]string{"metadata": "read", "pull_requests": "write"})
	post := func(path string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.API+path, strings.NewReader(`{"body":"hi"}`))
		req.Header.Set("Authorization", "token "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var body map[string]any
		json.Unmarshal(raw, &body)
		return resp, body
	}
	if resp, _ := post("repos/acme/apps/issues/" + strconv.Itoa(pr.Number) + "/comments"); resp.StatusCode != http.StatusCreated {
		t.Errorf("comment on a pull request with pull_requests=write: %s", resp.Status)
	}
	resp, body := post("repos/acme/apps/issues/" + strconv.Itoa(is.Number) + "/comments")
	if resp.StatusCode != http.StatusForbidden || body["message"] != "Resource not accessible by integration" || resp.Header.Get("X-Accepted-GitHub-Permissions") != "issues=write" {
		t.Errorf("comment on an issue without issues: %s %v %q", resp.Status, body, resp.Header.Get("X-Accepted-GitHub-Permissions"))
	}
	srv.SetPermissions(map[string]string{"metadata": "read"})
	resp, _ = post("repos/acme/apps/issues/" + strconv.Itoa(pr.Number) + "/comments")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Accepted-GitHub-Permissions") != "pull_requests=write; issues=write" {
		t.Errorf("comment on a pull request without either: %s %q", resp.Status, resp.Header.Get("X-Accepted-GitHub-Permissions"))
	}
}

// TestGraphQLAndGitRefused: GitHub's GraphQL answers a query the
// installation may not make with a FORBIDDEN error, which driftfix names as
// the permission it lacks; a Git read of a private repository needs
// contents=read.
func TestGraphQLAndGitRefused(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	is, err := c.OpenIssue(ctx, repo, "Drift Dashboard", "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.IssueLastEditor(ctx, repo, is.Number); err != nil {
		t.Fatalf("with the manifest's permissions: %v", err)
	}
	tok, err := c.GitToken(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetPrivate("acme", "apps", true)
	fetch := func() int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.GitURL("acme", "apps")+"/info/refs?service=git-upload-pack", nil)
		req.SetBasicAuth("x-access-token", tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := fetch(); code != http.StatusOK {
		t.Fatalf("Git read of a private repository with contents=write: %d", code)
	}
	srv.SetPermissions(map[string]string{"metadata": "read"})
	if _, _, err := c.IssueLastEditor(ctx, repo, is.Number); !errors.Is(err, github.ErrPermission) || !strings.Contains(err.Error(), "issues=read") {
		t.Errorf("GraphQL without issues: %v, want an error naming issues=read", err)
	}
	if code := fetch(); code != http.StatusForbidden {
		t.Errorf("Git read of a private repository without contents: %d, want 403", code)
	}
}
