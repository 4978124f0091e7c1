package remediations_test

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
)

// TestKustomizeBuildOptionsReachTheRender: a fix to a Kustomize source is
// verified by building it again with argocd-cm's kustomize.buildOptions from
// the snapshot's cluster objects. The overlay names its base's file, outside
// its own root: only --load-restrictor LoadRestrictionsNone builds it, as
// `kustomize build` with those options does.
func TestKustomizeBuildOptionsReachTheRender(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cm      map[string]any // argocd-cm's data; nil: no argocd-cm
		version string         // the source's kustomize.version
		dropped string         // "" when the plan stands
	}{
		{name: "no argocd-cm", dropped: "is not in or below"},
		{name: "argocd-cm without build options", cm: map[string]any{}, dropped: "is not in or below"},
		{name: "LoadRestrictionsNone", cm: map[string]any{"kustomize.buildOptions": "--load-restrictor LoadRestrictionsNone"}},
		{name: "an option driftfix cannot render", cm: map[string]any{"kustomize.buildOptions": "--load-restrictor LoadRestrictionsNone --enable-helm"},
			dropped: "--enable-helm is not supported"},
		{name: "a registered version takes kustomize.buildOptions", version: "v5.4.3",
			cm: map[string]any{"kustomize.buildOptions": "--load-restrictor LoadRestrictionsNone", "kustomize.path.v5.4.3": "/custom-tools/kustomize"}},
		{name: "an unregistered version", version: "v5.4.3", cm: map[string]any{"kustomize.buildOptions": "--load-restrictor LoadRestrictionsNone"},
			dropped: "asks for kustomize version v5.4.3, which argocd-cm does not register"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := drift.LoadSnapshot("testdata/kustomize-overlay.yaml")
			if err != nil {
				t.Fatal(err)
			}
			s.Repo.Files["apps/shop/overlays/prod/kustomization.yaml"] = "namePrefix: prod-\nresources:\n  - ../../base/web.yaml\n  - ../../base/hpa.yaml\npatches:\n  - path: replicas.yaml\n"
			if tc.cm != nil {
				s.Cluster = append(s.Cluster, drift.Object{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"}, "data": tc.cm})
			}
			if tc.version != "" {
				drift.Map(s.Application, "spec", "source")["kustomize"] = map[string]any{"version": tc.version}
			}
			_, plans, err := pipeline.FixWith(s, remediations.RepoFromSnapshot(s), pipeline.FixOptions{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if len(plans) != 1 {
				t.Fatalf("want one plan:\n%s", summary(plans))
			}
			p := plans[0]
			if tc.dropped == "" {
				if p.Dropped != "" || len(p.Edits) != 2 {
					t.Fatalf("want the plan to stand with its two edits:\n%s", summary(plans))
				}
				return
			}
			if !strings.Contains(p.Dropped, tc.dropped) {
				t.Fatalf("want the plan dropped saying %q:\n%s", tc.dropped, summary(plans))
			}
		})
	}
}

// TestKustomizeBuildOptionsForAVersion: which argocd-cm key Argo CD passes
// to `kustomize build` for a source naming a kustomize version.
func TestKustomizeBuildOptionsForAVersion(t *testing.T) {
	app := func(version string) drift.Object {
		src := map[string]any{"path": "apps/web/"}
		if version != "" {
			src["kustomize"] = map[string]any{"version": version}
		}
		return drift.Object{"spec": map[string]any{"sources": []any{map[string]any{"path": "other"}, src}}}
	}
	cm := func(data map[string]any) []drift.Object {
		return []drift.Object{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm"}, "data": data}}
	}
	for _, tc := range []struct {
		name    string
		cluster []drift.Object
		version string
		want    string
		wantErr string
	}{
		{name: "no argocd-cm", version: "v5.0.0"},
		{name: "no version", cluster: cm(map[string]any{"kustomize.buildOptions": "--reorder none", "kustomize.buildOptions.v5.0.0": "--x"}), want: "--reorder none"},
		{name: "registered, no options of its own", version: "v5.0.0",
			cluster: cm(map[string]any{"kustomize.buildOptions": "--reorder none", "kustomize.path.v5.0.0": "/k"}), want: "--reorder none"},
		{name: "registered the deprecated way", version: "v5.0.0",
			cluster: cm(map[string]any{"kustomize.buildOptions": "--reorder none", "kustomize.version.v5.0.0": "/k"}), want: "--reorder none"},
		{name: "its own options, the same", version: "v5.0.0",
			cluster: cm(map[string]any{"kustomize.buildOptions": "--reorder none", "kustomize.path.v5.0.0": "/k", "kustomize.buildOptions.v5.0.0": "--reorder none"}), want: "--reorder none"},
		{name: "its own options, different", version: "v5.0.0",
			cluster: cm(map[string]any{"kustomize.buildOptions": "--reorder none", "kustomize.path.v5.0.0": "/k", "kustomize.buildOptions.v5.0.0": "--reorder legacy"}),
			wantErr: `argocd-cm kustomize.buildOptions.v5.0.0 is "--reorder legacy" and kustomize.buildOptions is "--reorder none"`},
		{name: "not registered", version: "v5.0.0", cluster: cm(map[string]any{"kustomize.path.v4.0.0": "/k"}),
			wantErr: "asks for kustomize version v5.0.0, which argocd-cm does not register (no kustomize.path.v5.0.0)"},
		{name: "registered twice", version: "v5.0.0", cluster: cm(map[string]any{"kustomize.path.v5.0.0": "/k", "kustomize.version.v5.0.0": "/k"}),
			wantErr: "registers kustomize version v5.0.0 twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := diff.KustomizeBuildOptions(tc.cluster, app(tc.version), "apps/web")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
