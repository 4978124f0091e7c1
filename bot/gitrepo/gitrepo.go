// Package gitrepo reads an application's source repository at the compared
// revision, in memory, so that a snapshot can carry the files a fix edits.
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
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Limits bound what is fetched and read from a repository for one commit.
// A zero field takes its default.
type Limits struct {
	MaxFileBytes  int64         // files larger than this are skipped (default 1 MiB)
	MaxTotalBytes int64         // manifest bytes read; past it reading stops with an error (default 64 MiB)
	MaxFetchBytes int64         // bytes of objects fetched for the commit (default 128 MiB)
	MaxObjects    int           // objects fetched for the commit (default 200,000)
	MaxFiles      int           // files in the commit's tree (default 50,000)
	Timeout       time.Duration // one fetch, however many callers wait for it (default 2 minutes)
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes == 0 {
		l.MaxFileBytes = 1 << 20
	}
	if l.MaxTotalBytes == 0 {
		l.MaxTotalBytes = 64 << 20
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

// wanted reports whether a file is one a diagnosis or a fix reads.
func wanted(name string) bool {
	base := path.Base(name)
	switch {
	case strings.HasSuffix(name, ".yaml"), strings.HasSuffix(name, ".yml"), strings.HasSuffix(name, ".tpl"),
		strings.HasSuffix(name, ".json"), base == "Kustomization":
		return true
	}
	return false
}

// Files returns the manifest, chart and kustomization files of the repository
// at revision (a commit, branch or tag), keyed by their path in the
// repository, through the process-wide Shared cache.
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

// checkout fetches one commit of the repository and reads its wanted files.
func checkout(ctx context.Context, repoURL string, commit plumbing.Hash, ref plumbing.ReferenceName, lim Limits, a Access, fetches *atomic.Int64) (map[string]string, error) {
	st := &boundedStorage{Storage: memory.NewStorage(), repo: redact(repoURL), lim: lim}
	repo, err := git.Init(st, nil)
	if err != nil {
		return nil, err
	}
	rem, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{repoURL}})
	if err != nil {
		return nil, err
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
			return nil, err
		}
	}
	if !have() {
		err := fetch(config.RefSpec(commit.String()+":refs/driftfix/want"), 1)
		if err != nil && !errors.Is(err, git.ErrExactSHA1NotSupported) {
			return nil, err
		}
	}
	if !have() {
		for _, spec := range []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"} {
			if err := fetch(spec, 0); err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
				return nil, err
			}
		}
	}
	c, err := repo.CommitObject(commit)
	if err != nil {
		return nil, fmt.Errorf("revision %s not found", commit)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var total int64
	files := 0
	err = tree.Files().ForEach(func(f *object.File) error {
		if files++; files > lim.MaxFiles {
			return &LimitError{Repo: st.repo, Limit: "MaxFiles", Max: int64(lim.MaxFiles)}
		}
		if !wanted(f.Name) || f.Size > lim.MaxFileBytes {
			return nil
		}
		if total += f.Size; total > lim.MaxTotalBytes {
			return &LimitError{Repo: st.repo, Limit: "MaxTotalBytes", Max: lim.MaxTotalBytes}
		}
		r, err := f.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		out[f.Name] = string(b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
