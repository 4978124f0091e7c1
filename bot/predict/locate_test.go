package predict

import (
	"context"
	"strings"
	"testing"
)

// TestLocateWhereTheRepositoryDeclaresIt: a prediction is placed at the
// line a person edits: a base's line under an overlay's namePrefix, the
// overlay's own patch over a base that declares the same field, and the
// ApplicationSet template's line for a generated Application.
func TestLocateWhereTheRepositoryDeclaresIt(t *testing.T) {
	app := func(name, path string) string {
		return strings.NewReplacer("name: web", "name: "+name, "path: apps/web", "path: "+path).Replace(webApp)
	}
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: teams, namespace: argocd}
spec:
  generators:
  - list:
      elements: [{team: a}]
  template:
    metadata: {name: 'team-{{team}}'}
    spec:
      project: default
      destination: {server: https://kubernetes.default.svc, namespace: '{{team}}'}
      source: {repoURL: https://git.example.com/shop.git, targetRevision: HEAD, path: teams}
      ignoreDifferences:
      - {group: '*', kind: '*', jsonPointers: [/spec]}
`
	for _, tc := range []struct {
		name       string
		base, head map[string]string
		path, file string
		line       int
	}{
		{name: "a base under namePrefix",
			base: map[string]string{"apps/web.yaml": app("web", "overlays/prod"), "base/deploy.yaml": deployment("  replicas: 2\n", "100m"),
				"base/kustomization.yaml": "resources: [deploy.yaml]\n", "overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: prod-\n"},
			head: map[string]string{"base/hpa.yaml": strings.ReplaceAll(webHPA, "name: web", "name: prod-web"), "base/kustomization.yaml": "resources: [deploy.yaml, hpa.yaml]\n"},
			path: "/spec/replicas", file: "base/deploy.yaml", line: 6},
		{name: "an overlay's patch over its base",
			base: map[string]string{"apps/web.yaml": app("web", "overlays/prod"), "base/deploy.yaml": deployment("  replicas: 2\n", "100m"),
				"base/kustomization.yaml": "resources: [deploy.yaml]\n", "overlays/prod/kustomization.yaml": "resources: [../../base]\npatches:\n- path: replicas.yaml\n",
				"overlays/prod/replicas.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n"},
			head: map[string]string{"base/hpa.yaml": webHPA, "base/kustomization.yaml": "resources: [deploy.yaml, hpa.yaml]\n"},
			path: "/spec/replicas", file: "overlays/prod/replicas.yaml", line: 6},
		{name: "a generated Application's rule in its ApplicationSet's template",
			base: map[string]string{"teams/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"},
			head: map[string]string{"appsets/teams.yaml": set},
			path: "/spec/ignoreDifferences/0", file: "appsets/teams.yaml", line: 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := gitRepo(t, tc.base, tc.head)
			res, err := Run(context.Background(), base, head, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Predictions {
				if p.Path.String() == tc.path {
					if p.File != tc.file || p.Line != tc.line {
						t.Errorf("%s at %s:%d, want %s:%d", tc.path, p.File, p.Line, tc.file, tc.line)
					}
					return
				}
			}
			t.Errorf("no prediction of %s: %+v (not predicted %+v)", tc.path, res.Predictions, res.NotPredicted)
		})
	}
}
