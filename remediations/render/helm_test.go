package render

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

func TestHelmRendersLikeArgoCD(t *testing.T) {
	s, err := drift.LoadSnapshot("../testdata/helm-pin-value.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src, ok := s.HelmSource()
	if !ok {
		t.Fatal("no Helm source")
	}
	files := map[string][]byte{}
	for k, v := range s.Repo.Files {
		files[k] = []byte(v)
	}
	opts := HelmOptionsFor(s.Application, src)
	a, err := Helm(files, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Helm(files, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 2 {
		t.Fatalf("rendered %d objects, want the Secret and the Deployment", len(a))
	}
	for i := range a {
		if drift.RefOf(a[i]).Kind == "Secret" {
			if drift.Equal(a[i]["data"], b[i]["data"]) {
				t.Error("randAlphaNum rendered the same password twice")
			}
			continue
		}
		if got := drift.Str(a[i], "spec", "template", "spec", "containers", "0"); got != "" {
			t.Fatal("unexpected shape")
		}
		img, _ := drift.MustPointer("/spec/template/spec/containers/0/image").Get(a[i])
		if img != "ghcr.io/example-org/ledger:3.2.0" {
			t.Errorf("image rendered as %v", img)
		}
		if r, _ := drift.MustPointer("/spec/replicas").Get(a[i]); r != int64(2) {
			t.Errorf("replicas rendered as %#v, want int64 2", r)
		}
	}
	opts.ValueFiles = []string{"missing.yaml"}
	if _, err := Helm(files, opts); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing values file must be named, got %v", err)
	}
}

func TestHelmValuesPrecedence(t *testing.T) {
	files := map[string][]byte{
		"c/Chart.yaml":           []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n"),
		"c/values.yaml":          []byte("a: chart\nb: chart\nc: chart\nd: chart\n"),
		"c/values-prod.yaml":     []byte("b: file\nc: file\nd: file\n"),
		"c/templates/cm.yaml":    []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n  namespace: {{ .Release.Namespace }}\ndata:\n  a: {{ .Values.a }}\n  b: {{ .Values.b }}\n  c: {{ .Values.c }}\n  d: {{ .Values.d | quote }}\n"),
		"other/templates/x.yaml": []byte("not: rendered\n"),
	}
	objs, err := Helm(files, HelmOptions{ChartDir: "c", ValueFiles: []string{"values-prod.yaml"}, ValuesObject: map[string]any{"c": "object"},
		Parameters: []Parameter{{Name: "d", Value: "1", ForceString: true}}, ReleaseName: "rel", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || drift.Str(objs[0], "metadata", "name") != "rel" || drift.Str(objs[0], "metadata", "namespace") != "ns" {
		t.Fatalf("objects = %v", objs)
	}
	want := map[string]any{"a": "chart", "b": "file", "c": "object", "d": "1"}
	if !drift.Equal(objs[0]["data"], want) {
		t.Errorf("data = %v, want %v (chart values < value files < valuesObject < parameters)", objs[0]["data"], want)
	}
}
