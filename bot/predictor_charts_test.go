package bot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/helmrepo"
	"github.com/driftfix/driftfix/bot/helmrepo/helmrepotest"
	"github.com/driftfix/driftfix/bot/internal/gittest"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/remediations/render"
)

// TestPredictorFetchesOnlyWhatBaseNames: a fork's pull request that bumps
// the chart of an Application (a chart repository the base branch names)
// and adds an Application of another chart repository is predicted with
// the first fetched and the second sent nothing: listed as not predicted,
// naming why.
func TestPredictorFetchesOnlyWhatBaseNames(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	chart := func(name, version string) []byte {
		return helmrepotest.Package(t, name, version, map[string]string{"templates/deploy.yaml": fmt.Sprintf(predictDeploy, "  replicas: 3\n"), "templates/hpa.yaml": predictHPA})
	}
	trusted := helmrepotest.NewRepo(t, chart("web", "1.0.0"), chart("web", "1.1.0"))
	other := helmrepotest.NewRepo(t, chart("evil", "1.0.0"))
	app := func(name, repo, version string) string {
		return fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: %s, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source: {repoURL: %q, chart: %s, targetRevision: %s}\n", name, repo, name, version)
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		return gittest.Run(t, dir, nil, args...)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("web.yaml", app("web", trusted.URL, "1.0.0"))
	git("add", ".")
	git("commit", "-q", "-m", "base")
	git("checkout", "-q", "-b", "fork")
	write("web.yaml", app("web", trusted.URL, "1.1.0"))
	write("evil.yaml", app("evil", other.URL, "1.0.0"))
	git("add", ".")
	git("commit", "-q", "-m", "fork")
	head := git("rev-parse", "HEAD")
	f, err := helmrepo.New(helmrepo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := plan.Instance{Name: "main",
		BranchFiles: func(ctx context.Context, repoURL, branch string) (map[string]string, string, error) {
			return gitrepo.Head(ctx, repoURL, branch, gitrepo.Limits{})
		}}
	p := NewPredictor(&config.Config{}, []plan.Instance{in}, &plan.CycleResult{})
	p.Charts = func(ref render.ChartRef) (string, []byte, error) { return f.Fetch(context.Background(), ref) }
	out, err := p.Predict(context.Background(), proposals.PRHead{RepoURL: "file://" + filepath.ToSlash(dir), Number: 7, Base: "main", DefaultBranch: "main", HeadSHA: head, Fork: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := other.Requests.Load(); n != 0 {
		t.Fatalf("the chart repository only the fork names got %d requests", n)
	}
	if trusted.Requests.Load() == 0 || strings.Join(out.Applications, ",") != "web" {
		t.Fatalf("predicted %v (%d requests to the base's repository), want web; check %+v", out.Applications, trusted.Requests.Load(), out.Check)
	}
	if !strings.Contains(out.Check.Summary+out.Check.Text, "evil") || !strings.Contains(out.Check.Summary+out.Check.Text, "is not named at main") {
		t.Errorf("the check does not say why evil was not predicted: %+v", out.Check)
	}
}
