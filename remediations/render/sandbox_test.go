package render

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// listener is a real HTTP server on 127.0.0.1 that counts every request, to
// prove a render never reaches it.
func listener(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\n"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

func TestRenderNeverReachesTheNetwork(t *testing.T) {
	url, hits := listener(t)
	host := strings.TrimPrefix(url, "http://")
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n"
	cases := []struct {
		name  string
		files map[string]string
		dir   string
		helm  bool
		file  string // the file the error must name
		ref   string // the URL the error must name
	}{
		{name: "remote resource file", dir: "app",
			files: map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\n- " + url + "/cm.yaml\n", "app/cm.yaml": cm},
			file:  "app/kustomization.yaml", ref: url + "/cm.yaml"},
		{name: "remote git base", dir: "app",
			files: map[string]string{"app/kustomization.yaml": "bases:\n- " + url + "/org/repo.git//base?ref=main\n"},
			file:  "app/kustomization.yaml", ref: url + "/org/repo.git//base?ref=main"},
		{name: "component by host without a scheme", dir: "app",
			files: map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\ncomponents:\n- " + host + "/org/repo//comp\n", "app/cm.yaml": cm},
			file:  "app/kustomization.yaml", ref: host + "/org/repo//comp"},
		{name: "remote resource in a local base", dir: "overlays/prod",
			files: map[string]string{"overlays/prod/kustomization.yaml": "resources:\n- ../../base\n",
				"base/kustomization.yaml": "resources:\n- cm.yaml\n- " + url + "/more.yaml\n", "base/cm.yaml": cm},
			file: "base/kustomization.yaml", ref: url + "/more.yaml"},
		{name: "remote patch", dir: "app",
			files: map[string]string{"app/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: " + url + "/patch.yaml\n", "app/cm.yaml": cm},
			file:  "app/kustomization.yaml", ref: url + "/patch.yaml"},
		{name: "remote generator file", dir: "app",
			files: map[string]string{"app/kustomization.yaml": "configMapGenerator:\n- name: x\n  files:\n  - key=" + url + "/data\n"},
			file:  "app/kustomization.yaml", ref: url + "/data"},
		{name: "helm chart from a repository", dir: "app",
			files: map[string]string{"app/kustomization.yaml": "helmCharts:\n- name: x\n  repo: " + url + "/charts\n  version: 1.0.0\n"},
			file:  "app/kustomization.yaml", ref: url + "/charts"},
		{name: "helm dependency not vendored", dir: "chart", helm: true,
			files: map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n- name: redis\n  version: 1.0.0\n  repository: " + url + "/charts\n",
				"chart/templates/cm.yaml": cm},
			file: "chart/Chart.yaml", ref: url + "/charts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range c.files {
				files[k] = []byte(v)
			}
			var err error
			if c.helm {
				_, err = Helm(files, HelmOptions{ChartDir: c.dir, ReleaseName: "r", Namespace: "n"})
			} else {
				_, err = Kustomize(files, c.dir)
			}
			var re *RemoteError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a RemoteError", err)
			}
			if re.File != c.file || re.URL != c.ref || !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), c.ref) {
				t.Errorf("err = %v, want it to name %s and %s", err, c.file, c.ref)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the render sent %d requests to %s", n, url)
			}
		})
	}
}

func TestKustomizeLocalStillBuilds(t *testing.T) {
	files := map[string][]byte{
		"overlays/prod/kustomization.yaml": []byte("resources:\n- ../../base\nnamePrefix: prod-\nconfigMapGenerator:\n- name: settings\n  literals:\n  - docs=https://example.com/docs\n"),
		"base/kustomization.yaml":          []byte("resources:\n- cm.yaml\n"),
		"base/cm.yaml":                     []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n"),
	}
	objs, err := Kustomize(files, "overlays/prod")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("built %d objects, want the base's ConfigMap and the generated one", len(objs))
	}
	_, err = KustomizeWithLimits(files, "overlays/prod", Limits{MaxRenderedBytes: 10})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxRenderedBytes" {
		t.Errorf("a build over MaxRenderedBytes: %v", err)
	}
	_, err = KustomizeWithLimits(files, "overlays/prod", Limits{MaxChartBytes: 10})
	if !errors.As(err, &le) || le.Limit != "MaxChartBytes" {
		t.Errorf("files over MaxChartBytes: %v", err)
	}
}

func TestLooksRemote(t *testing.T) {
	for e, want := range map[string]bool{
		"../base": false, "cm.yaml": false, "./dir/x": false, "sub.dir/x": true, "github.com/org/repo": true,
		"git@github.com:org/repo.git": true, "https://x/y": true, "ssh://git@x/y": true, "file:///tmp/repo": true,
		"dir?ref=v1": true, "repo//path": true, "a.yaml": false, "gh:org/repo": true,
	} {
		if got := looksRemote(e); got != want {
			t.Errorf("looksRemote(%q) = %v, want %v", e, got, want)
		}
	}
}
