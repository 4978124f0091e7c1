package gitrepo

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// History is the history of a local clone, read with go-git, to tell which
// commit wrote a line of a file. It never fetches.
type History struct {
	dir     string
	repo    *git.Repository
	head    *object.Commit
	shallow map[plumbing.Hash]bool
	blames  map[string]*git.BlameResult
}

// OpenHistory opens the clone at dir (or a directory inside it) at its HEAD.
func OpenHistory(dir string) (*History, error) {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	ref, err := r.Head()
	if err != nil {
		return nil, fmt.Errorf("read HEAD of %s: %w", dir, err)
	}
	head, err := r.CommitObject(ref.Hash())
	if err != nil {
		return nil, fmt.Errorf("read HEAD commit of %s: %w", dir, err)
	}
	h := &History{dir: dir, repo: r, head: head, shallow: map[plumbing.Hash]bool{}, blames: map[string]*git.BlameResult{}}
	sh, err := r.Storer.Shallow()
	if err != nil {
		return nil, fmt.Errorf("read shallow commits of %s: %w", dir, err)
	}
	for _, c := range sh {
		h.shallow[c] = true
	}
	return h, nil
}

// ErrNoHistory says the history cannot tell which commit wrote a line.
var ErrNoHistory = errors.New("commit unknown")

// Wrote returns the commit that last wrote line (1-based) of file at HEAD,
// as git blame finds it, and its commit time. content is the file as the
// caller read it: when HEAD holds another version, or the line's commit is
// a shallow clone's boundary (its parents were not fetched, so the line may
// be older), or the history cannot be read, the error wraps ErrNoHistory
// and says why. It never guesses.
func (h *History) Wrote(file string, line int, content string) (string, time.Time, error) {
	f, err := h.head.File(file)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%w: %s is not in HEAD of %s", ErrNoHistory, file, h.dir)
	}
	if got, err := f.Contents(); err != nil || got != content {
		return "", time.Time{}, fmt.Errorf("%w: %s at HEAD of %s is not the version the snapshot holds", ErrNoHistory, file, h.dir)
	}
	if len(h.shallow) > 0 && h.shallow[h.head.Hash] {
		return "", time.Time{}, fmt.Errorf("%w: %s is a depth-1 checkout", ErrNoHistory, h.dir)
	}
	b, ok := h.blames[file]
	if !ok {
		if b, err = git.Blame(h.head, file); err != nil {
			b = nil
		}
		h.blames[file] = b
	}
	if b == nil && len(h.shallow) > 0 {
		return "", time.Time{}, fmt.Errorf("%w: %s is a shallow clone, whose history is cut", ErrNoHistory, h.dir)
	}
	if b == nil {
		return "", time.Time{}, fmt.Errorf("%w: the history of %s in %s cannot be read", ErrNoHistory, file, h.dir)
	}
	if line < 1 || line > len(b.Lines) {
		return "", time.Time{}, fmt.Errorf("%w: %s has no line %d", ErrNoHistory, file, line)
	}
	hash := b.Lines[line-1].Hash
	if h.shallow[hash] {
		return "", time.Time{}, fmt.Errorf("%w: line %d of %s comes from %s, the first commit of a shallow clone; it may be older", ErrNoHistory, line, file, hash.String()[:12])
	}
	c, err := h.repo.CommitObject(hash)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%w: read commit %s: %v", ErrNoHistory, hash, err)
	}
	return hash.String(), c.Committer.When, nil
}
