package diff

import (
	"reflect"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

func snapshot(t *testing.T, appSpec, resources, cluster string) *drift.Snapshot {
	t.Helper()
	in := "apiVersion: driftfix/v1\nkind: Snapshot\napplication:\n  apiVersion: argoproj.io/v1alpha1\n  kind: Application\n  metadata: {name: app, namespace: argocd}\n  spec: " + appSpec +
		"\nresources:\n" + resources
	if cluster != "" {
		in += "\ncluster:\n" + cluster
	}
	s, err := drift.ParseSnapshot([]byte(in))
	if err != nil {
		t.Fatalf("%v\n%s", err, in)
	}
	return s
}

func paths(cmp *drift.Comparison, hidden bool) []string {
	var out []string
	for _, d := range cmp.Diffs {
		if (len(d.HiddenBy) > 0) == hidden {
			out = append(out, d.Path.String())
		}
	}
	return out
}

const lastApplied = `kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","gone":"x"}}'`

// TestCompareSemantics compares one resource per case and checks the paths
// that differ, visible and hidden by ignore rules.
func TestCompareSemantics(t *testing.T) {
	var tests []semanticsCase
	for _, group := range [][]semanticsCase{modeCases(), listCases(), ignoreCases(), normalizeCases()} {
		tests = append(tests, group...)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmp, _, err := Compare(snapshot(t, tt.appSpec, tt.resources, tt.cluster))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(paths(cmp, false), " "); got != strings.Join(tt.want, " ") {
				t.Errorf("visible differences %q, want %q", got, strings.Join(tt.want, " "))
			}
			if got := strings.Join(paths(cmp, true), " "); got != strings.Join(tt.wantHidden, " ") {
				t.Errorf("hidden differences %q, want %q", got, strings.Join(tt.wantHidden, " "))
			}
		})
	}
}

// semanticsCase is one resource of TestCompareSemantics: the Application's
// spec, the resource, the cluster's Argo CD settings and the paths that
// differ, visible and hidden.
type semanticsCase struct {
	name, appSpec, resources, cluster string
	want, wantHidden                  []string
}

// modeCases compare three-way, two-way and server-side, as the application
// and the resource choose.
func modeCases() []semanticsCase {
	return []semanticsCase{
		{
			name:    "three-way: live-only key counts only when last-applied has it",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "1"}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {` + lastApplied + `}}, data: {a: "1", gone: "x", added: "y"}}`,
			want: []string{"/data/gone"},
		},
		{
			name:    "three-way: an empty annotations map in last-applied is not Git dropping live's annotations",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "1"}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {team: shop, kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"name":"c"},"data":{"a":"1"}}'}}, data: {a: "1"}}`,
			want: nil,
		},
		{
			name:    "two-way without last-applied: live-only keys never count",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "1"}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "2", added: "y"}}`,
			want: []string{"/data/a"},
		},
		{
			name:    "server-side apply: live-only key counts when argocd-controller applied it",
			appSpec: "{syncPolicy: {syncOptions: [ServerSideApply=true]}}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "1"}}
  live:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: c
      managedFields:
      - {manager: argocd-controller, operation: Apply, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:a": {}, "f:old": {}}}}
      - {manager: other, operation: Update, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:mine": {}}}}
    data: {a: "1", old: "x", mine: "y", nobody: "z"}`,
			want: []string{"/data/old"},
		},
		{
			name:    "a resource's own ServerSideApply=true is compared client-side (Argo CD 3.6)",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {argocd.argoproj.io/sync-options: "ServerSideApply=true"}}, data: {a: "1"}}
  live:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: c
      annotations: {argocd.argoproj.io/sync-options: "ServerSideApply=true"}
      managedFields:
      - {manager: argocd-controller, operation: Apply, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:a": {}, "f:old": {}}}}
    data: {a: "1", old: "x"}`,
			want: nil,
		},
		{
			name:    "a resource's ServerSideApply=false leaves the application's Server-Side Diff on (Argo CD 3.6)",
			appSpec: "{syncPolicy: {syncOptions: [ServerSideApply=true]}}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {argocd.argoproj.io/sync-options: "ServerSideApply=false"}}, data: {a: "1"}}
  live:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: c
      annotations: {argocd.argoproj.io/sync-options: "ServerSideApply=false"}
      managedFields:
      - {manager: argocd-controller, operation: Apply, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:a": {}, "f:old": {}}}}
    data: {a: "1", old: "x"}`,
			want: []string{"/data/old"},
		},
	}
}

// listCases match list items by merge key, by name and by position.
func listCases() []semanticsCase {
	return []semanticsCase{
		{
			name:    "containers merge by name whatever their order; env by name",
			appSpec: "{}",
			resources: `- target: {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: a, image: a, env: [{name: X, value: "1"}, {name: Y, value: "2"}]}, {name: b, image: b}]}}}}
  live: {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: b, image: b, imagePullPolicy: Always}, {name: a, image: a, env: [{name: Y, value: "2"}]}]}}}}`,
			want: []string{"/spec/template/spec/containers/1/env/0"},
		},
		{
			name:    "custom resource lists are replaced whole: a field only live has inside an item counts, at its leaf, once the list differs otherwise",
			appSpec: "{}",
			resources: `- target: {apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {items: [{name: a, size: 2}]}}
  live: {apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {items: [{name: a, size: 1, extra: 1}]}}`,
			want: []string{"/spec/items/0/size", "/spec/items/0/extra"},
		},
		{
			name:    "a custom resource's list equal to Git's but for fields only live has is not patched",
			appSpec: "{}",
			resources: `- target: {apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {items: [{name: a}]}}
  live: {apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {items: [{name: a, extra: 1}]}}`,
			want: nil,
		},
		{
			name:    "list items without a merge key are matched by name, wherever they sit",
			appSpec: "{}",
			resources: `- target: {apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {items: [{name: a, v: 1}, {name: b, v: 1}]}}
  live: {apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {items: [{name: b, v: 2}, {name: a, v: 1}, {name: c}]}}`,
			want: []string{"/spec/items/0/v", "/spec/items/2"},
		},
		{
			name:    "list items without a name are matched by position when the lengths match",
			appSpec: "{}",
			resources: `- target: {apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: i}, spec: {rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}}
  live: {apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: i}, spec: {rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 8080}}}}]}}]}}`,
			want: []string{"/spec/rules/0/http/paths/0/backend/service/port/number"},
		},
	}
}

// ignoreCases leave out status and server metadata, and hide what ignore
// rules name.
func ignoreCases() []semanticsCase {
	return []semanticsCase{
		{
			name:    "status and server metadata are never compared",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, uid: "1", generation: 1}, status: {x: 1}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, uid: "2", generation: 5, resourceVersion: "9", creationTimestamp: "2026-01-01T00:00:00Z"}, status: {x: 2}}`,
			want: nil,
		},
		{
			name:    "ignoreResourceStatusField none compares status",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, status: {x: 1}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, status: {x: 2}}`,
			cluster: `- {apiVersion: v1, kind: ConfigMap, metadata: {name: argocd-cm, namespace: argocd}, data: {resource.compareoptions: "ignoreResourceStatusField: none"}}`,
			want:    []string{"/status/x"},
		},
		{
			name:    "a jsonPointer rule hides its path, which is still computed",
			appSpec: "{ignoreDifferences: [{kind: ConfigMap, jsonPointers: [/data/a]}]}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "1", b: "1"}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "2", b: "2"}}`,
			want:       []string{"/data/b"},
			wantHidden: []string{"/data/a"},
		},
		{
			name:    "a rule for another name or group does not apply",
			appSpec: "{ignoreDifferences: [{kind: ConfigMap, name: other, jsonPointers: [/data]}, {group: apps, kind: ConfigMap, jsonPointers: [/data]}]}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "1"}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "2"}}`,
			want: []string{"/data/a"},
		},
		{
			name:    "a pointer inside a list item hides that leaf",
			appSpec: "{ignoreDifferences: [{group: example.com, kind: Thing, jsonPointers: [/spec/items/0/extra]}]}",
			resources: `- target: {apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {items: [{name: a, extra: 1}]}}
  live: {apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {items: [{name: a, extra: 2}]}}`,
			wantHidden: []string{"/spec/items/0/extra"},
		},
		{
			name:    "a managedFieldsManagers rule hides what that manager owns",
			appSpec: "{ignoreDifferences: [{kind: ConfigMap, managedFieldsManagers: [operator]}]}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "1", b: "1"}}
  live:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: c
      managedFields:
      - {manager: operator, operation: Update, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:a": {}}}}
    data: {a: "2", b: "2"}`,
			want:       []string{"/data/b"},
			wantHidden: []string{"/data/a"},
		},
		{
			name:    "a system rule for a kind applies to every application",
			appSpec: "{}",
			resources: `- target: {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 1}}
  live: {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 3}}`,
			cluster:    "- {apiVersion: v1, kind: ConfigMap, metadata: {name: argocd-cm}, data: {resource.customizations.ignoreDifferences.apps_Deployment: \"jqPathExpressions: ['.spec.replicas']\"}}",
			wantHidden: []string{"/spec/replicas"},
		},
	}
}

// normalizeCases compare Secrets' stringData, tracking annotations and
// quantities as Argo CD normalizes them.
func normalizeCases() []semanticsCase {
	return []semanticsCase{
		{
			name:    "Secret stringData is compared as data",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: Secret, metadata: {name: s}, stringData: {u: admin}, data: {p: cGFzcw==}}
  live: {apiVersion: v1, kind: Secret, metadata: {name: s}, data: {u: YWRtaW4=, p: cGFzcw==}}`,
			want: nil,
		},
		{
			name:    "tracking annotation missing in a live object with the instance label is back-filled",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {argocd.argoproj.io/tracking-id: "app:/ConfigMap:/c"}}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, labels: {app.kubernetes.io/instance: app}}}`,
			want: nil,
		},
		{
			name:    "tracking annotation missing in a live object without the instance label is drift",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {argocd.argoproj.io/tracking-id: "app:/ConfigMap:/c"}}}
  live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`,
			want: []string{"/metadata/annotations"},
		},
		{
			name:    "quantities of a strictly decoding built-in kind compare by value",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, resources: {limits: {memory: 1024Mi, cpu: 0.5}}}]}}
  live: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, resources: {limits: {memory: 1Gi, cpu: 500m}}}]}}`,
			want: nil,
		},
		{
			name:    "one unknown field disables that canonicalization",
			appSpec: "{}",
			resources: `- target: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {bogus: true, containers: [{name: a, resources: {limits: {memory: 1024Mi}}}]}}
  live: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, resources: {limits: {memory: 1Gi}}}]}}`,
			want: []string{"/spec/bogus", "/spec/containers/0/resources/limits/memory"},
		},
	}
}

func TestOwnersOnDifferences(t *testing.T) {
	s := snapshot(t, "{}", `- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "1"}}
  live:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: c
      managedFields:
      - {manager: argocd-controller, operation: Update, time: "2026-01-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {".": {}}}}
      - {manager: kubectl-edit, operation: Update, time: "2026-01-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:a": {}}}}
    data: {a: "2"}`, "")
	cmp, _, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Diffs) != 1 {
		t.Fatalf("diffs = %+v", cmp.Diffs)
	}
	got := cmp.Diffs[0].Owners
	if len(got) != 1 || got[0] != (drift.Owner{Manager: "kubectl-edit", Operation: "Update", Time: "2026-01-02T00:00:00Z"}) {
		t.Fatalf("owners = %+v, want only kubectl-edit", got)
	}
}

func TestReadSettings(t *testing.T) {
	cm := func(data string) []drift.Object {
		s := snapshot(t, "{}", "- target: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}", "- {apiVersion: v1, kind: ConfigMap, metadata: {name: argocd-cm}, data: "+data+"}")
		return s.Cluster
	}
	s, rules, err := ReadSettings(nil)
	if err != nil || s.TrackingMethod != "annotation" || s.InstanceLabelKey != "app.kubernetes.io/instance" || s.StatusIgnore != "all" || rules != nil {
		t.Fatalf("defaults = %+v %v %v", s, rules, err)
	}
	s, _, err = ReadSettings(cm(`{application.resourceTrackingMethod: label, application.instanceLabelKey: argocd.argoproj.io/instance}`))
	if err != nil || !s.LabelTracking() || s.InstanceLabelKey != "argocd.argoproj.io/instance" {
		t.Fatalf("label settings = %+v, %v", s, err)
	}
	_, rules, err = ReadSettings(cm(`{resource.customizations: "apps/Deployment:\n  ignoreDifferences: |\n    jsonPointers: [/spec/replicas]\n", resource.customizations.ignoreDifferences.Service: "jsonPointers: [/spec/clusterIP]"}`))
	if err != nil || len(rules) != 2 {
		t.Fatalf("rules = %+v, %v", rules, err)
	}
	if rules[0].Group != "apps" || rules[0].Kind != "Deployment" || rules[1].Group != "" || rules[1].Kind != "Service" {
		t.Fatalf("rule scopes = %+v", rules)
	}
	if _, _, err := ReadSettings(cm(`{application.resourceTrackingMethod: labels}`)); err == nil || !strings.Contains(err.Error(), `unknown tracking method "labels"`) {
		t.Fatalf("bad tracking method error = %v", err)
	}
	if _, _, err := ReadSettings(cm(`{resource.customizations.ignoreDifferences.all: "jsonPointers: {"}`)); err == nil || !strings.Contains(err.Error(), "resource.customizations.ignoreDifferences.all") {
		t.Fatalf("bad rule error = %v", err)
	}
}

func TestJQPaths(t *testing.T) {
	doc := drift.Object{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "app"}, map[string]any{"name": "istio-proxy"},
	}}}
	ps, err := JQPaths(`.spec.containers[] | select(.name == "istio-proxy")`, doc)
	if err != nil || len(ps) != 1 || ps[0].String() != "/spec/containers/1" {
		t.Fatalf("paths = %v, %v", ps, err)
	}
	if _, err := JQPaths(`.spec[`, doc); err == nil {
		t.Fatal("a bad expression must be an error")
	}
	if ps, _ := JQPaths(`.webhooks[]?.clientConfig.caBundle`, doc); len(ps) != 0 {
		t.Fatalf("optional iteration over a missing list selects %v", ps)
	}
}

// TestKeepKeysOf: the remarshaled object keeps only the original's keys,
// recursively and through lists of the same length, and empty (never nil)
// maps and lists where it had nil ones.
func TestKeepKeysOf(t *testing.T) {
	orig := map[string]any{"a": map[string]any{"b": 1, "c": []any{map[string]any{"d": 1}}}, "e": []any{}, "f": map[string]any{}}
	v := map[string]any{"a": map[string]any{"b": 2, "x": 3, "c": []any{map[string]any{"d": 2, "y": 4}}}, "z": 5, "e": []any(nil), "f": map[string]any(nil)}
	got := keepKeysOf(orig, v)
	want := map[string]any{"a": map[string]any{"b": 2, "c": []any{map[string]any{"d": 2}}}, "e": []any{}, "f": map[string]any{}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	if !reflect.DeepEqual(orig, map[string]any{"a": map[string]any{"b": 1, "c": []any{map[string]any{"d": 1}}}, "e": []any{}, "f": map[string]any{}}) {
		t.Fatalf("the original changed: %#v", orig)
	}
}

// A difference a resource's own ignore-differences annotation hides is
// attributed to that annotation: the rule's holder is the resource and its
// path the annotation, never the Application or argocd-cm.
func TestAnnotationRuleAttribution(t *testing.T) {
	s := snapshot(t, "{ignoreDifferences: [{group: apps, kind: Deployment, name: other, jsonPointers: [/spec/paused]}]}",
		`- target: {apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: shop, annotations: {argocd.argoproj.io/ignore-differences: "jsonPointers: [/spec/replicas]"}}, spec: {replicas: 2}}
  live: {apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: shop, annotations: {argocd.argoproj.io/ignore-differences: "jsonPointers: [/spec/replicas]"}}, spec: {replicas: 5}}`, "")
	cmp, _, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, d := range cmp.Diffs {
		if d.Path.String() != "/spec/replicas" {
			continue
		}
		found = true
		if len(d.HiddenBy) != 1 {
			t.Fatalf("/spec/replicas hidden by %v, want exactly the annotation's rule", d.HiddenBy)
		}
		r := cmp.Rules[d.HiddenBy[0]]
		want := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "api"}
		if !r.Annotation || r.System || r.Holder != want || r.Path.String() != "/metadata/annotations/argocd.argoproj.io~1ignore-differences" {
			t.Errorf("hidden by %+v, want the annotation of %s", r, want)
		}
		if len(r.Hidden) != 1 || len(r.Covered) != 1 {
			t.Errorf("the annotation's rule records hidden %v, covered %v; want the one difference of its one resource", r.Hidden, r.Covered)
		}
	}
	if !found {
		t.Fatal("no difference at /spec/replicas")
	}
}
