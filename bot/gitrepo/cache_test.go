package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/driftfix/driftfix/bot/internal/gittest"
)

// gitRepo is a real repository on disk, worked on with the git command and
// read over file://.
type gitRepo struct {
	t    *testing.T
	work string
	url  string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	g := &gitRepo{t: t, work: filepath.Join(dir, "work"), url: "file://" + filepath.Join(dir, "work")}
	if err := os.MkdirAll(g.work, 0o755); err != nil {
		t.Fatal(err)
	}
	g.git("init", "-q", "-b", "main")
	return g
}

func (g *gitRepo) git(args ...string) string {
	g.t.Helper()
	return gittest.Run(g.t, g.work, nil, args...)
}

// commit writes the files (an empty content removes one) and commits them.
func (g *gitRepo) commit(files map[string]string) string {
	g.t.Helper()
	for name, content := range files {
		p := filepath.Join(g.work, name)
		if content == "" {
			os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	g.git("add", "-A")
	g.git("commit", "-q", "-m", "change")
	return g.git("rev-parse", "HEAD")
}

func TestCacheFetchesEachCommitOnce(t *testing.T) {
	g := newGitRepo(t)
	g.commit(map[string]string{"app/deploy.yaml": "replicas: 1\n"})
	c := NewCache(8, 1<<20)
	ctx := context.Background()

	// Eight workers ask for the same repository and revision at once.
	var wg sync.WaitGroup
	got := make([]map[string]string, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			got[i], errs[i] = c.Files(ctx, g.url, "main", Limits{})
		}(i)
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i]["app/deploy.yaml"] != "replicas: 1\n" {
			t.Fatalf("worker %d: %v %v", i, got[i], errs[i])
		}
	}
	if n := c.Fetches(); n != 1 {
		t.Errorf("8 concurrent reads of one commit fetched %d times, want 1", n)
	}
	got[0]["app/deploy.yaml"] = "changed by a caller"

	// A later read (the next cycle) is served from the cache, unchanged.
	again, err := c.Files(ctx, g.url, "main", Limits{})
	if err != nil || again["app/deploy.yaml"] != "replicas: 1\n" {
		t.Fatalf("second read: %v %v", again, err)
	}
	head := g.git("rev-parse", "HEAD")
	if _, err := c.Files(ctx, g.url, head, Limits{}); err != nil {
		t.Fatal(err)
	}
	if n := c.Fetches(); n != 1 {
		t.Errorf("reading main and its commit again fetched, %d fetches in all", n)
	}

	// When the branch moves, its new commit is fetched.
	g.commit(map[string]string{"app/deploy.yaml": "replicas: 2\n"})
	moved, err := c.Files(ctx, g.url, "main", Limits{})
	if err != nil || moved["app/deploy.yaml"] != "replicas: 2\n" {
		t.Fatalf("after the branch moved: %v %v", moved, err)
	}
	if n := c.Fetches(); n != 2 {
		t.Errorf("%d fetches, want 2: one per commit", n)
	}
}

func TestFetchIsShallowAndBounded(t *testing.T) {
	g := newGitRepo(t)
	// An old commit holds a large file; the current one does not.
	g.commit(map[string]string{"app/deploy.yaml": "replicas: 1\n", "blob.bin": strings.Repeat("0123456789abcdef", 1<<16)})
	g.commit(map[string]string{"blob.bin": ""})
	ctx := context.Background()
	lim := Limits{MaxFetchBytes: 512 << 10}
	files, err := NewCache(8, 1<<20).Files(ctx, g.url, "main", lim)
	if err != nil || files["app/deploy.yaml"] != "replicas: 1\n" {
		t.Fatalf("a shallow fetch does not read history, so the 1 MiB file in it does not count: %v %v", files, err)
	}

	big := newGitRepo(t)
	big.commit(map[string]string{"a.yaml": "a: 1\n", "blob.bin": strings.Repeat("0123456789abcdef", 1<<16)})
	c := NewCache(8, 1<<20)
	for _, tc := range []struct {
		lim   Limits
		limit string
	}{{lim, "MaxFetchBytes"}, {Limits{MaxObjects: 2}, "MaxObjects"}, {Limits{MaxFiles: 1}, "MaxFiles"}} {
		_, err := c.Files(ctx, big.url, "main", tc.lim)
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != tc.limit || !strings.Contains(err.Error(), big.url) || !strings.Contains(err.Error(), tc.limit) {
			t.Errorf("%s: err = %v, want the limit and the repository named", tc.limit, err)
		}
	}
	n := c.Fetches()
	if _, err := c.Files(ctx, big.url, "main", lim); err == nil {
		t.Fatal("over the limit twice")
	}
	if c.Fetches() != n {
		t.Error("a repository over a limit at a commit is not fetched again")
	}
}

func TestCacheIsBounded(t *testing.T) {
	g := newGitRepo(t)
	var commits []string
	for i := 0; i < 4; i++ {
		commits = append(commits, g.commit(map[string]string{"a.yaml": strings.Repeat("x", 100) + string(rune('a'+i)) + "\n"}))
	}
	c := NewCache(2, 1<<20)
	ctx := context.Background()
	for _, h := range commits {
		if _, err := c.Files(ctx, g.url, h, Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	n := c.lru.Len()
	c.mu.Unlock()
	if n != 2 {
		t.Errorf("cache holds %d commits, want its bound of 2", n)
	}
	before := c.Fetches()
	if _, err := c.Files(ctx, g.url, commits[3], Limits{}); err != nil || c.Fetches() != before {
		t.Errorf("the most recent commit must still be cached (%v)", err)
	}
	if _, err := c.Files(ctx, g.url, commits[0], Limits{}); err != nil || c.Fetches() == before {
		t.Errorf("the least recently used commit must have been evicted (%v)", err)
	}
	small := NewCache(8, 50)
	if _, err := small.Files(ctx, g.url, "main", Limits{}); err != nil {
		t.Fatal(err)
	}
	if small.lru.Len() != 0 {
		t.Error("a commit larger than the cache's byte bound is not kept")
	}
}
