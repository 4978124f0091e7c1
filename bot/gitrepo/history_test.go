package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/internal/gittest"
)

// commitAt writes one file and commits it with the given author and
// committer time.
func (g *gitRepo) commitAt(name, content string, when time.Time) string {
	g.t.Helper()
	if err := os.WriteFile(filepath.Join(g.work, name), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.git("add", "-A")
	date := when.Format(time.RFC3339)
	gittest.Run(g.t, g.work, []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, "commit", "-q", "-m", "change")
	return g.git("rev-parse", "HEAD")
}

// TestHistoryWrote finds the commit that wrote a line in a full history, and
// refuses to name one where the history cannot tell: another version of the
// file, a file not at HEAD, a depth-1 or any other shallow clone.
func TestHistoryWrote(t *testing.T) {
	g := newGitRepo(t)
	v1 := "spec:\n  ignoreDifferences:\n  - kind: Service\n"
	v2 := v1 + "  - kind: Secret\n"
	v3 := v2 + "  - kind: ConfigMap\n"
	d1 := time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC)
	d2 := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	d3 := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	c1 := g.commitAt("app.yaml", v1, d1)
	c2 := g.commitAt("app.yaml", v2, d2)
	c3 := g.commitAt("app.yaml", v3, d3)

	h, err := OpenHistory(g.work)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		line   int
		commit string
		when   time.Time
	}{{1, c1, d1}, {3, c1, d1}, {4, c2, d2}, {5, c3, d3}} {
		c, when, err := h.Wrote("app.yaml", tt.line, v3)
		if err != nil || c != tt.commit || !when.Equal(tt.when) {
			t.Errorf("line %d: %s %s %v, want %s %s", tt.line, c, when, err, tt.commit, tt.when)
		}
	}
	if _, _, err := h.Wrote("app.yaml", 4, v2); !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "not the version the snapshot holds") {
		t.Errorf("another version of the file: %v", err)
	}
	if _, _, err := h.Wrote("other.yaml", 1, ""); !errors.Is(err, ErrNoHistory) {
		t.Errorf("a file not in HEAD: %v", err)
	}

	clone := func(depth string) *History {
		dir := filepath.Join(t.TempDir(), "clone")
		if out, err := exec.Command("git", "clone", "-q", "--depth", depth, g.url, dir).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v\n%s", err, out)
		}
		h, err := OpenHistory(dir)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	one := clone("1")
	for line := 1; line <= 5; line++ {
		if c, _, err := one.Wrote("app.yaml", line, v3); !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "depth-1") {
			t.Errorf("depth-1 clone, line %d: %q %v", line, c, err)
		}
	}
	// go-git cannot blame across a shallow clone's cut: a depth-2 clone
	// names no commit either, rather than the boundary's.
	two := clone("2")
	for _, line := range []int{3, 5} {
		if c, _, err := two.Wrote("app.yaml", line, v3); !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "shallow") {
			t.Errorf("depth-2 clone, line %d: %q %v", line, c, err)
		}
	}
}
