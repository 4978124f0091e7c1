package appset

import (
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/drift"
)

// FuzzResolve feeds arbitrary YAML ApplicationSets to Resolve: it never
// panics, and what it makes stays within MaxApplications.
func FuzzResolve(f *testing.F) {
	seeds := []string{
		`{kind: ApplicationSet, metadata: {name: a}, spec: {generators: [{list: {elements: [{name: a}]}}], template: {metadata: {name: '{{name}}'}, spec: {project: default}}}}`,
		`{kind: ApplicationSet, spec: {goTemplate: true, generators: [{matrix: {generators: [{git: {repoURL: ` + repoURL + `, directories: [{path: '*'}]}}, {list: {elements: [{e: '{{.path.path}}'}]}}]}}], template: {metadata: {name: '{{.path.basename}}-{{.e}}'}}, templatePatch: 'spec: {project: x}'}}`,
		`{kind: ApplicationSet, spec: {generators: [{merge: {mergeKeys: [k], generators: [{list: {elements: [{k: a}]}}, {git: {repoURL: ` + repoURL + `, files: [{path: 'apps/*'}]}}]}}], template: {metadata: {name: '{{k}}'}}}}`,
		`{kind: ApplicationSet, spec: {goTemplate: true, generators: [{clusters: {values: {a: '{{.name}}'}}, selector: {matchLabels: {name: in-cluster}}}], template: {metadata: {name: '{{ tpl "{{.name}}" . }}'}}}}`,
		`{kind: ApplicationSet, spec: {generators: [{list: {elementsYaml: '- {a: b}'}}, {list: {elements: [null, {}, 1]}}]}}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	secret := drift.Object{"kind": "Secret", "metadata": map[string]any{"name": "c", "labels": map[string]any{"argocd.argoproj.io/secret-type": "cluster"}},
		"data": map[string]any{"name": "Yw==", "server": "aHR0cHM6Ly9j"}}
	f.Fuzz(func(t *testing.T, s string) {
		var set drift.Object
		if err := yaml.Unmarshal([]byte(s), &set); err != nil || set == nil {
			return
		}
		res, err := Resolve(set, Options{Files: files(repo), Cluster: []drift.Object{secret}, MaxApplications: 20})
		if err != nil {
			return
		}
		if len(res.Applications) > 20 {
			t.Fatalf("%d applications, over the limit", len(res.Applications))
		}
		for _, g := range res.Applications {
			if drift.Str(g.Application, "metadata", "name") == "" {
				t.Fatalf("an Application without a name: %v", g.Application)
			}
		}
	})
}
