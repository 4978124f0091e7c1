package bot

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/publish"
)

// apiYAML is a Deployment with replicas and the HPA that scales it: merged,
// the HPA takes spec.replicas and Argo CD reports it OutOfSync.
const apiYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 3
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: registry.example.com/api:1.0.0
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: api
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 2
  maxReplicas: 4
`

const reviewsRoute = "POST /repos/{owner}/{repo}/pulls/{number}/reviews"

// predictRuns are the driftfix/predict check runs on a commit.
func (w *world) predictRuns(repo, sha string) []githubtest.CheckRun {
	var out []githubtest.CheckRun
	for _, r := range w.gh.CheckRuns("acme", repo, sha) {
		if r.Name == "driftfix/predict" {
			out = append(out, r)
		}
	}
	return out
}

// personPR pushes files onto a new branch as a person and opens a pull
// request from it; it returns the number and the head commit.
func (w *world) personPR(repo, branch string, files map[string]string) (int, string) {
	w.t.Helper()
	for path, content := range files {
		if err := w.gh.CommitFile("acme", repo, branch, path, content, "person"); err != nil {
			w.t.Fatal(err)
		}
	}
	n, err := w.gh.AddPR("acme", repo, githubtest.PullRequest{Title: branch, Head: branch, Base: "main", Author: "person"})
	if err != nil {
		w.t.Fatal(err)
	}
	return n, w.gh.Head("acme", repo, branch)
}

// TestPredictOnPullRequests: each cycle, driftfix/predict checks the head of
// every open pull request of the repositories its applications read, once
// per head: a change that will drift gets a failed check annotated at the
// line and one review whose suggestion removes it; a clean change a neutral
// check and no review; later cycles and a lost database publish nothing new;
// a new commit is checked; driftfix's own fix pull requests are left alone;
// and a repository whose own file switches predict off gets nothing.
func TestPredictOnPullRequests(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	drifting, dsha := w.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
	web, err := w.gh.File("acme", "shop", "main", "apps/shop/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clean, csha := w.personPR("shop", "bump-image", map[string]string{"apps/shop/web.yaml": strings.Replace(web, "web:1.0.0", "web:1.1.0", 1)})

	out := w.cycle(&now)
	if len(out.Predicted.Errors) > 0 {
		t.Fatalf("predict errors: %v", out.Predicted.Errors)
	}
	if len(out.Predicted.Checked) != 2 || len(out.Predicted.Reviewed) != 1 {
		t.Fatalf("checked %v, reviewed %v: want both heads checked and the drifting one reviewed", out.Predicted.Checked, out.Predicted.Reviewed)
	}
	runs := w.predictRuns("shop", dsha)
	if len(runs) != 1 || runs[0].Conclusion != "failure" || !strings.Contains(runs[0].Title, "1 field will stay OutOfSync") {
		t.Fatalf("drifting head's check: %+v", runs)
	}
	if a := runs[0].Annotations; len(a) != 1 || a[0].Path != "apps/shop/api.yaml" || a[0].StartLine != 6 || !strings.Contains(a[0].Title, "hpa-replicas") {
		t.Errorf("annotations: %+v", a)
	}
	reviews := w.gh.Reviews("acme", "shop", drifting)
	if len(reviews) != 1 || reviews[0].CommitID != dsha || reviews[0].Event != "COMMENT" || reviews[0].Author != "driftfix[bot]" {
		t.Fatalf("reviews of the drifting PR: %+v", reviews)
	}
	if c := reviews[0].Comments; len(c) != 1 || c[0].Path != "apps/shop/api.yaml" || c[0].Line != 6 || c[0].Side != "RIGHT" ||
		!strings.Contains(c[0].Body, "```suggestion\n```") || !strings.Contains(c[0].Body, "hpa-replicas") {
		t.Errorf("review comments: %+v", c)
	}
	runs = w.predictRuns("shop", csha)
	if len(runs) != 1 || runs[0].Conclusion != "neutral" || len(runs[0].Annotations) != 0 {
		t.Errorf("clean head's check: %+v", runs)
	}
	if r := w.gh.Reviews("acme", "shop", clean); len(r) != 0 {
		t.Errorf("a clean pull request got a review: %+v", r)
	}
	// driftfix's own fix pull request for the stuck application is not predicted.
	for _, pr := range w.open("shop") {
		if pr.Author == "driftfix[bot]" {
			if runs := w.predictRuns("shop", w.gh.Head("acme", "shop", pr.Head)); len(runs) != 0 {
				t.Errorf("driftfix's own pull request #%d got a predict check: %+v", pr.Number, runs)
			}
		}
	}

	posts, reviewPosts := w.gh.CallCount(checkRuns), w.gh.CallCount(reviewsRoute)
	if out := w.cycle(&now); len(out.Predicted.Checked)+len(out.Predicted.Reviewed) != 0 {
		t.Fatalf("a second cycle published again: %+v", out.Predicted)
	}
	w.loseDatabase()
	w.cycle(&now)
	if n := len(w.gh.Reviews("acme", "shop", drifting)); n != 1 {
		t.Errorf("after a lost database the head has %d reviews, want 1", n)
	}
	if runs := w.predictRuns("shop", dsha); len(runs) != 1 {
		t.Errorf("after a lost database the head has %d predict check runs, want 1", len(runs))
	}
	if w.gh.CallCount(reviewsRoute) != reviewPosts || w.gh.CallCount(checkRuns) != posts {
		t.Errorf("new check runs or reviews while nothing changed: creates %d→%d, reviews %d→%d", posts, w.gh.CallCount(checkRuns), reviewPosts, w.gh.CallCount(reviewsRoute))
	}

	// A new commit on the drifting branch that keeps the drift is checked
	// on its own; its review is its own too.
	if err := w.gh.CommitFile("acme", "shop", "add-api", "apps/shop/api.yaml", strings.Replace(apiYAML, "api:1.0.0", "api:1.0.1", 1), "person"); err != nil {
		t.Fatal(err)
	}
	dsha2 := w.gh.Head("acme", "shop", "add-api")
	out = w.cycle(&now)
	if len(out.Predicted.Checked) != 1 || !strings.HasSuffix(out.Predicted.Checked[0], "@"+dsha2[:12]) {
		t.Fatalf("new head: checked %v", out.Predicted.Checked)
	}
	if runs := w.predictRuns("shop", dsha2); len(runs) != 1 || runs[0].Conclusion != "failure" {
		t.Errorf("new head's check: %+v", runs)
	}
	if n := len(w.gh.Reviews("acme", "shop", drifting)); n != 2 {
		t.Errorf("reviews after the new head: %d, want 2 (one per head)", n)
	}

	// Switched off in the repository's own file: a new pull request gets nothing.
	if err := w.gh.CommitFile("acme", "shop", "main", ".github/driftfix.yaml", "predict: false\n", "person"); err != nil {
		t.Fatal(err)
	}
	_, osha := w.personPR("shop", "add-api-2", map[string]string{"apps/shop/api2.yaml": strings.ReplaceAll(apiYAML, "api", "api2")})
	out = w.cycle(&now)
	if len(out.Predicted.Checked) != 0 || len(w.predictRuns("shop", osha)) != 0 {
		t.Errorf("predict switched off by the repository, yet checked %v", out.Predicted.Checked)
	}
	if len(out.Predicted.Skipped) != 1 || !strings.Contains(out.Predicted.Skipped[0], ".github/driftfix.yaml") {
		t.Errorf("skipped: %v", out.Predicted.Skipped)
	}
}

// TestPredictReviewRefused: a review GitHub refuses leaves the check (which
// lists every prediction) and is reported once; the head is not predicted
// again each cycle.
func TestPredictReviewRefused(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	drifting, dsha := w.personPR("shop", "add-api", map[string]string{"apps/shop/api.yaml": apiYAML})
	w.gh.Fault = func(r *http.Request) int {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/reviews") {
			return http.StatusBadGateway
		}
		return 0
	}
	r, closeDB := w.runner()
	defer closeDB()
	out, err := r.Once(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Predicted.Checked) != 1 || len(out.Predicted.Reviewed) != 0 || len(out.Predicted.Errors) != 1 || !strings.Contains(out.Predicted.Errors[0].Error(), "review acme/shop#") {
		t.Fatalf("a refused review: %+v", out.Predicted)
	}
	if runs := w.predictRuns("shop", dsha); len(runs) != 1 || runs[0].Conclusion != "failure" || len(runs[0].Annotations) != 1 {
		t.Fatalf("the check must stand: %+v", runs)
	}
	out, err = r.Once(context.Background(), now.Add(15*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Predicted.Checked)+len(out.Predicted.Errors) != 0 || len(w.gh.Reviews("acme", "shop", drifting)) != 0 {
		t.Errorf("the next cycle tried the head again: %+v", out.Predicted)
	}
}

// TestPredictTokenMode: with a person's token, driftfix's own fix pull
// request is still left alone (its account and its marker), while that
// person's other pull request is predicted; the check is a commit status.
func TestPredictTokenMode(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	r, closeDB := w.runner()
	defer closeDB()
	gh, err := github.New(github.Config{Token: w.gh.UserToken, BaseURL: w.gh.API, Backoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r.Publisher.Hosts = []publish.GitHost{gh}
	if _, err := r.Once(context.Background(), now); err != nil { // opens the fix pull request as octo-user
		t.Fatal(err)
	}
	for _, pr := range w.open("shop") {
		if pr.Author != "octo-user" {
			t.Fatalf("the fix pull request was opened by %s", pr.Author)
		}
	}
	if err := w.gh.CommitFile("acme", "shop", "add-api", "apps/shop/api.yaml", apiYAML, "octo-user"); err != nil {
		t.Fatal(err)
	}
	n, err := w.gh.AddPR("acme", "shop", githubtest.PullRequest{Title: "add api", Head: "add-api", Base: "main", Author: "octo-user"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Once(context.Background(), now.Add(15*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Predicted.Checked) != 1 || !strings.HasPrefix(out.Predicted.Checked[0], "acme/shop#"+strconv.Itoa(n)+"@") {
		t.Fatalf("checked %v, want only the person's pull request #%d", out.Predicted.Checked, n)
	}
	st := w.gh.Statuses("acme", "shop", w.gh.Head("acme", "shop", "add-api"))
	if len(st) != 1 || st[0].Context != "driftfix/predict" || st[0].State != "failure" {
		t.Errorf("statuses: %+v", st)
	}
}
