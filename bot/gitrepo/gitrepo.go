// Package gitrepo reads an application's source repository at the compared
// revision, in memory: every file a render may read (manifests, generator
// inputs, chart archives, Jsonnet libraries) within per-file and total
// budgets, naming those a budget leaves out (Tree.Skipped), so that a
// render or a snapshot can carry the files a fix edits.
// It reads file:// repositories, HTTPS ones and (with an SSH key) SSH ones
// with go-git, each with the credentials a Reader's AccessFunc gives: one
// commit, no history (a shallow fetch of depth 1), with a bound on what is
// fetched and read, and each repository and commit is fetched once and then served from
// a bounded in-memory cache shared by every caller (see Cache).
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Limits bound what is fetched and read from a repository for one commit.
// A zero field takes its default.
type Limits struct {
	// MaxFileBytes is the largest file read (default DefaultMaxFileBytes);
	// a larger one is not read and is named in Tree.Skipped.
	MaxFileBytes int64
	// MaxTotalBytes bounds the bytes of file content read (default
	// DefaultMaxTotalBytes).
	// Manifests (.yaml, .yml, .json, .tpl, Kustomization) are read first,
	// and past it reading stops with a LimitError; every other file (a
	// generator's input, a chart archive, a Jsonnet library) is then read,
	// smallest first, while it fits, and one that does not is named in
	// Tree.Skipped.
	MaxTotalBytes int64
	MaxFetchBytes int64         // bytes of objects fetched for the commit (default 128 MiB)
	MaxObjects    int           // objects fetched for the commit (default 200,000)
	MaxFiles      int           // files in the commit's tree (default 50,000)
	Timeout       time.Duration // one fetch, however many callers wait for it (default 2 minutes)
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes == 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxTotalBytes == 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxFetchBytes == 0 {
		l.MaxFetchBytes = 128 << 20
	}
	if l.MaxObjects == 0 {
		l.MaxObjects = 200_000
	}
	if l.MaxFiles == 0 {
		l.MaxFiles = 50_000
	}
	if l.Timeout == 0 {
		l.Timeout = 2 * time.Minute
	}
	return l
}

// LimitError is a repository read stopped by one of its Limits. Files wraps
// it in an error that names the repository and revision.
type LimitError struct {
	Repo  string // the repository URL, credentials removed
	Limit string // the Limits field, e.g. "MaxFetchBytes"
	Max   int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the commit is over the limit %s (%d); the repository is not read", e.Limit, e.Max)
}

// DefaultMaxFileBytes is Limits.MaxFileBytes' default: far above any
// manifest, values file or vendored chart archive of a real repository.
const DefaultMaxFileBytes = 4 << 20

// DefaultMaxTotalBytes is Limits.MaxTotalBytes' default.
const DefaultMaxTotalBytes = 64 << 20

// Tree is a repository's files at one commit, or of a work tree.
type Tree struct {
	// Files are the files read (path in the repository -> content, which
	// may be binary).
	Files map[string]string
	// Skipped are the files not read because a budget left them out, by
	// path: a render that needs one fails naming it and its budget.
	Skipped map[string]Skip
	// Commit is the commit read (a full hash); "" for a work tree.
	Commit string
}

// Skip is a file left out of a Tree by a budget.
type Skip struct {
	Size  int64  // the file's size
	Limit string // the Limits field that left it out: "MaxFileBytes" or "MaxTotalBytes"
	Max   int64  // that budget
}

// manifest reports whether a file is one a diagnosis or a fix reads, and so
// is read before any other file: a manifest, chart template or kustomization.
func manifest(name string) bool {
	base := path.Base(name)
	switch {
	case strings.HasSuffix(name, ".yaml"), strings.HasSuffix(name, ".yml"), strings.HasSuffix(name, ".tpl"),
		strings.HasSuffix(name, ".json"), base == "Kustomization":
		return true
	}
	return false
}

// Manifests are the manifests, chart templates and kustomizations among
// files (the files read first, see Limits.MaxTotalBytes): what a snapshot
// written to disk needs to carry for a diagnosis or a fix, without the
// generator inputs, archives and images a render reads.
func Manifests(files map[string]string) map[string]string {
	out := map[string]string{}
	for f, c := range files {
		if manifest(f) {
			out[f] = c
		}
	}
	return out
}

// ReadTree returns the files of the repository at revision (a commit, branch
// or tag) within lim, with those a budget left out, through the
// process-wide Shared cache.
func ReadTree(ctx context.Context, repoURL, revision string, lim Limits) (Tree, error) {
	return Shared.Tree(ctx, repoURL, revision, lim)
}

// Files returns the files of the repository at revision (a commit, branch
// or tag) within lim, keyed by their path in the repository, through the
// process-wide Shared cache. See ReadTree for the files it leaves out.
func Files(ctx context.Context, repoURL, revision string, lim Limits) (map[string]string, error) {
	return Shared.Files(ctx, repoURL, revision, lim)
}

// Head is Files with the commit the revision resolved to, through the Shared cache.
func Head(ctx context.Context, repoURL, revision string, lim Limits) (map[string]string, string, error) {
	return Shared.Head(ctx, repoURL, revision, lim)
}

// redact removes credentials from a repository URL for messages.
func redact(repoURL string) string {
	u, err := url.Parse(repoURL)
	if err != nil || u.User == nil {
		return repoURL
	}
	u.User = nil
	return u.String()
}

// remoteCommit resolves revision on the remote without fetching anything
// (one ref listing): a full commit hash is taken as it is; HEAD, branches and
// tags (peeled to their commit) are looked up. It also returns the name of a
// ref whose tip is that commit, when there is one, so the commit can be
// fetched by name.
func remoteCommit(ctx context.Context, rem *git.Remote, revision string, a Access) (plumbing.Hash, plumbing.ReferenceName, error) {
	refs, err := rem.ListContext(ctx, &git.ListOptions{PeelingOption: git.AppendPeeled, Auth: a.Auth, CABundle: a.CABundle})
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	byName := map[plumbing.ReferenceName]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name()] = r
	}
	hashOf := func(n plumbing.ReferenceName) (plumbing.Hash, bool) {
		for i := 0; i < 5; i++ {
			r, ok := byName[n]
			if !ok {
				return plumbing.ZeroHash, false
			}
			if r.Type() == plumbing.SymbolicReference {
				n = r.Target()
				continue
			}
			if p, ok := byName[n+"^{}"]; ok {
				return p.Hash(), true
			}
			return r.Hash(), true
		}
		return plumbing.ZeroHash, false
	}
	var want plumbing.Hash
	switch {
	case plumbing.IsHash(revision):
		want = plumbing.NewHash(revision)
	case revision == "" || revision == "HEAD":
		h, ok := hashOf(plumbing.HEAD)
		if !ok {
			return plumbing.ZeroHash, "", errors.New("the repository has no HEAD")
		}
		want = h
	default:
		found := false
		for _, n := range []plumbing.ReferenceName{plumbing.ReferenceName(revision), plumbing.NewBranchReferenceName(revision), plumbing.NewTagReferenceName(revision)} {
			if h, ok := hashOf(n); ok {
				want, found = h, true
				break
			}
		}
		if !found {
			return plumbing.ZeroHash, "", fmt.Errorf("revision %q not found", revision)
		}
	}
	var name plumbing.ReferenceName
	for _, r := range refs {
		n := r.Name()
		if n == plumbing.HEAD || r.Type() == plumbing.SymbolicReference {
			continue
		}
		if h, ok := hashOf(n); ok && h == want && (n.IsBranch() || n.IsTag()) {
			if name == "" || n < name {
				name = plumbing.ReferenceName(strings.TrimSuffix(n.String(), "^{}"))
			}
		}
	}
	return want, name, nil
}

// checkout fetches one commit of the repository and reads its files
// within lim (see readTree).
func checkout(ctx context.Context, repoURL string, commit plumbing.Hash, ref plumbing.ReferenceName, lim Limits, a Access, fetches *atomic.Int64) (Tree, error) {
	st := &boundedStorage{Storage: memory.NewStorage(), repo: redact(repoURL), lim: lim}
	repo, err := git.Init(st, nil)
	if err != nil {
		return Tree{}, err
	}
	rem, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{repoURL}})
	if err != nil {
		return Tree{}, err
	}
	fetch := func(spec config.RefSpec, depth int) error {
		fetches.Add(1)
		err := rem.FetchContext(ctx, &git.FetchOptions{RefSpecs: []config.RefSpec{spec}, Depth: depth, Tags: git.NoTags, Auth: a.Auth, CABundle: a.CABundle})
		if errors.Is(err, git.NoErrAlreadyUpToDate) {
			return nil
		}
		return err
	}
	have := func() bool { _, err := repo.CommitObject(commit); return err == nil }
	// By the ref whose tip it is, else by its hash where the server allows,
	// each one commit deep; else (a commit behind every tip, on a server
	// that only serves tips) the history of every branch and tag, within
	// the same limits.
	if ref != "" {
		if err := fetch(config.RefSpec("+"+ref.String()+":"+ref.String()), 1); err != nil {
			return Tree{}, err
		}
	}
	if !have() {
		err := fetch(config.RefSpec(commit.String()+":refs/driftfix/want"), 1)
		if err != nil && !errors.Is(err, git.ErrExactSHA1NotSupported) {
			return Tree{}, err
		}
	}
	if !have() {
		for _, spec := range []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"} {
			if err := fetch(spec, 0); err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
				return Tree{}, err
			}
		}
	}
	if _, err := repo.CommitObject(commit); err != nil {
		return Tree{}, fmt.Errorf("revision %s not found", commit)
	}
	return CommitTree(repo, commit, lim, st.repo)
}

// CommitTree reads a commit of a repository already at hand (a clone's own
// objects, as predict reads a pull request's checkout) within lim, as a
// fetched commit is read: every file within the budgets, manifests first,
// symbolic links as the file they name. repo names the repository in
// errors.
func CommitTree(repo *git.Repository, commit plumbing.Hash, lim Limits, name string) (Tree, error) {
	lim = lim.withDefaults()
	c, err := repo.CommitObject(commit)
	if err != nil {
		return Tree{}, fmt.Errorf("read commit %s: %w", commit, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return Tree{}, err
	}
	byName, links := map[string]*object.File{}, map[string]*object.File{}
	files := 0
	err = tree.Files().ForEach(func(f *object.File) error {
		if files++; files > lim.MaxFiles {
			return &LimitError{Repo: name, Limit: "MaxFiles", Max: int64(lim.MaxFiles)}
		}
		switch {
		case f.Mode == filemode.Symlink:
			links[f.Name] = f
		case f.Mode.IsFile():
			byName[f.Name] = f
		}
		return nil
	})
	if err != nil {
		return Tree{}, err
	}
	entries := make([]entry, 0, len(byName)+len(links))
	for name, f := range byName {
		entries = append(entries, entry{name: name, size: f.Size, read: blobReader(f)})
	}
	// A symbolic link to a file of the commit is read as that file, as a
	// checkout reads it; one that leaves the repository, or names no file
	// of it, is not a file of it.
	for _, l := range links {
		if f := linkTarget(l, byName, links); f != nil {
			entries = append(entries, entry{name: l.Name, size: f.Size, read: blobReader(f)})
		}
	}
	out, skipped, err := readTree(entries, lim, name)
	if err != nil {
		return Tree{}, err
	}
	return Tree{Files: out, Skipped: skipped, Commit: commit.String()}, nil
}

func blobReader(f *object.File) func() (string, error) {
	return func() (string, error) {
		r, err := f.Reader()
		if err != nil {
			return "", err
		}
		defer r.Close()
		return readAll(r, f.Size, f.Size)
	}
}

// readAll reads r, of about size bytes, into a string without copying it
// again: at most max+1 bytes.
func readAll(r io.Reader, size, max int64) (string, error) {
	var b strings.Builder
	b.Grow(int(min(size, max) + 1))
	_, err := io.Copy(&b, io.LimitReader(r, max+1))
	return b.String(), err
}

// linkTarget is the file a symbolic link of the commit leads to, through at
// most 8 links, or nil when it leaves the repository or names no file.
func linkTarget(l *object.File, byName, links map[string]*object.File) *object.File {
	for hop := 0; hop < 8 && l != nil; hop++ {
		b, err := blobReader(l)()
		if err != nil || len(b) > 4096 || path.IsAbs(string(b)) {
			return nil
		}
		name := path.Join(path.Dir(l.Name), string(b))
		if name == ".." || strings.HasPrefix(name, "../") {
			return nil
		}
		if f, ok := byName[name]; ok {
			return f
		}
		l = links[name]
	}
	return nil
}

// entry is one file of a tree before it is read.
type entry struct {
	name string
	size int64
	read func() (string, error)
}

// readTree reads the entries within lim's budgets. Manifests are read first
// (see manifest), and one that does not fit MaxTotalBytes stops the read
// with a LimitError, as the commit cannot be diagnosed without it; then
// every other file, smallest first (so that one large archive or image
// leaves out only itself), while it fits. A file over MaxFileBytes, or
// another file past MaxTotalBytes, is not read and is returned in skipped.
func readTree(entries []entry, lim Limits, repo string) (map[string]string, map[string]Skip, error) {
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if ma, mb := manifest(a.name), manifest(b.name); ma != mb {
			return ma
		}
		if !manifest(a.name) && a.size != b.size {
			return a.size < b.size
		}
		return a.name < b.name
	})
	out := make(map[string]string, len(entries))
	var skipped map[string]Skip
	skip := func(e entry, limit string, max int64) {
		if skipped == nil {
			skipped = map[string]Skip{}
		}
		skipped[e.name] = Skip{Size: e.size, Limit: limit, Max: max}
	}
	var total int64
	for _, e := range entries {
		switch {
		case e.size > lim.MaxFileBytes:
			skip(e, "MaxFileBytes", lim.MaxFileBytes)
			continue
		case total+e.size > lim.MaxTotalBytes && manifest(e.name):
			return nil, nil, &LimitError{Repo: repo, Limit: "MaxTotalBytes", Max: lim.MaxTotalBytes}
		case total+e.size > lim.MaxTotalBytes:
			skip(e, "MaxTotalBytes", lim.MaxTotalBytes)
			continue
		}
		b, err := e.read()
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", e.name, err)
		}
		if int64(len(b)) > lim.MaxFileBytes { // it grew since it was listed
			skip(entry{name: e.name, size: int64(len(b))}, "MaxFileBytes", lim.MaxFileBytes)
			continue
		}
		total += int64(len(b))
		out[e.name] = b
	}
	return out, skipped, nil
}

// boundedStorage is an in-memory object store that refuses objects past the
// fetch limits, so an oversized repository stops the fetch as it arrives.
type boundedStorage struct {
	*memory.Storage
	repo    string
	lim     Limits
	bytes   int64
	objects int
}

// SetEncodedObject stores one fetched object, counting it against the limits.
func (s *boundedStorage) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	if s.objects++; s.objects > s.lim.MaxObjects {
		return plumbing.ZeroHash, &LimitError{Repo: s.repo, Limit: "MaxObjects", Max: int64(s.lim.MaxObjects)}
	}
	if s.bytes += obj.Size(); s.bytes > s.lim.MaxFetchBytes {
		return plumbing.ZeroHash, &LimitError{Repo: s.repo, Limit: "MaxFetchBytes", Max: s.lim.MaxFetchBytes}
	}
	return s.Storage.SetEncodedObject(obj)
}
