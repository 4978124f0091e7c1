package gitrepo

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Shared is the cache Files reads through: one per process, so a running bot
// fetches a repository's commit once across applications and cycles. It
// holds at most 64 commits and 64 MiB of file content.
var Shared = NewCache(64, 64<<20)

// Cache holds the files of recently read commits, keyed by repository,
// commit and limits. A branch or tag is resolved to its commit on the remote
// first (a ref listing, no objects), so a moved branch is read again and an
// unchanged one is not. Concurrent reads of the same commit share one fetch.
// It is bounded by entries and by the bytes of the files it holds, least
// recently used first out. Safe for concurrent use.
type Cache struct {
	maxEntries int
	maxBytes   int64

	mu      sync.Mutex
	entries map[cacheKey]*list.Element // of *cacheEntry
	lru     *list.List
	bytes   int64

	fetches atomic.Int64
}

type cacheKey struct {
	repo   string
	commit plumbing.Hash
	lim    Limits
}

type cacheEntry struct {
	key  cacheKey
	done chan struct{} // closed when tree/err are set
	tree Tree
	err  error
	size int64
}

// NewCache returns a cache of at most maxEntries commits and maxBytes of
// file content.
func NewCache(maxEntries int, maxBytes int64) *Cache {
	return &Cache{maxEntries: maxEntries, maxBytes: maxBytes, entries: map[cacheKey]*list.Element{}, lru: list.New()}
}

// Fetches is how many fetches from a remote the cache has made.
func (c *Cache) Fetches() int64 { return c.fetches.Load() }

// Files returns the files of the repository at revision (a commit, branch
// or tag, or HEAD) within lim, keyed by their path in the repository. The
// map is the caller's to change.
func (c *Cache) Files(ctx context.Context, repoURL, revision string, lim Limits) (map[string]string, error) {
	t, err := c.head(ctx, repoURL, revision, lim, nil)
	return t.Files, err
}

// Head is Files with the commit revision resolved to (a full hash), so
// that what was read can be named: a pull request's head commit. Every
// repository is read anonymously; a Reader reads with credentials.
func (c *Cache) Head(ctx context.Context, repoURL, revision string, lim Limits) (map[string]string, string, error) {
	t, err := c.head(ctx, repoURL, revision, lim, nil)
	return t.Files, t.Commit, err
}

// Tree is Head with the files a budget left out (Tree.Skipped).
func (c *Cache) Tree(ctx context.Context, repoURL, revision string, lim Limits) (Tree, error) {
	return c.head(ctx, repoURL, revision, lim, nil)
}

// head reads through the cache with the credentials access gives (nil:
// none). They are asked for only when the remote is read; the cache is
// keyed by the URL and commit, never by what was sent.
func (c *Cache) head(ctx context.Context, repoURL, revision string, lim Limits, access AccessFunc) (Tree, error) {
	lim = lim.withDefaults()
	name := redact(repoURL)
	if err := readable(repoURL); err != nil {
		return Tree{}, fmt.Errorf("read repository %s: %w", name, err)
	}
	var a Access
	named := func(err error) error { return fmt.Errorf("read repository %s at %s: %w", name, revision, err) }
	wrap := func(err error) error { return named(explain(err, a)) }
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lim.Timeout)
	defer cancel()
	resolved := false
	resolve := func() error {
		if resolved || strings.HasPrefix(repoURL, "file://") {
			return nil
		}
		resolved = true
		var err error
		a, err = accessFor(fctx, repoURL, access)
		return err
	}
	commit, ref := plumbing.ZeroHash, plumbing.ReferenceName("")
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{repoURL}})
	if plumbing.IsHash(revision) {
		commit = plumbing.NewHash(revision)
	}
	key := cacheKey{repo: repoURL, commit: commit, lim: lim}
	if commit.IsZero() || !c.cached(key) {
		if err := resolve(); err != nil {
			return Tree{}, wrap(err)
		}
		var err error
		if commit, ref, err = remoteCommit(fctx, rem, revision, a); err != nil {
			return Tree{}, wrap(err)
		}
		key.commit = commit
	}

	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return Tree{}, named(ctx.Err())
		}
		if e.err != nil {
			return Tree{}, named(e.err)
		}
		return e.tree.copy(), nil
	}
	e := &cacheEntry{key: key, done: make(chan struct{})}
	c.entries[key] = c.lru.PushFront(e)
	c.mu.Unlock()

	// This caller fetches; others wait on e.done. The fetch runs under its
	// own timeout, not the caller's cancellation, as others may be waiting.
	err := resolve()
	var tree Tree
	if err == nil {
		tree, err = checkout(fctx, repoURL, commit, ref, lim, a, &c.fetches)
	}
	err = explain(err, a) // as every caller waiting on this fetch sees it
	c.mu.Lock()
	e.tree, e.err = tree, err
	var le *LimitError
	switch {
	case err != nil && !errors.As(err, &le):
		// A failure that may pass (network, timeout) is not remembered;
		// a repository over a limit is, as it stays over it at this commit.
		c.remove(key)
	default:
		for _, v := range tree.Files {
			e.size += int64(len(v))
		}
		c.bytes += e.size
		c.evict()
	}
	c.mu.Unlock()
	close(e.done)
	if err != nil {
		return Tree{}, named(err)
	}
	return tree.copy(), nil
}

func (c *Cache) cached(k cacheKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[k]
	return ok
}

// remove drops an entry; c.mu is held.
func (c *Cache) remove(k cacheKey) {
	if el, ok := c.entries[k]; ok {
		c.bytes -= el.Value.(*cacheEntry).size
		c.lru.Remove(el)
		delete(c.entries, k)
	}
}

// evict drops least recently used finished entries past the bounds; c.mu is held.
func (c *Cache) evict() {
	for el := c.lru.Back(); el != nil && (c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes); {
		prev := el.Prev()
		e := el.Value.(*cacheEntry)
		select {
		case <-e.done:
			c.remove(e.key)
		default:
			if e.tree.Files != nil || e.err != nil {
				c.remove(e.key) // finished, being closed by its fetcher
			}
		}
		el = prev
	}
}

// copy is the tree with maps of its own, the caller's to change.
func (t Tree) copy() Tree {
	out := Tree{Files: make(map[string]string, len(t.Files)), Commit: t.Commit}
	for k, v := range t.Files {
		out.Files[k] = v
	}
	if t.Skipped != nil {
		out.Skipped = make(map[string]Skip, len(t.Skipped))
		for k, v := range t.Skipped {
			out.Skipped[k] = v
		}
	}
	return out
}
