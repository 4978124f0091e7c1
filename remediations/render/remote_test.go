package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRemoteDependencies says which dependencies `helm dependency build`
// downloads: none when charts/ has them all; else the remote ones, at the
// lock's versions when there is a lock.
func TestRemoteDependencies(t *testing.T) {
	chartYAML := "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n" +
		"- {name: db, version: ~1.2.0, repository: https://charts.example.com/}\n" +
		"- {name: cache, version: 2.x, repository: oci://registry.example.com/charts}\n" +
		"- {name: lib, version: 0.1.0, repository: file://../lib}\n"
	base := map[string][]byte{"app/Chart.yaml": []byte(chartYAML), "app/templates/a.yaml": []byte("kind: ConfigMap\n"),
		"lib/Chart.yaml": []byte("apiVersion: v2\nname: lib\nversion: 0.1.0\n")}
	with := func(extra map[string][]byte) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	str := func(refs []ChartRef) string {
		var s []string
		for _, r := range refs {
			s = append(s, r.Chart+"@"+r.Version+"<"+r.Repository)
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"no lock: Chart.yaml's ranges", base, "db@~1.2.0<https://charts.example.com/ cache@2.x<oci://registry.example.com/charts"},
		{"a lock: its versions", with(map[string][]byte{"app/Chart.lock": []byte("dependencies:\n- {name: db, version: 1.2.3, repository: https://charts.example.com/}\n- {name: cache, version: 2.0.1, repository: oci://registry.example.com/charts}\n- {name: lib, version: 0.1.0, repository: file://../lib}\ndigest: sha256:x\n")}),
			"db@1.2.3<https://charts.example.com/ cache@2.0.1<oci://registry.example.com/charts"},
		{"all vendored: nothing", with(map[string][]byte{
			"app/charts/db/Chart.yaml":    []byte("apiVersion: v2\nname: db\nversion: 1.2.3\n"),
			"app/charts/cache/Chart.yaml": []byte("apiVersion: v2\nname: cache\nversion: 2.0.1\n"),
			"app/charts/lib/Chart.yaml":   []byte("apiVersion: v2\nname: lib\nversion: 0.1.0\n")}), ""},
		{"not a chart", map[string][]byte{"app/values.yaml": []byte("a: 1\n")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RemoteDependencies(tc.files, "app")
			if err != nil {
				t.Fatal(err)
			}
			if str(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", str(got), tc.want)
			}
		})
	}
}

// TestChartArchiveFiles unpacks a chart archive under a folder, the top
// directory dropped, and refuses one over the chart budget unpacked.
func TestChartArchiveFiles(t *testing.T) {
	archive := tgz(t, map[string]string{"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n", "web/templates/cm.yaml": "kind: ConfigMap\n", "web/values.yaml": strings.Repeat("a: 1\n", 2000)})
	files, err := ChartArchiveFiles(archive, "x/web-1.0.0", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || string(files["x/web-1.0.0/templates/cm.yaml"]) != "kind: ConfigMap\n" {
		t.Fatalf("files %v", keys(files))
	}
	_, err = ChartArchiveFiles(archive, "x/web-1.0.0", Limits{MaxChartBytes: 5000})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxChartBytes" {
		t.Fatalf("err = %v, want the unpacked chart over MaxChartBytes", err)
	}
	evil := tgz(t, map[string]string{"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n", "web/../../etc/passwd": "x"})
	if files, err := ChartArchiveFiles(evil, "d", Limits{}); err == nil {
		for name := range files {
			if !strings.HasPrefix(name, "d/") || strings.Contains(name, "..") {
				t.Fatalf("an archive's path outside its chart was kept as %q", name)
			}
		}
	}
	if _, err := ChartArchiveFiles(tgz(t, map[string]string{"web/values.yaml": "a: 1\n"}), "d", Limits{}); err == nil || !strings.Contains(err.Error(), "Chart.yaml") {
		t.Fatalf("err = %v, want an archive without Chart.yaml refused", err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// FuzzChartArchiveFiles reads any bytes as a fetched chart archive without
// panicking, within the budget it is given, every file under the folder.
func FuzzChartArchiveFiles(f *testing.F) {
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00})
	f.Add([]byte("not an archive"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := ChartArchiveFiles(data, "d", Limits{MaxChartBytes: 1 << 20, MaxFiles: 100})
		if err != nil {
			return
		}
		var total int
		for name, c := range files {
			total += len(c)
			if !strings.HasPrefix(name, "d/") || strings.Contains(name, "..") {
				t.Fatalf("file %q outside the folder", name)
			}
		}
		if total > 1<<20 || len(files) > 100 {
			t.Fatalf("%d files, %d bytes: over the budget", len(files), total)
		}
	})
}

// FuzzRemoteDependencies reads any Chart.yaml and Chart.lock without
// panicking; every dependency it returns has a repository the build
// downloads from.
func FuzzRemoteDependencies(f *testing.F) {
	f.Add("apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies:\n- {name: b, version: 1.x, repository: https://c.example.com}\n", "")
	f.Add("apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies:\n- {name: b, version: 1.x, repository: '@c'}\n", "dependencies:\n- {name: b, version: 1.0.0, repository: '@c'}\ndigest: x\n")
	f.Fuzz(func(t *testing.T, chartYAML, lock string) {
		files := map[string][]byte{"c/Chart.yaml": []byte(chartYAML)}
		if lock != "" {
			files["c/Chart.lock"] = []byte(lock)
		}
		refs, err := RemoteDependencies(files, "c")
		if err != nil {
			return
		}
		for _, r := range refs {
			if r.Repository == "" || strings.HasPrefix(r.Repository, "file://") {
				t.Fatalf("%s: not a remote dependency", fmt.Sprint(r))
			}
		}
	})
}
