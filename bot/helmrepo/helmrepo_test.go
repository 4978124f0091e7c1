package helmrepo_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/driftfix/driftfix/bot/helmrepo"
	"github.com/driftfix/driftfix/bot/helmrepo/helmrepotest"
	"github.com/driftfix/driftfix/remediations/render"
)

// versionOf is the version of the chart an archive holds.
func versionOf(t *testing.T, archive []byte) string {
	t.Helper()
	c, err := loader.LoadArchive(strings.NewReader(string(archive)))
	if err != nil {
		t.Fatalf("the fetched archive is not a chart: %v", err)
	}
	return c.Metadata.Version
}

func newFetcher(t *testing.T, o helmrepo.Options) *helmrepo.Fetcher {
	t.Helper()
	f, err := helmrepo.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// web is a chart archive of one version, with one ConfigMap template.
func web(t *testing.T, version string) []byte {
	return helmrepotest.Package(t, "web", version, map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {version: " + version + "}\n"})
}

// TestFetchFromChartRepository fetches from a chart repository on
// loopback: versions resolved as Argo CD resolves a targetRevision, the
// archive as packaged, and what is wrong refused with what it is.
func TestFetchFromChartRepository(t *testing.T) {
	versions := []string{"1.0.0", "1.2.0", "1.2.5", "1.3.0", "1.4.0-rc.1", "2.0.0"}
	var archives [][]byte
	for _, v := range versions {
		archives = append(archives, web(t, v))
	}
	repo := helmrepotest.NewRepo(t, archives...)
	ctx := context.Background()
	for _, tc := range []struct{ want, got string }{
		{"1.2.0", "1.2.0"},
		{"1.2.*", "1.2.5"},
		{">=1.0 <2", "1.3.0"},
		{"*", "2.0.0"},
		{"~1.2.0", "1.2.5"},
		{"^1.0.0", "1.3.0"},
		{">=1.4.0-0 <2", "1.4.0-rc.1"},
		{"1.2", "1.2.5"}, // an exact version Helm's --version reads as 1.2.x
	} {
		t.Run(tc.want, func(t *testing.T) {
			f := newFetcher(t, helmrepo.Options{})
			v, a, err := f.Fetch(ctx, render.ChartRef{Repository: repo.URL, Chart: "web", Version: tc.want})
			if err != nil {
				t.Fatal(err)
			}
			if v != tc.got || versionOf(t, a) != tc.got {
				t.Fatalf("%q resolved to %s (archive of %s), want %s", tc.want, v, versionOf(t, a), tc.got)
			}
		})
	}
	t.Run("a range no version meets", func(t *testing.T) {
		_, _, err := newFetcher(t, helmrepo.Options{}).Fetch(ctx, render.ChartRef{Repository: repo.URL, Chart: "web", Version: ">=3"})
		if err == nil || !strings.Contains(err.Error(), `no version meets ">=3"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a chart the index lacks", func(t *testing.T) {
		_, _, err := newFetcher(t, helmrepo.Options{}).Fetch(ctx, render.ChartRef{Repository: repo.URL, Chart: "db", Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), "has no chart db") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("an archive over the cap", func(t *testing.T) {
		_, _, err := newFetcher(t, helmrepo.Options{MaxArchiveBytes: 64}).Fetch(ctx, render.ChartRef{Repository: repo.URL, Chart: "web", Version: "1.0.0"})
		var le *helmrepo.LimitError
		if !errors.As(err, &le) || le.Limit != 64 || !strings.Contains(err.Error(), "--chart-max-bytes") || !strings.Contains(err.Error(), "64 bytes") {
			t.Fatalf("err = %v, want the archive refused naming the cap", err)
		}
	})
	t.Run("an index over the cap", func(t *testing.T) {
		_, _, err := newFetcher(t, helmrepo.Options{MaxIndexBytes: 100}).Fetch(ctx, render.ChartRef{Repository: repo.URL, Chart: "web", Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), "index") || !strings.Contains(err.Error(), "--chart-max-index-bytes") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("the run's total over its cap", func(t *testing.T) {
		f := newFetcher(t, helmrepo.Options{MaxTotalBytes: int64(len(repoIndexBytes(t, repo))) + 10})
		_, _, err := f.Fetch(ctx, render.ChartRef{Repository: repo.URL, Chart: "web", Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), "--chart-max-total-bytes") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a digest the index does not give", func(t *testing.T) {
		bad := helmrepotest.NewRepo(t, web(t, "1.0.0"))
		bad.SetDigest("web", "1.0.0", strings.Repeat("0", 64))
		_, _, err := newFetcher(t, helmrepo.Options{}).Fetch(ctx, render.ChartRef{Repository: bad.URL, Chart: "web", Version: "1.0.0"})
		var de *helmrepo.DigestError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("err = %v, want the archive refused for its digest", err)
		}
	})
	t.Run("a dead server", func(t *testing.T) {
		dead := helmrepotest.NewRepo(t, web(t, "1.0.0"))
		dead.Close()
		_, _, err := newFetcher(t, helmrepo.Options{}).Fetch(ctx, render.ChartRef{Repository: dead.URL, Chart: "web", Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), dead.URL+"/index.yaml") {
			t.Fatalf("err = %v, want the index URL named", err)
		}
	})
	t.Run("a repository alias", func(t *testing.T) {
		_, _, err := newFetcher(t, helmrepo.Options{}).Fetch(ctx, render.ChartRef{Repository: "@bitnami", Chart: "web", Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), "alias") {
			t.Fatalf("err = %v", err)
		}
	})
}

// repoIndexBytes is the repository's index as served.
func repoIndexBytes(t *testing.T, repo *helmrepotest.Repo) []byte {
	t.Helper()
	resp, err := http.Get(repo.URL + "/index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFetchCache fetches a chart version once: a second run with the same
// cache folder needs no server for an exact version, and each run reads a
// repository's index once however many charts it fetches.
func TestFetchCache(t *testing.T) {
	repo := helmrepotest.NewRepo(t, web(t, "1.0.0"), web(t, "1.1.0"))
	cache := t.TempDir()
	ctx := context.Background()
	f := newFetcher(t, helmrepo.Options{CacheDir: cache})
	for _, v := range []string{"1.0.0", "1.1.0", "1.*"} {
		if _, _, err := f.Fetch(ctx, render.ChartRef{Repository: repo.URL, Chart: "web", Version: v}); err != nil {
			t.Fatal(err)
		}
	}
	if n := repo.Requests.Load(); n != 3 { // the index, two archives
		t.Fatalf("%d requests, want 3 (one index, two archives)", n)
	}
	repo.Close()
	v, a, err := newFetcher(t, helmrepo.Options{CacheDir: cache}).Fetch(ctx, render.ChartRef{Repository: repo.URL + "/", Chart: "web", Version: "1.1.0"})
	if err != nil || v != "1.1.0" || versionOf(t, a) != "1.1.0" {
		t.Fatalf("from the cache: %s, %v", v, err)
	}
}

// TestFetchFromOCIRegistry fetches from an OCI registry on loopback, in
// Argo CD's two forms (a registry path without scheme with a chart; an
// oci:// reference that is the chart) and a dependency's oci:// form.
func TestFetchFromOCIRegistry(t *testing.T) {
	reg := helmrepotest.NewRegistry(t)
	for _, v := range []string{"1.0.0", "1.2.0", "1.2.7", "2.0.0"} {
		reg.Push(t, "charts", web(t, v))
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ref  render.ChartRef
		want string
	}{
		{"helm OCI source, exact", render.ChartRef{Repository: reg.Host + "/charts", Chart: "web", Version: "1.2.0"}, "1.2.0"},
		{"helm OCI source, range", render.ChartRef{Repository: reg.Host + "/charts", Chart: "web", Version: "1.2.*"}, "1.2.7"},
		{"oci:// source", render.ChartRef{Repository: "oci://" + reg.Host + "/charts/web", Version: ">=1 <2"}, "1.2.7"},
		{"oci:// dependency", render.ChartRef{Repository: "oci://" + reg.Host + "/charts", Chart: "web", Version: "*"}, "2.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, a, err := newFetcher(t, helmrepo.Options{}).Fetch(ctx, tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			if v != tc.want || versionOf(t, a) != tc.want {
				t.Fatalf("got %s, want %s", v, tc.want)
			}
		})
	}
	t.Run("a layer over the cap", func(t *testing.T) {
		_, _, err := newFetcher(t, helmrepo.Options{MaxArchiveBytes: 100}).Fetch(ctx, render.ChartRef{Repository: reg.Host + "/charts", Chart: "web", Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), "--chart-max-bytes") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a chart the registry lacks", func(t *testing.T) {
		_, _, err := newFetcher(t, helmrepo.Options{}).Fetch(ctx, render.ChartRef{Repository: reg.Host + "/charts", Chart: "db", Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), "db") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestResolve resolves versions as Argo CD's repo-server does.
func TestResolve(t *testing.T) {
	tags := []string{"0.5.0", "0.5.3", "0.7.2", "0.7.1", "2024.03-LTS-RC19", "1.0.0-rc.1"}
	for _, tc := range []struct{ rev, want string }{
		{"0.5.3", "0.5.3"},
		{"> 0.5.3", "0.7.2"},
		{">0.5.0,<0.7.0", "0.5.3"},
		{"0.7.*", "0.7.2"},
		{"*", "0.7.2"},
		{"99.99", "99.99"}, // an exact version is taken as written
		{"2024.03-LTS-RC19", "2024.03-LTS-RC19"},
	} {
		got, err := helmrepo.Resolve(tc.rev, tags)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.rev, got, err, tc.want)
		}
	}
	for _, rev := range []string{"", "latest", "0.9.*"} {
		if got, err := helmrepo.Resolve(rev, tags); err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", rev, got)
		}
	}
}

// FuzzParseIndex reads any bytes as an index without panicking, and every
// version Get finds is one the index lists.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nentries:\n  web:\n  - {name: web, version: 1.2.0, urls: [web-1.2.0.tgz], digest: abc}\n  - {name: web, version: 1.10.0}\n  - null\n"), "1.*")
	f.Add([]byte(`{"apiVersion":"v1","entries":{"a":[{"version":"x"}]}}`), "x")
	f.Add([]byte("apiVersion: v1\nentries: {web: [{version: '>=1'}]}\n"), ">=1")
	f.Fuzz(func(t *testing.T, data []byte, version string) {
		idx, err := helmrepo.ParseIndex(data)
		if err != nil {
			return
		}
		for name, vs := range idx.Entries {
			e, err := idx.Get(name, version)
			if err != nil {
				continue
			}
			found := false
			for _, v := range vs {
				found = found || v.Version == e.Version
			}
			if !found {
				t.Fatalf("Get(%q, %q) = %q, not a version of the index", name, version, e.Version)
			}
		}
		var all []string
		for _, vs := range idx.Entries {
			for _, v := range vs {
				all = append(all, v.Version)
			}
		}
		if got, err := helmrepo.Resolve(version, all); err == nil && got != version {
			found := false
			for _, v := range all {
				found = found || v == got
			}
			if !found {
				t.Fatalf("Resolve(%q) = %q: neither the revision nor a version listed", version, got)
			}
		}
	})
}

// TestFetchWithCredentials reads a repository's credentials from Helm's
// repositories.yaml (RepositoryConfig) only when named: without it the
// repository's 401 is the error.
func TestFetchWithCredentials(t *testing.T) {
	repo := helmrepotest.NewRepo(t, web(t, "1.0.0"))
	repo.RequireAuth("ci", "s3cret")
	ref := render.ChartRef{Repository: repo.URL, Chart: "web", Version: "1.0.0"}
	_, _, err := newFetcher(t, helmrepo.Options{}).Fetch(context.Background(), ref)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("without credentials: err = %v, want the repository's 401", err)
	}
	cfg := filepath.Join(t.TempDir(), "repositories.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: \"\"\nrepositories:\n- name: ci\n  url: "+repo.URL+"/\n  username: ci\n  password: s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v, _, err := newFetcher(t, helmrepo.Options{RepositoryConfig: cfg}).Fetch(context.Background(), ref)
	if err != nil || v != "1.0.0" {
		t.Fatalf("with repositories.yaml: %s, %v", v, err)
	}
	// An archive the index places on another host gets no credentials.
	mirror := helmrepotest.NewRepo(t, web(t, "1.0.0"))
	repo.ArchivesAt(mirror.URL)
	if _, _, err := newFetcher(t, helmrepo.Options{RepositoryConfig: cfg}).Fetch(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	if mirror.Requests.Load() != 1 || mirror.Authorized.Load() != 0 {
		t.Fatalf("the other host got %d requests, %d with credentials; want 1 without", mirror.Requests.Load(), mirror.Authorized.Load())
	}
	if _, err := helmrepo.New(helmrepo.Options{RepositoryConfig: filepath.Join(t.TempDir(), "missing.yaml")}); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("a missing repositories.yaml: err = %v", err)
	}
}
