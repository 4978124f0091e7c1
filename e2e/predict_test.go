//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// predictHPA scales the Deployment web of the e2e repositories: its
// minimum is above the replicas Git declares, so the HPA takes the field at
// once (no metrics are needed for that).
const predictHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 4
  maxReplicas: 6
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
`

// TestPredictPullRequest runs the driftfix binary (`driftfix once`) on two
// pull requests of the repository the real Argo CD reads, with GitHub
// emulated over it: the one that adds an HPA and sets replicas gets a
// failed driftfix/predict check annotated at the replicas line and a
// review whose suggestion removes it; the clean one a neutral check. Merged
// anyway, the drifting change leaves the application OutOfSync on the real
// Argo CD on exactly the predicted paths.
func TestPredictPullRequest(t *testing.T) {
	s := newStack(t)
	const name = "e2e-predict"
	env := newBotEnv(t, s, name, "predict.db")
	gh := env.gh
	s.application(t, name, env.repo, "app", name, "")

	pr := func(branch string, files map[string]string) (int, string) {
		t.Helper()
		for path, content := range files {
			if err := gh.CommitFile("acme", name, branch, path, content, "person"); err != nil {
				t.Fatal(err)
			}
		}
		n, err := gh.AddPR("acme", name, githubtest.PullRequest{Title: branch, Head: branch, Base: "main", Author: "person"})
		if err != nil {
			t.Fatal(err)
		}
		return n, gh.Head("acme", name, branch)
	}
	drifting, dsha := pr("autoscale", map[string]string{
		"app/deployment.yaml": strings.Replace(deployment, "replicas: 2", "replicas: 3", 1),
		"app/hpa.yaml":        predictHPA,
	})
	_, csha := pr("bump-image", map[string]string{"app/deployment.yaml": strings.Replace(deployment, "web:1.0.0", "web:1.0.1", 1)})

	cmd := exec.Command(env.bin, "once", "--config", env.cfg)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("driftfix once: %v\n%s\n%s", err, out.String(), errb.String())
	}

	runs := predictRuns(gh, name, dsha)
	if len(runs) != 1 || runs[0].Conclusion != "failure" {
		t.Fatalf("the drifting head must carry one failed driftfix/predict check: %+v\n%s", runs, errb.String())
	}
	t.Logf("check on the drifting head: %s: %s", runs[0].Conclusion, runs[0].Title)
	var predicted []string
	for _, a := range runs[0].Annotations {
		t.Logf("annotation %s:%d %s: %s", a.Path, a.StartLine, a.Title, a.Message)
		if a.Path != "app/deployment.yaml" || a.StartLine != 6 {
			t.Errorf("annotation at %s:%d, want app/deployment.yaml:6 (replicas): %+v", a.Path, a.StartLine, a)
		}
		_, at, _ := strings.Cut(a.Title, ": ") // "hpa-replicas: Deployment ns/web /spec/replicas"
		predicted = append(predicted, at)
	}
	sort.Strings(predicted)
	if strings.Join(predicted, ",") != "Deployment "+name+"/web /spec/replicas" {
		t.Fatalf("predicted %q, want the Deployment's replicas", predicted)
	}
	reviews := gh.Reviews("acme", name, drifting)
	if len(reviews) != 1 || len(reviews[0].Comments) != 1 || reviews[0].Comments[0].Path != "app/deployment.yaml" || reviews[0].Comments[0].Line != 6 ||
		!strings.Contains(reviews[0].Comments[0].Body, "```suggestion\n```") {
		t.Fatalf("the drifting pull request must get one review suggesting the replicas line's removal: %+v", reviews)
	}
	t.Logf("review comment at %s:%d:\n%s", reviews[0].Comments[0].Path, reviews[0].Comments[0].Line, reviews[0].Comments[0].Body)
	if runs := predictRuns(gh, name, csha); len(runs) != 1 || runs[0].Conclusion != "neutral" || len(runs[0].Annotations) != 0 {
		t.Fatalf("the clean head must carry a neutral check: %+v", runs)
	}

	// Merged anyway: Argo CD syncs it and reports exactly what was predicted.
	if err := gh.Merge("acme", name, drifting); err != nil {
		t.Fatal(err)
	}
	merged := gh.Head("acme", name, "main")
	s.kubectl(t, "", "-n", "argocd", "annotate", "application", name, "argocd.argoproj.io/refresh=normal", "--overwrite")
	var last argocd.AppSummary
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline) && !(last.Revision == merged && last.OperationPhase == "Succeeded" && last.SyncStatus == "OutOfSync"); time.Sleep(2 * time.Second) {
		last = s.summary(t, name)
	}
	if last.Revision != merged || last.SyncStatus != "OutOfSync" {
		t.Fatalf("after the merge (%s) Argo CD reports %s at %s (operation %s); the cluster:\n%s", short(merged), last.SyncStatus, short(last.Revision), last.OperationPhase,
			s.kubectl(t, "", "-n", name, "get", "deployment,hpa", "-o", "wide"))
	}
	var got []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		got = argoDiffering(t, s, name)
		if len(got) > 0 {
			break
		}
	}
	t.Logf("Argo CD reports after the sync: %q; predicted: %q", got, predicted)
	if strings.Join(got, ",") != strings.Join(predicted, ",") {
		t.Fatalf("Argo CD reports %q differing after the sync, predicted %q", got, predicted)
	}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// predictRuns are the driftfix/predict check runs on a commit.
func predictRuns(gh *githubtest.Server, repo, sha string) []githubtest.CheckRun {
	var out []githubtest.CheckRun
	for _, r := range gh.CheckRuns("acme", repo, sha) {
		if r.Name == "driftfix/predict" {
			out = append(out, r)
		}
	}
	return out
}

// argoDiffering are the resource and path of each difference of the
// resources Argo CD marks OutOfSync, compared in Argo CD's own normalized
// and predicted live states (the snapshot carries them).
func argoDiffering(t *testing.T, s *stack, name string) []string {
	t.Helper()
	ctx := context.Background()
	settings, err := s.argo.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.argo.Snapshot(ctx, "argocd", name, argocd.SnapshotOptions{Settings: &settings})
	if err != nil {
		t.Fatal(err)
	}
	outOfSync := map[string]bool{}
	for _, it := range drift.List(snap.Application, "status", "resources") {
		r, _ := it.(map[string]any)
		if drift.Str(r, "status") == "OutOfSync" {
			ref := drift.Ref{Group: drift.Str(r, "group"), Kind: drift.Str(r, "kind"), Namespace: drift.Str(r, "namespace"), Name: drift.Str(r, "name")}
			outOfSync[ref.String()] = true
		}
	}
	paths, err := differingPaths(snap)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, ps := range paths {
		ref := snap.Resources[i].Ref().String()
		if !outOfSync[ref] {
			continue
		}
		for _, p := range ps {
			out = append(out, ref+" "+p)
		}
	}
	sort.Strings(out)
	return out
}
