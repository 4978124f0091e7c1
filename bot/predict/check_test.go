package predict

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/internal/gittest"
)

// TestCheckRunThroughGitHub publishes predict's check on two pull request
// heads through the GitHub emulator as the App: a change that will drift
// gets a failed driftfix/predict run with an annotation at the file and
// line of each prediction; a clean change a neutral run without any.
func TestCheckRunThroughGitHub(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	srv, err := githubtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	bare, err := githubtest.NewRepo(dir, "acme", "apps", map[string]string{
		"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("  replicas: 2\n", "500m")})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddRepo(dir, "acme", "apps"); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "work")
	git := func(args ...string) string {
		t.Helper()
		return gittest.Run(t, work, nil, args...)
	}
	if out, err := exec.Command("git", "clone", "-q", bare, work).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	branch := func(name, file, content string) string {
		git("checkout", "-q", "-b", name, "origin/main")
		if err := os.WriteFile(filepath.Join(work, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", ".")
		git("commit", "-q", "-m", name)
		git("push", "-q", "origin", name)
		return git("rev-parse", "HEAD")
	}
	drifting := branch("add-hpa", "apps/web/hpa.yaml", webHPA)
	clean := branch("bump-image", "apps/web/deploy.yaml", strings.Replace(deployment("  replicas: 2\n", "500m"), "nginx:1.27", "nginx:1.28", 1))

	ctx := context.Background()
	c, err := github.New(github.Config{AppID: srv.AppID, PrivateKey: srv.PrivateKeyPEM, BaseURL: srv.API, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	read := func(rev string) Revision {
		files, err := gitrepo.Files(ctx, "file://"+filepath.ToSlash(bare), rev, gitrepo.Limits{})
		if err != nil {
			t.Fatalf("read %s: %v", rev, err)
		}
		return Revision{Name: rev, Files: files}
	}
	base := read("main")
	for _, sha := range []string{drifting, clean} {
		res, err := Run(context.Background(), base, read(sha), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SetCheck(ctx, repo, sha, Check(res)); err != nil {
			t.Fatalf("set check on %s: %v", sha, err)
		}
		// Published again for the same commit: one run, annotations not repeated.
		if err := c.SetCheck(ctx, repo, sha, Check(res)); err != nil {
			t.Fatalf("set check again on %s: %v", sha, err)
		}
	}

	runs := srv.CheckRuns("acme", "apps", drifting)
	if len(runs) != 1 || runs[0].Name != CheckName || runs[0].Conclusion != "failure" || !strings.Contains(runs[0].Title, "1 field will stay OutOfSync") {
		t.Fatalf("drifting head: %+v", runs)
	}
	if a := runs[0].Annotations; len(a) != 1 || a[0].Path != "apps/web/deploy.yaml" || a[0].StartLine != 6 || a[0].Level != "warning" ||
		!strings.Contains(a[0].Title, "hpa-replicas") || !strings.Contains(a[0].Message, "remove-field") {
		t.Errorf("annotations: %+v", a)
	}
	if !strings.Contains(runs[0].Text, "`/spec/replicas`") || !strings.Contains(runs[0].Text, "`apps/web/deploy.yaml:6`") {
		t.Errorf("text:\n%s", runs[0].Text)
	}
	runs = srv.CheckRuns("acme", "apps", clean)
	if len(runs) != 1 || runs[0].Conclusion != "neutral" || len(runs[0].Annotations) != 0 {
		t.Errorf("clean head: %+v", runs)
	}
}
