package bot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/internal/gittest"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/proposals"
)

const predictDeploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
%s  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`

const predictHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
`

// TestPredictorPullRequest: a pull request is predicted with the
// Applications Argo CD lists on its repository at its base branch (the
// repository holds no Application manifest) and the cluster context of
// their instance; a fork's is predicted from Git alone; an Application that
// tracks another branch is not the pull request's.
func TestPredictorPullRequest(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		return gittest.Run(t, dir, nil, args...)
	}
	write := func(content string) {
		if err := os.MkdirAll(filepath.Join(dir, "apps/web"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "apps/web/deploy.yaml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write(fmt.Sprintf(predictDeploy, ""))
	// The HPA is the application's own: only an autoscaler in Git is
	// granted spec.replicas.
	if err := os.WriteFile(filepath.Join(dir, "apps/web/hpa.yaml"), []byte(predictHPA), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-q", "-m", "base")
	git("checkout", "-q", "-b", "scale")
	write(fmt.Sprintf(predictDeploy, "  replicas: 3\n"))
	git("commit", "-q", "-am", "replicas")
	head := git("rev-parse", "HEAD")
	repoURL := "file://" + filepath.ToSlash(dir)

	app := func(name, revision string) *drift.Snapshot {
		return &drift.Snapshot{Application: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": name, "namespace": "argocd"},
			"spec": map[string]any{"project": "default", "destination": map[string]any{"namespace": "shop"},
				"source": map[string]any{"repoURL": repoURL, "path": "apps/web", "targetRevision": revision}},
			"status": map[string]any{"sync": map[string]any{"status": "Synced", "revision": revision}}}}
	}
	srv := argocdtest.NewServer("tok", app("web", "main"), app("web-canary", "main"), app("web-staging", "staging"))
	t.Cleanup(srv.Close)
	ac, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "tok", Retries: 1, Backoff: time.Millisecond, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hpa := map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "web", "namespace": "shop"},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": int64(2), "maxReplicas": int64(5)}}
	in := plan.Instance{Name: "main", Client: ac,
		BranchFiles: func(ctx context.Context, repoURL, branch string) (map[string]string, string, error) {
			return gitrepo.Head(ctx, repoURL, branch, gitrepo.Limits{})
		}}
	res := &plan.CycleResult{URLs: map[string]string{"main": ""}, Shards: map[string]string{"main": ""}}
	for _, n := range []string{"web", "web-canary", "web-staging"} {
		res.Apps = append(res.Apps, plan.AppState{Instance: "main", App: argocd.AppSummary{Name: n, Namespace: "argocd", RepoURL: repoURL}})
	}
	p := NewPredictor(&config.Config{}, []plan.Instance{in}, res)
	p.cluster = func(string) func(*drift.Snapshot) []drift.Object {
		return func(*drift.Snapshot) []drift.Object { return []drift.Object{hpa} }
	}
	if got := p.Repositories(); len(got) != 1 || got[0] != repoURL {
		t.Fatalf("repositories %v", got)
	}

	tests := []struct {
		name        string
		base        string
		fork        bool
		predictions int
		apps        string
		text        string
		maxApps     int
		summary     string
	}{
		{name: "a pull request to the branch web and web-canary track", base: "main", predictions: 2, apps: "web,web-canary"},
		{name: "the same change from a fork", base: "main", fork: true, text: "comes from a fork"},
		{name: "more applications than the bot predicts per pull request", base: "main", maxApps: 1, summary: "touches more than 1 applications"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p.maxApps = tc.maxApps
			if p.maxApps == 0 {
				p.maxApps = maxPRApplications
			}
			out, err := p.Predict(context.Background(), proposals.PRHead{RepoURL: repoURL, Number: 1, Base: tc.base, DefaultBranch: "main", HeadSHA: head, Fork: tc.fork})
			if err != nil {
				t.Fatal(err)
			}
			if out.Predictions != tc.predictions || strings.Join(out.Applications, ",") != tc.apps {
				t.Fatalf("predicted %d in %v, want %d in %q; check %+v", out.Predictions, out.Applications, tc.predictions, tc.apps, out.Check)
			}
			if tc.predictions > 0 {
				if len(out.Check.Annotations) != 2 || out.Check.Annotations[0].Path != "apps/web/deploy.yaml" || out.Check.Annotations[0].Line != 6 {
					t.Errorf("annotations %+v", out.Check.Annotations)
				}
				if out.Review == nil || len(out.Review.Comments) != 1 || out.Review.Comments[0].Line != 6 {
					t.Errorf("review %+v", out.Review)
				}
			} else if !out.Check.Neutral || out.Review != nil {
				t.Errorf("want a neutral check and no review: %+v %+v", out.Check, out.Review)
			}
			if !strings.Contains(out.Check.Summary, tc.summary) {
				t.Errorf("check summary %q lacks %q", out.Check.Summary, tc.summary)
			}
			if !strings.Contains(out.Check.Text, tc.text) {
				t.Errorf("check text %q lacks %q", out.Check.Text, tc.text)
			}
		})
	}
}

// TestPredictorBudget: a pull request whose render runs long (a Jsonnet
// program of some hundred million calls) gets, at its budget
// (limits.predictPerPullRequest), a neutral check that names the budget and
// its key, its render killed; the next pull request of the same cycle is
// still predicted; once the cycle's budget (limits.predictPerCycle) is
// spent, a pull request waits for the next cycle without being rendered.
func TestPredictorBudget(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		return gittest.Run(t, dir, nil, args...)
	}
	repoURL := "file://" + filepath.ToSlash(dir)
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	application := func(name, path string) string {
		return fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: %s, namespace: argocd}\nspec:\n  project: default\n  destination: {namespace: shop}\n  source: {repoURL: %q, path: %s, targetRevision: main}\n", name, repoURL, path)
	}
	git("init", "-q", "-b", "main")
	write("apps/slow.yaml", application("slow", "slow"))
	write("apps/web.yaml", application("web", "web"))
	write("slow/main.jsonnet", "{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'slow'}, data: {n: '0'}}\n")
	write("web/deploy.yaml", fmt.Sprintf(predictDeploy, ""))
	git("add", ".")
	git("commit", "-q", "-m", "base")
	git("checkout", "-q", "-b", "slow")
	write("slow/main.jsonnet", "local fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2);\n{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'slow'}, data: {n: std.toString(fib(40))}}\n")
	git("commit", "-q", "-am", "slow")
	slow := git("rev-parse", "HEAD")
	git("checkout", "-q", "main")
	git("checkout", "-q", "-b", "scale")
	write("web/deploy.yaml", fmt.Sprintf(predictDeploy, "  replicas: 3\n"))
	git("commit", "-q", "-am", "replicas")
	scale := git("rev-parse", "HEAD")

	in := plan.Instance{Name: "main", BranchFiles: func(ctx context.Context, repoURL, branch string) (map[string]string, string, error) {
		return gitrepo.Head(ctx, repoURL, branch, gitrepo.Limits{})
	}}
	cfg := &config.Config{Limits: config.Limits{PredictPerPullRequest: 2 * time.Second, PredictPerCycle: time.Hour, RenderTimeout: time.Minute}}
	p := NewPredictor(cfg, []plan.Instance{in}, &plan.CycleResult{})

	start := time.Now()
	out, err := p.Predict(context.Background(), proposals.PRHead{RepoURL: repoURL, Number: 1, Base: "main", DefaultBranch: "main", HeadSHA: slow, Fork: true})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Check.Neutral || !strings.Contains(out.Check.Summary, "limits.predictPerPullRequest") || !strings.Contains(out.Check.Summary, "2s") {
		t.Errorf("over budget: want a neutral check naming the budget and its key, got %+v", out.Check)
	}
	if !strings.Contains(out.Check.Text, "Application slow") {
		t.Errorf("the check's text does not list the application not predicted: %q", out.Check.Text)
	}
	if took > 20*time.Second {
		t.Errorf("the prediction over its 2s budget took %v: its render was not stopped", took)
	}

	out, err = p.Predict(context.Background(), proposals.PRHead{RepoURL: repoURL, Number: 2, Base: "main", DefaultBranch: "main", HeadSHA: scale, Fork: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.Applications, ",") != "web" || strings.Contains(out.Check.Summary, "budget") {
		t.Errorf("the next pull request: predicted %v, check %+v; want web predicted", out.Applications, out.Check)
	}

	p.mu.Lock()
	p.spent = time.Hour
	p.mu.Unlock()
	if _, err := p.Predict(context.Background(), proposals.PRHead{RepoURL: repoURL, Number: 2, Base: "main", DefaultBranch: "main", HeadSHA: scale, Fork: true}); !errors.Is(err, proposals.ErrCycleBudget) {
		t.Errorf("after the cycle's budget is spent: err = %v, want ErrCycleBudget", err)
	}
}
