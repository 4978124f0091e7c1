package gitrepo

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// WorkTree reads the files of a checkout's work tree as a commit's are read
// (see Limits and Tree): what `git add -A` would commit, so files Git
// ignores (.gitignore, .git/info/exclude) and .git are left out. A symbolic
// link to a file inside dir is read as that file; other links, and special
// files, are not read.
func WorkTree(dir string, lim Limits) (Tree, error) {
	lim = lim.withDefaults()
	named := func(err error) error { return fmt.Errorf("read the work tree of %s: %w", dir, err) }
	root, err := filepath.Abs(dir)
	if err != nil {
		return Tree{}, named(err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return Tree{}, named(err)
	}
	patterns, err := gitignore.ReadPatterns(osfs.New(root), nil)
	if err != nil {
		return Tree{}, named(fmt.Errorf("read its .gitignore files: %w", err))
	}
	ignored := gitignore.NewMatcher(patterns)
	var entries []entry
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if d.IsDir() {
			if d.Name() == ".git" || ignored.Match(parts, true) {
				return filepath.SkipDir
			}
			return nil
		}
		if ignored.Match(parts, false) {
			return nil
		}
		if len(entries) >= lim.MaxFiles {
			return &LimitError{Repo: root, Limit: "MaxFiles", Max: int64(lim.MaxFiles)}
		}
		real := p
		if d.Type()&fs.ModeSymlink != 0 {
			if real, err = filepath.EvalSymlinks(p); err != nil {
				return nil // a dangling link is no file
			}
			if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return nil // a link out of the checkout is not one of its files
			}
		}
		info, err := os.Stat(real)
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		entries = append(entries, entry{name: filepath.ToSlash(rel), size: info.Size(), read: fileReader(real, info.Size(), lim.MaxFileBytes)})
		return nil
	})
	if err != nil {
		return Tree{}, named(err)
	}
	files, skipped, err := readTree(entries, lim, root)
	if err != nil {
		return Tree{}, named(err)
	}
	return Tree{Files: files, Skipped: skipped}, nil
}

// fileReader reads a file of at most max bytes (and one byte more, so that
// a file that grew since it was listed is seen as over max).
func fileReader(name string, size, max int64) func() (string, error) {
	return func() (string, error) {
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		return readAll(f, size, max)
	}
}
