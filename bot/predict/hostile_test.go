package predict

import (
	"context"
	"strings"
	"testing"
)

// TestHostileRepositories: what a pull request's author controls (the
// Application, its paths and value files, the manifests) is read from the
// revision's files only, and a repository that does not make sense is an
// error, a note or an application listed as not predicted with why, never a
// panic.
func TestHostileRepositories(t *testing.T) {
	app := func(src string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: x}\nspec:\n  destination: {namespace: x}\n  source: " + src + "\n"
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		err   string // "" : no error
		notes string
		// not names the application not predicted and the reason's words
		not string
	}{
		{"a path outside the repository", map[string]string{"a.yaml": app("{repoURL: r, path: ../../etc}")}, "", `source path "../../etc"`, `source path "../../etc"`},
		{"a value file outside the chart", map[string]string{"a.yaml": app("{repoURL: r, path: c, helm: {valueFiles: [../../../etc/passwd]}}"),
			"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n", "c/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}, "", "", "etc/passwd"},
		{"a chart from a Helm repository", map[string]string{"a.yaml": app("{repoURL: https://charts.example.com, chart: redis, targetRevision: 1.0.0}")}, "", "is not in this repository", "chart redis"},
		{"a source that is not a mapping", map[string]string{"a.yaml": app("just-a-string")}, "", "", "no source"},
		{"a manifest that is not YAML", map[string]string{"a.yaml": app("{repoURL: r, path: m}"), "m/bad.yaml": "key: [unclosed\n"}, "", "", "m/bad.yaml"},
		{"objects without names or kinds", map[string]string{"a.yaml": app("{repoURL: r, path: m}"), "m/o.yaml": "kind: ConfigMap\n---\napiVersion: v1\n---\n- 1\n---\n42\n"}, "", "", ""},
		{"an Application without a name", map[string]string{"a.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec: {}\n"}, "no Argo CD Application manifest", "", ""},
		{"a template that never ends", map[string]string{"a.yaml": app("{repoURL: r, path: c}"), "c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
			"c/templates/loop.yaml": "{{ range $i := until 100000000 }}{{ range $j := until 100000000 }}x{{ end }}{{ end }}\n"}, "", "", "chart c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rev := Revision{Name: "head", Files: tc.files}
			res, err := Run(context.Background(), Revision{Name: "base", Files: map[string]string{}}, rev, Options{})
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one naming %q", err, tc.err)
			case err != nil:
				return
			}
			if tc.notes != "" && !strings.Contains(strings.Join(res.Notes, "\n"), tc.notes) {
				t.Errorf("notes %q, want %q", res.Notes, tc.notes)
			}
			if tc.not == "" {
				if len(res.NotPredicted) > 0 {
					t.Errorf("not predicted %+v, want none", res.NotPredicted)
				}
				return
			}
			if len(res.NotPredicted) != 1 || res.NotPredicted[0].Application != "x" || !strings.Contains(res.NotPredicted[0].Reason, tc.not) || len(res.Applications) != 0 {
				t.Errorf("not predicted %+v (predicted %q), want application x with a reason naming %q", res.NotPredicted, res.Applications, tc.not)
			}
		})
	}
}

// FuzzRunDirectory: any Application manifest and any manifest file of a
// plain-directory source are predicted or refused, never a panic.
func FuzzRunDirectory(f *testing.F) {
	f.Add([]byte(webApp), []byte(deployment("  replicas: 2\n", "1000m")+"---\n"+webHPA))
	f.Add([]byte(webApp+"  ignoreDifferences:\n  - {group: '*', kind: '*', jsonPointers: [/spec]}\n"), []byte(backupCRD))
	f.Add([]byte(webApp), []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: b}\ndata: {a: 1}\n"))
	f.Add([]byte(webApp), []byte("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec: {volumeClaimTemplates: [{metadata: {labels: {x: 1}}}, 3]}\n"))
	f.Fuzz(func(t *testing.T, appYAML, manifest []byte) {
		head := Revision{Name: "head", Files: map[string]string{"apps/web.yaml": string(appYAML), "apps/web/m.yaml": string(manifest)}}
		res, err := Run(context.Background(), Revision{Name: "base", Files: map[string]string{}}, head, Options{Cluster: []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"}, "data": map[string]any{"application.resourceTrackingMethod": "annotation+label"}}}})
		if err != nil {
			return
		}
		for _, p := range res.Predictions {
			if p.Cause == "" || p.Fix == "" {
				t.Fatalf("a prediction without cause or fix: %+v", p)
			}
		}
		_, _ = SARIF(res.Predictions, "test")
		_ = Check(res)
	})
}
