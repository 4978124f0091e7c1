// Package secretfile reads a token from a file and reads it again whenever
// the file changes (its size or modification time), so a rotated token is
// used from the next request on, without a restart. Kubernetes updates a
// mounted Secret by swapping a symlink, which Stat follows.
package secretfile

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// File is one token file.
type File struct {
	path string

	mu    sync.Mutex
	size  int64
	mod   time.Time
	value string
}

// Open reads the token at path; a missing, unreadable or empty file is an error.
func Open(path string) (*File, error) {
	f := &File{path: path}
	if err := f.read(); err != nil {
		return nil, err
	}
	return f, nil
}

// Token returns the file's token, read again when the file changed since.
// While the file cannot be read or is empty (mid-rotation), the last token
// read is kept.
func (f *File) Token() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	fi, err := os.Stat(f.path)
	if err == nil && (fi.Size() != f.size || !fi.ModTime().Equal(f.mod)) {
		_ = f.readLocked() // on failure the last token stays
	}
	return f.value
}

func (f *File) read() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readLocked()
}

func (f *File) readLocked() error {
	fi, err := os.Stat(f.path)
	if err != nil {
		return fmt.Errorf("read %s: %w", f.path, err)
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("read %s: %w", f.path, err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return fmt.Errorf("read %s: %w", f.path, errEmpty)
	}
	f.value, f.size, f.mod = v, fi.Size(), fi.ModTime()
	return nil
}

var errEmpty = errors.New("the file is empty")
