package secretfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRotation: a new token in the file is used at once; a file emptied or
// removed mid-rotation keeps the last token; Kubernetes' symlink swap works.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	write := func(v string, age time.Duration) {
		t.Helper()
		if err := os.WriteFile(path, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		os.Chtimes(path, at, at)
	}
	write("first\n", time.Hour)
	f, err := Open(path)
	if err != nil || f.Token() != "first" {
		t.Fatalf("open: %v %q", err, f.Token())
	}
	write("second\n", 0)
	if got := f.Token(); got != "second" {
		t.Errorf("after rotation %q", got)
	}
	write("", 0)
	if got := f.Token(); got != "second" {
		t.Errorf("an emptied file must keep the last token, got %q", got)
	}
	os.Remove(path)
	if got := f.Token(); got != "second" {
		t.Errorf("a removed file must keep the last token, got %q", got)
	}

	// A mounted Secret: token → ..data/token, ..data → a timestamped directory.
	for i, v := range []string{"k8s-one", "k8s-two-longer"} {
		ts := filepath.Join(dir, "..2026_12_03_0"+string(rune('0'+i)))
		os.Mkdir(ts, 0o700)
		os.WriteFile(filepath.Join(ts, "token"), []byte(v), 0o600)
		os.Remove(filepath.Join(dir, "..data_tmp"))
		os.Symlink(ts, filepath.Join(dir, "..data_tmp"))
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			os.Remove(path)
			os.Symlink(filepath.Join("..data", "token"), path)
		}
		if got := f.Token(); got != v {
			t.Errorf("mounted Secret update %d: %q, want %q", i, got, v)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file must be an error at start")
	}
}
