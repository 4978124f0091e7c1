package remediations_test

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
)

// TestNeverNarrowsAnAnnotationRuleElsewhere: a broad rule a Deployment
// carries in its own argocd.argoproj.io/ignore-differences annotation is
// reported, but no plan narrows it by editing the Application's manifest or
// argocd-cm, where the rule is not, nor counts what it hides as kept by such
// a narrowing.
func TestNeverNarrowsAnAnnotationRuleElsewhere(t *testing.T) {
	s, err := drift.LoadSnapshot("testdata/plain-remove-hpa.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const rule = "jsonPointers: [/spec]"
	for _, o := range []drift.Object{s.Resources[0].Target, s.Resources[0].Live} {
		md := o["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			md["annotations"] = ann
		}
		ann[drift.AnnotationIgnoreDifferences] = rule
	}
	s.Repo.Files["apps/shop/web.yaml"] = strings.Replace(s.Repo.Files["apps/shop/web.yaml"], "  name: web\n  labels:\n",
		"  name: web\n  annotations:\n    "+drift.AnnotationIgnoreDifferences+": \""+rule+"\"\n  labels:\n", 1)
	s.Repo.Files["argocd/shop.yaml"] = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: shop\n  namespace: argocd\nspec:\n  project: default\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: shop\n  source:\n    repoURL: https://git.example.com/shop.git\n    path: apps/shop\n    targetRevision: main\n"
	rep, plans, err := pipeline.FixWith(s, remediations.RepoFromSnapshot(s), pipeline.FixOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var broad *drift.Finding
	for i, f := range rep.Findings {
		if f.Cause == drift.CauseBroadIgnore {
			broad = &rep.Findings[i]
		}
	}
	if broad == nil {
		t.Fatalf("the annotation's broad rule is not reported:\n%s", summary(plans))
	}
	if broad.Resource.Kind != "Deployment" || broad.Path.String() != "/metadata/annotations/argocd.argoproj.io~1ignore-differences" {
		t.Errorf("the broad rule is attributed to %s %s, want the Deployment's annotation", broad.Resource, broad.Path)
	}
	if ev := drift.EvidenceText(broad.Evidence, "\n"); !strings.Contains(ev, "the "+drift.AnnotationIgnoreDifferences+" annotation of Deployment shop/web") {
		t.Errorf("the evidence does not name the annotation that holds the rule:\n%s", ev)
	}
	replicas := false
	for _, p := range plans {
		for _, e := range p.Edits {
			if e.File == "argocd/shop.yaml" {
				t.Errorf("a %s plan edits the Application's manifest for a rule it does not hold:\n%s", p.Kind, summary(plans))
			}
		}
		if p.Kind == drift.FixNarrowIgnore && (len(p.Edits) > 0 || !strings.Contains(p.Dropped, drift.AnnotationIgnoreDifferences+" annotation")) {
			t.Errorf("an annotation's rule is narrowed, or dropped without saying the annotation holds it:\n%s", summary(plans))
		}
		for _, f := range p.Findings {
			replicas = replicas || f.Path.String() == "/spec/replicas"
		}
	}
	// Not narrowed, the rule keeps nothing: what it hides is planned on its own.
	if !replicas {
		t.Errorf("the replicas the HPA owns, hidden by the annotation, are taken as kept by a narrowing that cannot happen:\n%s", summary(plans))
	}
}
