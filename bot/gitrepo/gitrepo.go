// Package gitrepo reads an application's source repository at the compared
// revision, in memory, so that a snapshot can carry the files a fix edits.
// It reads file:// repositories and public HTTPS ones with go-git.
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Limits bound what is read from a repository.
type Limits struct {
	MaxFileBytes  int64 // files larger than this are skipped (default 1 MiB)
	MaxTotalBytes int64 // reading stops with an error past this (default 64 MiB)
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
// at revision (a commit, branch or tag), keyed by their path in the repository.
func Files(ctx context.Context, repoURL, revision string, lim Limits) (map[string]string, error) {
	if lim.MaxFileBytes == 0 {
		lim.MaxFileBytes = 1 << 20
	}
	if lim.MaxTotalBytes == 0 {
		lim.MaxTotalBytes = 64 << 20
	}
	if !strings.HasPrefix(repoURL, "file://") && !strings.HasPrefix(repoURL, "https://") {
		return nil, fmt.Errorf("read repository %s: only file:// and https:// repositories are read", repoURL)
	}
	repo, err := git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{URL: repoURL, NoCheckout: true, Tags: git.NoTags})
	if err != nil {
		return nil, fmt.Errorf("read repository %s: %w", repoURL, err)
	}
	hash, err := resolve(repo, revision)
	if err != nil {
		return nil, fmt.Errorf("read repository %s: %w", repoURL, err)
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, fmt.Errorf("read repository %s at %s: %w", repoURL, revision, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read repository %s at %s: %w", repoURL, revision, err)
	}
	out := map[string]string{}
	var total int64
	err = tree.Files().ForEach(func(f *object.File) error {
		if !wanted(f.Name) || f.Size > lim.MaxFileBytes {
			return nil
		}
		if total += f.Size; total > lim.MaxTotalBytes {
			return fmt.Errorf("more than %d bytes of manifests", lim.MaxTotalBytes)
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
		return nil, fmt.Errorf("read repository %s at %s: %w", repoURL, revision, err)
	}
	return out, nil
}

// resolve turns a commit SHA, branch or tag (or HEAD) into a commit hash.
func resolve(repo *git.Repository, revision string) (plumbing.Hash, error) {
	if revision == "" || revision == "HEAD" {
		ref, err := repo.Head()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return ref.Hash(), nil
	}
	if plumbing.IsHash(revision) {
		return plumbing.NewHash(revision), nil
	}
	for _, name := range []plumbing.ReferenceName{plumbing.NewRemoteReferenceName("origin", revision), plumbing.NewBranchReferenceName(revision), plumbing.NewTagReferenceName(revision)} {
		if ref, err := repo.Reference(name, true); err == nil {
			return ref.Hash(), nil
		}
	}
	h, err := repo.ResolveRevision(plumbing.Revision(revision))
	if err != nil || h == nil {
		return plumbing.ZeroHash, errors.Join(fmt.Errorf("revision %q not found", revision), err)
	}
	return *h, nil
}
