// Package helmrepotest serves real Helm chart repositories and OCI
// registries on 127.0.0.1 for tests: charts packaged by Helm's own
// packager, an index.yaml with their digests, and go-containerregistry's
// in-memory registry with charts pushed by Helm's registry client.
package helmrepotest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
)

// Package is a chart archive made by Helm's packager (chartutil.Save, what
// `helm package` runs) from the files of a chart directory (Chart.yaml is
// written from name and version unless files has one).
func Package(t testing.TB, name, version string, files map[string]string) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	all := map[string]string{"Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", name, version)}
	for f, c := range files {
		all[f] = c
	}
	for f, c := range all {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatalf("load chart %s: %v", name, err)
	}
	out, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatalf("package chart %s: %v", name, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Repo is a chart repository on 127.0.0.1: GET /index.yaml and
// /charts/NAME-VERSION.tgz.
type Repo struct {
	// URL is the repository's URL (no trailing slash).
	URL string
	// Requests counts every request the server was sent; Authorized those
	// that carried an Authorization header.
	Requests, Authorized atomic.Int64

	srv *httptest.Server
	mu  sync.Mutex
	// user and password, when set (RequireAuth), are required of every
	// request.
	user, password string
	// archivesAt, when set (ArchivesAt), is the base URL the index gives
	// for archives: absolute URLs instead of relative ones.
	archivesAt string
	// archives by file name; digests by "name version" as the index
	// gives them (changed by SetDigest).
	archives map[string][]byte
	entries  []entry
}

type entry struct {
	name, version, file, digest string
}

// NewRepo serves the chart archives (each read for its name and version)
// as a chart repository, closed when the test ends.
func NewRepo(t testing.TB, archives ...[]byte) *Repo {
	t.Helper()
	r := &Repo{archives: map[string][]byte{}}
	for _, a := range archives {
		r.Add(t, a)
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	r.URL = r.srv.URL
	return r
}

// Add adds an archive to the repository and its index.
func (r *Repo) Add(t testing.TB, archive []byte) {
	t.Helper()
	c, err := loader.LoadArchive(strings.NewReader(string(archive)))
	if err != nil {
		t.Fatalf("read archive: %v", err)
	}
	sum := sha256.Sum256(archive)
	file := c.Name() + "-" + c.Metadata.Version + ".tgz"
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archives[file] = archive
	r.entries = append(r.entries, entry{c.Name(), c.Metadata.Version, file, hex.EncodeToString(sum[:])})
}

// SetDigest makes the index give another digest for a chart version.
func (r *Repo) SetDigest(name, version, digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.entries {
		if r.entries[i].name == name && r.entries[i].version == version {
			r.entries[i].digest = digest
		}
	}
}

// RequireAuth makes the repository answer 401 to a request without
// this basic authentication.
func (r *Repo) RequireAuth(user, password string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.user, r.password = user, password
}

// ArchivesAt makes the index give the archives' URLs on another server
// (base URL), absolute.
func (r *Repo) ArchivesAt(base string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archivesAt = base
}

// Close stops the server: a dead repository.
func (r *Repo) Close() { r.srv.Close() }

func (r *Repo) serve(w http.ResponseWriter, req *http.Request) {
	r.Requests.Add(1)
	if req.Header.Get("Authorization") != "" {
		r.Authorized.Add(1)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if u, p, ok := req.BasicAuth(); r.user != "" && (!ok || u != r.user || p != r.password) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if req.URL.Path == "/index.yaml" {
		_, _ = io.WriteString(w, r.index())
		return
	}
	if a, ok := r.archives[strings.TrimPrefix(req.URL.Path, "/charts/")]; ok {
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(a)
		return
	}
	http.NotFound(w, req)
}

// index is the repository's index.yaml, as `helm repo index` writes one:
// relative URLs, the archives' SHA-256.
func (r *Repo) index() string {
	byName := map[string][]entry{}
	for _, e := range r.entries {
		byName[e.name] = append(byName[e.name], e)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %s:\n", n)
		for _, e := range byName[n] {
			u := "charts/" + e.file
			if r.archivesAt != "" {
				u = r.archivesAt + "/" + u
			}
			fmt.Fprintf(&b, "  - apiVersion: v2\n    name: %s\n    version: %s\n    urls:\n    - %s\n    digest: %s\n", e.name, e.version, u, e.digest)
		}
	}
	b.WriteString("generated: \"2026-01-01T00:00:00Z\"\n")
	return b.String()
}

// Registry is an OCI registry on 127.0.0.1 (go-containerregistry's
// in-memory registry, plain HTTP).
type Registry struct {
	// Host is host:port, as a repoURL names the registry.
	Host string
	// Requests counts every request the registry was sent.
	Requests atomic.Int64
	srv      *httptest.Server
}

// NewRegistry serves an empty registry, closed when the test ends.
func NewRegistry(t testing.TB) *Registry {
	t.Helper()
	reg := &Registry{}
	h := ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))
	reg.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		reg.Requests.Add(1)
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(reg.srv.Close)
	reg.Host = strings.TrimPrefix(reg.srv.URL, "http://")
	return reg
}

// Push pushes a chart archive as `helm push ARCHIVE oci://HOST/PATH` does,
// with Helm's registry client: to repository PATH/NAME at its version's tag.
func (reg *Registry) Push(t testing.TB, path string, archive []byte) {
	t.Helper()
	c, err := loader.LoadArchive(strings.NewReader(string(archive)))
	if err != nil {
		t.Fatalf("read archive: %v", err)
	}
	client, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")))
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/" + strings.Trim(path, "/") + "/" + c.Name() + ":" + strings.ReplaceAll(c.Metadata.Version, "+", "_")
	if _, err := client.Push(archive, ref); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}
