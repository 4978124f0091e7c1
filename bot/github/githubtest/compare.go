package githubtest

import (
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// handleCompare answers GitHub's compare of two commits (or branches):
// whether head is base, ahead of it (holds it), behind it, or diverged.
func (s *Server) handleCompare(route string, p map[string]string, rp *repo) (int, any, bool) {
	if route != "/repos/{owner}/{repo}/compare/{basehead}" {
		return 0, nil, false
	}
	base, head, ok := strings.Cut(p["basehead"], "...")
	if !ok {
		return http.StatusNotFound, "Not Found", true
	}
	b, h := rp.commit(base), rp.commit(head)
	if b.IsZero() || h.IsZero() {
		return http.StatusNotFound, "No common ancestor between " + base + " and " + head + ".", true
	}
	ahead, hasBase := rp.distance(h, b)
	behind, hasHead := rp.distance(b, h)
	status := "diverged"
	switch {
	case b == h:
		status = "identical"
	case hasBase:
		status = "ahead"
	case hasHead:
		status = "behind"
	}
	return http.StatusOK, map[string]any{"status": status, "ahead_by": ahead, "behind_by": behind,
		"base_commit": map[string]any{"sha": b.String()}, "commits": []any{}}, true
}

// commit resolves a branch name or a full commit SHA; zero if neither.
func (rp *repo) commit(rev string) plumbing.Hash {
	if ref, err := rp.git.Reference(plumbing.NewBranchReferenceName(rev), true); err == nil {
		return ref.Hash()
	}
	if c, err := rp.git.CommitObject(plumbing.NewHash(rev)); err == nil {
		return c.Hash
	}
	return plumbing.ZeroHash
}

// distance counts the commits reachable from from but not from to, and
// reports whether to is reachable from from (from holds it).
func (rp *repo) distance(from, to plumbing.Hash) (int, bool) {
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{from}
	found := false
	for len(queue) > 0 && len(seen) < 10000 {
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		if h == to {
			found = true
			continue
		}
		c, err := rp.git.CommitObject(h)
		if err != nil {
			continue
		}
		queue = append(queue, c.ParentHashes...)
	}
	n := 0
	for h := range seen {
		if h != to {
			n++
		}
	}
	return n, found
}
