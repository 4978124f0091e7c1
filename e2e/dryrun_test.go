//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/kube"
)

// TestDryRunEvidence: for the resources Argo CD reports OutOfSync, a
// server-side dry-run apply of the Git manifest shows what the real API
// server would store: a Deployment's 1000m as 1 (and Git's replicas, which a
// kubectl scale changed), a custom resource's 1000m as written, its schema
// default filled and its undeclared field pruned. Nothing is persisted.
func TestDryRunEvidence(t *testing.T) {
	s := newStack(t)
	s.kubectl(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.e2e.example.com}
spec:
  group: e2e.example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              mode: {type: string}
              size: {type: integer, default: 1}
              limits:
                type: object
                additionalProperties: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
`, "apply", "-f", "-")
	s.waitEstablished(t, "widgets.e2e.example.com")
	dep := strings.Replace(deployment, "            requests: {cpu: 100m}\n", "            requests: {cpu: 100m}\n            limits: {cpu: 1000m}\n", 1)
	repo := gitRepo(t, map[string]string{
		"app/deployment.yaml": dep,
		"app/widget.yaml":     "apiVersion: e2e.example.com/v1\nkind: Widget\nmetadata:\n  name: blue\nspec:\n  mode: fast\n  color: blue   # not in the schema\n  limits: {cpu: 1000m, memory: 1024Mi}\n",
	})
	ns := "e2e-dryrun"
	s.kubectl(t, "", "delete", "namespace", ns, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "create", "namespace", ns)
	s.applicationIn(t, ns, repo, "app", ns, "", false)
	s.waitFor(t, ns, outOfSync, "OutOfSync after the API server pruned spec.color")
	s.kubectl(t, "", "-n", ns, "scale", "deployment/web", "--replicas=5")
	ctx := context.Background()
	var snap *drift.Snapshot
	for i := 0; i < 60; i++ { // until both exist and Argo CD has seen the scale
		settings, err := s.argo.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if snap, err = s.argo.Snapshot(ctx, "argocd", ns, argocd.SnapshotOptions{Settings: &settings}); err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, r := range snap.Resources {
			if r.Live != nil && r.Target != nil {
				live++
			}
		}
		// Missing resources are OutOfSync too: wait until both exist.
		if live == 2 && drift.ArgoStatuses(snap.Application)[drift.Ref{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "web"}] == "OutOfSync" {
			break
		}
		time.Sleep(time.Second)
	}
	rc, err := kube.RESTConfig(kube.Config{Kubeconfig: s.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kube.Read(ctx, rc, kube.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dr, err := kube.NewDryRunner(rc, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	dr.Evidence(ctx, snap)
	collect.AddClusterContext(snap, cl.For(snap))
	byKind := map[string]drift.Object{}
	for _, r := range snap.Resources {
		byKind[r.Ref().Kind] = r.DryRun
	}
	d, w := byKind["Deployment"], byKind["Widget"]
	if d == nil || w == nil {
		t.Fatalf("dry-run evidence missing: Deployment %v, Widget %v (statuses %v)", d != nil, w != nil, drift.List(snap.Application, "status", "resources"))
	}
	c := drift.List(d, "spec", "template", "spec", "containers")[0]
	if got := drift.Str(c, "resources", "limits", "cpu"); got != "1" {
		t.Errorf("dry-run of a Deployment with cpu 1000m stores %q, want \"1\"", got)
	}
	if got, _ := drift.Number(drift.Lookup(d, "spec", "replicas")); got != 2 {
		t.Errorf("dry-run of Git's Deployment has replicas %v, want Git's 2", got)
	}
	if got := drift.Str(c, "imagePullPolicy"); got != "IfNotPresent" {
		t.Errorf("dry-run has imagePullPolicy %q, want the default IfNotPresent", got)
	}
	if got := s.kubectl(t, "", "-n", ns, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "5" {
		t.Errorf("the dry-run changed the live Deployment: replicas %s", got)
	}
	if got := drift.Str(w, "spec", "limits", "cpu"); got != "1000m" {
		t.Errorf("dry-run of a custom resource stores cpu %q, want it as written (1000m)", got)
	}
	if got := drift.Str(w, "spec", "limits", "memory"); got != "1024Mi" {
		t.Errorf("dry-run of a custom resource stores memory %q, want 1024Mi", got)
	}
	if _, ok := drift.Map(w, "spec")["color"]; ok {
		t.Errorf("dry-run of a custom resource kept spec.color, which the schema prunes")
	}
	if got, _ := drift.Number(drift.Lookup(w, "spec", "size")); got != 1 {
		t.Errorf("dry-run of a custom resource has spec.size %v, want the schema default 1", got)
	}
	if md := drift.Map(d, "metadata"); md["managedFields"] != nil {
		t.Error("dry-run evidence keeps managedFields")
	}
}
