package yamledit

import (
	"errors"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

const deployment = `# Web frontend.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    deployment.kubernetes.io/revision: "1"
  labels:
    app: web
spec:
  # the HPA takes over after the first rollout
  replicas: 2  # initial size
  selector:
    matchLabels: {app: web}
  template:
    spec:
      containers:
        - name: web
          image: 'ghcr.io/example/web:1.0'
          resources:
            requests:
              cpu: 1000m      # one core
              memory: "1024Mi"
          args:
            - --port=8080
            - --verbose
      volumes:
        - name: config
          configMap:
            name: web
---
apiVersion: v1
kind: Service
metadata:
  name: web
data: |
  literal
    block
spec:
  ports: [{port: 80}]
`

func TestRemove(t *testing.T) {
	tests := []struct {
		name, path string
		doc        int
		want       string // the lines that disappear, joined
	}{
		{"field with its comments", "/spec/replicas", 0, "  # the HPA takes over after the first rollout\n  replicas: 2  # initial size\n"},
		{"last key takes its empty parent with it", "/metadata/annotations/deployment.kubernetes.io~1revision", 0, "  annotations:\n    deployment.kubernetes.io/revision: \"1\"\n"},
		{"a nested mapping", "/spec/template/spec/containers/0/resources", 0, "          resources:\n            requests:\n              cpu: 1000m      # one core\n              memory: \"1024Mi\"\n"},
		{"a list item", "/spec/template/spec/containers/0/args/1", 0, "            - --verbose\n"},
		{"a whole list item mapping", "/spec/template/spec/volumes/0", 0, "      volumes:\n        - name: config\n          configMap:\n            name: web\n"},
		{"a literal block", "/data", 1, "data: |\n  literal\n    block\n"},
		{"an emptied mapping inside a list item", "/spec/template/spec/volumes/0/configMap/name", 0, "          configMap:\n            name: web\n"},
		{"the only label of a flow mapping takes the emptied parents", "/spec/selector/matchLabels/app", 0, "  selector:\n    matchLabels: {app: web}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Remove([]byte(deployment), tt.doc, drift.MustPointer(tt.path))
			if err != nil {
				t.Fatal(err)
			}
			if got := removedLines(deployment, string(out)); got != tt.want {
				t.Errorf("removed:\n%s\nwant removed:\n%s\nresult:\n%s", got, tt.want, out)
			}
			docs, err := Documents(out)
			if err != nil {
				t.Fatalf("result does not parse: %v", err)
			}
			if _, ok := drift.MustPointer(tt.path).Get(docs[tt.doc]); ok {
				t.Errorf("%s is still there", tt.path)
			}
			again, err := Remove(out, tt.doc, drift.MustPointer(tt.path))
			if err != nil || string(again) != string(out) {
				t.Errorf("removing twice changed the file again (err %v)", err)
			}
		})
	}
}

// removedLines returns the lines of before missing from after, assuming after
// is before with one contiguous run of lines cut out.
func removedLines(before, after string) string {
	b := strings.SplitAfter(before, "\n")
	a := strings.SplitAfter(after, "\n")
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j := 0
	for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	return strings.Join(b[i:len(b)-j], "")
}

func TestRemoveRefuses(t *testing.T) {
	const refused = `spec:
  selector: {app: web, tier: fe}
  ports: [80, 443]
  containers:
    - name: web
      image: x
  a: 1
  b: {c: 1,
    d: 2}
`
	for _, path := range []string{
		"/spec/selector/app",      // inside a flow mapping with other entries
		"/spec/ports/0",           // inside a flow list with other items
		"/spec/containers/0/name", // first field of a list item
		"/spec/b/c",               // flow mapping over two lines
	} {
		if _, err := Remove([]byte(refused), 0, drift.MustPointer(path)); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Remove(%s) error = %v, want ErrUnsupported", path, err)
		}
	}
}

func TestSetScalar(t *testing.T) {
	tests := []struct {
		path    string
		value   any
		oldLine string
		newLine string
	}{
		{"/spec/template/spec/containers/0/resources/requests/cpu", "1", "              cpu: 1000m      # one core\n", "              cpu: \"1\"      # one core\n"},
		{"/spec/template/spec/containers/0/resources/requests/memory", "1Gi", "              memory: \"1024Mi\"\n", "              memory: \"1Gi\"\n"},
		{"/spec/template/spec/containers/0/image", "ghcr.io/example/web:1.1", "          image: 'ghcr.io/example/web:1.0'\n", "          image: 'ghcr.io/example/web:1.1'\n"},
		{"/spec/replicas", int64(3), "  replicas: 2  # initial size\n", "  replicas: 3  # initial size\n"},
		{"/metadata/labels/app", "true", "    app: web\n", "    app: \"true\"\n"},
		{"/spec/template/spec/containers/0/args/0", "--port=9090", "            - --port=8080\n", "            - --port=9090\n"},
	}
	for _, tt := range tests {
		out, err := SetScalar([]byte(deployment), 0, drift.MustPointer(tt.path), tt.value)
		if err != nil {
			t.Errorf("SetScalar(%s): %v", tt.path, err)
			continue
		}
		want := strings.Replace(deployment, tt.oldLine, tt.newLine, 1)
		if string(out) != want {
			t.Errorf("SetScalar(%s):\n%s", tt.path, out)
		}
		docs, err := Documents(out)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := drift.MustPointer(tt.path).Get(docs[0]); !drift.Equal(normalizeNumber(got), tt.value) {
			t.Errorf("after SetScalar(%s) the file reads %v (%T)", tt.path, got, got)
		}
		again, _ := SetScalar(out, 0, drift.MustPointer(tt.path), tt.value)
		if string(again) != string(out) {
			t.Errorf("setting %s twice changed the file again", tt.path)
		}
	}
	if _, err := SetScalar([]byte(deployment), 0, drift.MustPointer("/spec/nope"), "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing path error = %v", err)
	}
	if _, err := SetScalar([]byte(deployment), 1, drift.MustPointer("/data"), "x"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("literal block error = %v", err)
	}
}

const application = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web   # the storefront
spec:
  project: default
  source:
    repoURL: https://git.example.com/web.git
    path: apps/web
  destination:
    server: https://kubernetes.default.svc
`

type rule struct {
	Group        string   `yaml:"group"`
	Kind         string   `yaml:"kind"`
	Name         string   `yaml:"name"`
	JSONPointers []string `yaml:"jsonPointers"`
}

func TestAppendItem(t *testing.T) {
	r := rule{Group: "apps", Kind: "Deployment", Name: "web", JSONPointers: []string{"/spec/replicas"}}
	out, err := AppendItem([]byte(application), 0, drift.MustPointer("/spec/ignoreDifferences"), r, "driftfix: hpa-replicas")
	if err != nil {
		t.Fatal(err)
	}
	want := application + `  ignoreDifferences:
    # driftfix: hpa-replicas
    - group: apps
      kind: Deployment
      name: web
      jsonPointers:
        - /spec/replicas
`
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	again, err := AppendItem(out, 0, drift.MustPointer("/spec/ignoreDifferences"), r, "driftfix: hpa-replicas")
	if err != nil || string(again) != string(out) {
		t.Fatalf("appending the same rule twice changed the file (err %v):\n%s", err, again)
	}
	r2 := rule{Group: "", Kind: "Service", Name: "web", JSONPointers: []string{"/spec/clusterIP"}}
	out2, err := AppendItem(out, 0, drift.MustPointer("/spec/ignoreDifferences"), r2, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out2), string(out)) || !strings.Contains(string(out2), "\n    - group: \"\"\n      kind: Service\n") {
		t.Fatalf("second rule not appended after the first:\n%s", out2)
	}
	opts, err := AppendItem([]byte(application), 0, drift.MustPointer("/spec/syncPolicy/syncOptions"), "RespectIgnoreDifferences=true", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(opts), "  syncPolicy:\n    syncOptions:\n      - RespectIgnoreDifferences=true\n") {
		t.Fatalf("syncOptions not created:\n%s", opts)
	}
	empty := strings.Replace(application, "  project: default\n", "  project: default\n  ignoreDifferences: []  # none yet\n", 1)
	out3, err := AppendItem([]byte(empty), 0, drift.MustPointer("/spec/ignoreDifferences"), r, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out3), "  ignoreDifferences: # none yet\n    - group: apps\n") {
		t.Fatalf("empty list not filled in place:\n%s", out3)
	}
}

func TestSetValueCreatesKeys(t *testing.T) {
	const cm = `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
data:
  url: https://argocd.example.com  # public URL
  application.resourceTrackingMethod: label
`
	out, err := SetValue([]byte(cm), 0, drift.MustPointer("/data/application.resourceTrackingMethod"), "annotation")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(cm, "Method: label", "Method: annotation", 1); string(out) != want {
		t.Fatalf("got:\n%s", out)
	}
	noKey := strings.Replace(cm, "  application.resourceTrackingMethod: label\n", "", 1)
	out, err = SetValue([]byte(noKey), 0, drift.MustPointer("/data/application.resourceTrackingMethod"), "annotation")
	if err != nil {
		t.Fatal(err)
	}
	if want := noKey + "  application.resourceTrackingMethod: annotation\n"; string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	noData := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n"
	out, err = SetValue([]byte(noData), 0, drift.MustPointer("/data/application.resourceTrackingMethod"), "annotation")
	if err != nil {
		t.Fatal(err)
	}
	if want := noData + "data:\n  application.resourceTrackingMethod: annotation\n"; string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

// TestRemoveListItemComment: removing a later list item removes the
// comment directly above its dash; the comment above the first item,
// which may be about the whole list, stays when the first is removed.
func TestRemoveListItemComment(t *testing.T) {
	src := "rules:\n  # about the list\n  - a: 1\n  # about b\n  - b: 2\n  - c: 3\n"
	out, err := Remove([]byte(src), 0, drift.MustPointer("/rules/1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "rules:\n  # about the list\n  - a: 1\n  - c: 3\n"; string(out) != want {
		t.Errorf("removing item 1:\n%s\nwant:\n%s", out, want)
	}
	out, err = Remove([]byte(src), 0, drift.MustPointer("/rules/0"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "rules:\n  # about the list\n  # about b\n  - b: 2\n  - c: 3\n"; string(out) != want {
		t.Errorf("removing item 0:\n%s\nwant:\n%s", out, want)
	}
}
