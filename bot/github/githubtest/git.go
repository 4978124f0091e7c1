package githubtest

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// entry is one file of a flattened tree.
type entry struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

// NewRepo creates a bare repository at dir/owner/name.git holding files in
// one commit on main, and returns its file:// URL (the URL Argo CD and
// driftfix read it by).
func NewRepo(dir, owner, name string, files map[string]string) (string, error) {
	path := filepath.Join(dir, owner, name+".git")
	r, err := git.PlainInit(path, true)
	if err != nil {
		return "", fmt.Errorf("init %s: %w", path, err)
	}
	flat := map[string]entry{}
	for f, content := range files {
		h, err := writeBlob(r, []byte(content))
		if err != nil {
			return "", err
		}
		flat[f] = entry{mode: filemode.Regular, hash: h}
	}
	tree, err := buildTree(r, flat)
	if err != nil {
		return "", err
	}
	c, err := writeCommit(r, tree, "initial", nil, time.Now(), "person", "person@example.com")
	if err != nil {
		return "", err
	}
	if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), c)); err != nil {
		return "", err
	}
	if err := r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main"))); err != nil {
		return "", err
	}
	return "file://" + path, nil
}

func writeBlob(r *git.Repository, b []byte) (plumbing.Hash, error) {
	obj := r.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(b); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.Storer.SetEncodedObject(obj)
}

func readBlob(r *git.Repository, h plumbing.Hash) ([]byte, error) {
	b, err := r.BlobObject(h)
	if err != nil {
		return nil, err
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// writeCommit writes a commit by login (its author and committer name,
// which the REST commit endpoint answers as the GitHub account).
func writeCommit(r *git.Repository, tree plumbing.Hash, msg string, parents []plumbing.Hash, when time.Time, login, email string) (plumbing.Hash, error) {
	sig := object.Signature{Name: login, Email: email, When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: parents}
	obj := r.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.Storer.SetEncodedObject(obj)
}

// flatten lists every file of a tree by its full path.
func flatten(r *git.Repository, tree plumbing.Hash) (map[string]entry, error) {
	t, err := r.TreeObject(tree)
	if err != nil {
		return nil, err
	}
	out := map[string]entry{}
	err = t.Files().ForEach(func(f *object.File) error {
		out[f.Name] = entry{mode: f.Mode, hash: f.Hash}
		return nil
	})
	return out, err
}

// buildTree writes the trees holding files and returns the root's hash.
func buildTree(r *git.Repository, files map[string]entry) (plumbing.Hash, error) {
	type dir struct {
		files map[string]entry
		dirs  map[string]*dir
	}
	newDir := func() *dir { return &dir{files: map[string]entry{}, dirs: map[string]*dir{}} }
	root := newDir()
	for p, e := range files {
		parts := strings.Split(p, "/")
		d := root
		for _, part := range parts[:len(parts)-1] {
			if d.dirs[part] == nil {
				d.dirs[part] = newDir()
			}
			d = d.dirs[part]
		}
		d.files[parts[len(parts)-1]] = e
	}
	var write func(d *dir) (plumbing.Hash, error)
	write = func(d *dir) (plumbing.Hash, error) {
		var entries []object.TreeEntry
		for name, e := range d.files {
			entries = append(entries, object.TreeEntry{Name: name, Mode: e.mode, Hash: e.hash})
		}
		for name, sub := range d.dirs {
			h, err := write(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		// Git orders entries by name, a directory's name as if it ended in "/".
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
		obj := r.Storer.NewEncodedObject()
		if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return r.Storer.SetEncodedObject(obj)
	}
	return write(root)
}
