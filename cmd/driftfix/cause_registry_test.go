package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/predict"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations"
)

// TestOneValuePerCause: a cause is one classifiers.Classifier. A throwaway
// cause, registered for this test only, reaches every stage that reads
// what a cause means (prediction before merge, the one-line suggestion,
// fleet grouping, the risk of a plan and the generated cause table)
// through its own value, with no table elsewhere naming it.
func TestOneValuePerCause(t *testing.T) {
	const name drift.Cause = "test-replicas-stamp"
	stamp := classifiers.Classifier{
		Name: name,
		Doc:  "a throwaway cause this test registers: replicas a stamper writes",
		Classify: func(c *classifiers.Case) (classifiers.Verdict, bool) {
			if c.Diff == nil || c.Diff.Path.String() != "/spec/replicas" {
				return classifiers.Verdict{}, false
			}
			return classifiers.Verdict{Evidence: []drift.Evidence{{Kind: drift.EvidenceManager, Manager: "stamper", Text: "stamper writes replicas"}},
				Fix: drift.FixRemoveField, Grant: "this test says the stamper owns replicas"}, true
		},
		Predicted: true,
		Error:     true,
		Suggest:   []drift.FixKind{drift.FixRemoveField},
		Fleet:     classifiers.FleetWriter,
		Risk:      "the stamper writes replicas again after every sync",
	}
	saved := classifiers.Registry
	classifiers.Registry = append([]classifiers.Classifier{stamp}, saved...)
	t.Cleanup(func() { classifiers.Registry = saved })

	// Predicted, with its suggestion: an HPA the change adds beside
	// replicas Git declares makes /spec/replicas differ after the sync.
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source: {repoURL: https://git.example.com/shop.git, path: apps/web, targetRevision: main}\n"
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - {name: web, image: \"nginx:1.27\"}\n"
	hpa := "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 5\n"
	base := predict.Revision{Name: "main", Files: map[string]string{"apps/web.yaml": app, "apps/web/deploy.yaml": deploy}}
	head := predict.Revision{Name: "the change", Files: map[string]string{"apps/web.yaml": app, "apps/web/deploy.yaml": deploy, "apps/web/hpa.yaml": hpa}}
	res, err := predict.Run(context.Background(), base, head, predict.Options{Suggest: true})
	if err != nil {
		t.Fatal(err)
	}
	var got *predict.Prediction
	for i, p := range res.Predictions {
		if p.Cause == name {
			got = &res.Predictions[i]
		}
	}
	if got == nil {
		t.Fatalf("the throwaway cause is not predicted: %+v", res.Predictions)
	}
	sarif, err := predict.SARIF([]predict.Prediction{*got}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sarif), `"level": "error"`) {
		t.Errorf("the prediction is not an error in review:\n%s", sarif)
	}
	if got.Suggestion == nil || got.Suggestion.File != "apps/web/deploy.yaml" || !got.Suggestion.Remove || got.Suggestion.Old != "  replicas: 2" {
		t.Errorf("suggestion %+v, want the replicas line of apps/web/deploy.yaml removed", got.Suggestion)
	}

	// Unregistered again, it is not predicted: nothing else knew it.
	classifiers.Registry = saved
	if c := classifiers.Of(name); c.Predicted || len(c.Suggest) > 0 || c.Fleet != classifiers.FleetNone || c.Risk != "" {
		t.Errorf("an unregistered cause has facts: %+v", c)
	}
	classifiers.Registry = append([]classifiers.Classifier{stamp}, saved...)

	// The risk its remove-field plan states (and what replicas add under
	// client-side apply, whatever the cause).
	in := predict.Input{Application: mustObject(t, app), Targets: []drift.Object{mustObject(t, deploy), mustObject(t, hpa)},
		Repo: head.Files, Manifest: "apps/web.yaml"}
	if risk := planRisk(t, in); !strings.HasPrefix(risk, stamp.Risk) {
		t.Errorf("remove-field risk %q, want it to start with the cause's own %q", risk, stamp.Risk)
	}

	// Grouped by the writer across applications, as a fleet.
	var stuck []plan.Stuck
	for _, a := range []string{"web", "shop", "cart"} {
		stuck = append(stuck, plan.Stuck{Instance: "prod", App: argocd.AppSummary{Name: a, Namespace: "argocd"}, Diagnosed: true,
			Findings: []drift.Kept{{Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: a, Name: "web"}, Path: "/spec/replicas",
				Cause: name, Fix: drift.FixNone, Writer: "stamper"}}})
	}
	lines := plan.Fleet(stuck, plan.FleetMin)
	if len(lines) != 1 || lines[0].Cause != name || lines[0].Apps != 3 || lines[0].Source != "controller stamper on Deployment" {
		t.Errorf("fleet lines %+v, want one naming controller stamper on Deployment in 3 applications", lines)
	}

	// Its row in the generated cause table, with its facts.
	row := "| 1 | `test-replicas-stamp` | " + stamp.Doc + " | yes | yes | no | `remove-field` | writer | " + stamp.Risk + " |"
	if table := causesTableOf(classifiers.Registry); !strings.Contains(table, row+"\n") {
		t.Errorf("cause table lacks\n%s\nin\n%s", row, table)
	}
	if slices.ContainsFunc(saved, func(c classifiers.Classifier) bool { return c.Name == name }) {
		t.Fatal("the throwaway cause leaked into the real registry")
	}
}

// mustObject reads one manifest.
func mustObject(t *testing.T, manifest string) drift.Object {
	t.Helper()
	objs, err := predict.ParseCluster([]byte(manifest))
	if err != nil || len(objs) != 1 {
		t.Fatalf("manifest: %v (%d objects)", err, len(objs))
	}
	return objs[0]
}

// planRisk plans the fixes of the application predicted from in and
// returns the risk its remove-field plan states.
func planRisk(t *testing.T, in predict.Input) string {
	t.Helper()
	s, err := predict.Snapshot(in)
	if err != nil {
		t.Fatal(err)
	}
	_, plans, err := pipeline.FixWith(s, remediations.RepoFromSnapshot(s), pipeline.FixOptions{Now: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		if p.Kind == drift.FixRemoveField && p.Dropped == "" {
			return p.Rationale.Risk
		}
	}
	t.Fatalf("no remove-field plan among %d plans", len(plans))
	return ""
}
