package drift

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// readParts reads a file part by part and puts the snapshot together;
// false when OpenSnapshotParts declines it.
func readParts(t *testing.T, file string) (*Snapshot, bool) {
	t.Helper()
	n := 0
	p, ok := OpenSnapshotParts(file, Limits{}, func(_ *Snapshot, i int, _ *Resource) {
		if i != n {
			t.Fatalf("visited resource %d after %d", i, n-1)
		}
		n++
	})
	if !ok {
		return nil, false
	}
	defer p.Close()
	if n != p.Len() {
		t.Fatalf("visited %d resources of %d", n, p.Len())
	}
	s := *p.Head
	rs, err := p.Resources(0, p.Len())
	if err != nil {
		t.Fatalf("read again: %v", err)
	}
	if len(rs) > 0 {
		s.Resources = rs
	}
	return &s, true
}

// FuzzSnapshotParts: whatever a file holds, reading it part by part gives
// exactly the snapshot LoadSnapshot reads, or declines; it never accepts
// a file LoadSnapshot refuses.
func FuzzSnapshotParts(f *testing.F) {
	for _, glob := range []string{"../../testdata/cases/0[1-5]*.yaml", "../../testdata/hostile/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"a"}},"resources":[{"live":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}}]}`))
	f.Add([]byte("apiVersion: driftfix/v1\nkind: Snapshot\napplication: &a {apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}}\nresources:\n- live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n  target: *a\n"))
	f.Add([]byte("apiVersion: driftfix/v1\nkind: Snapshot\napplication:\n  apiVersion: argoproj.io/v1alpha1\n  kind: Application\n  metadata: {name: a}\nresources:\n  - live:\n      apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: c\n      data:\n        k: |\n          x\n\n          - y\n  - target: {apiVersion: v1, kind: ConfigMap, metadata: {name: d}}\ncluster: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "s")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, ok := readParts(t, file)
		want, err := LoadSnapshot(file)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("read part by part, but whole: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("part by part:\n%#v\nwhole:\n%#v", got, want)
		}
	})
}

// TestSnapshotPartsLeavesPipesAlone: a snapshot given through a pipe (a
// shell's <(driftfix snapshot APP)) is declined without being opened, so
// that the whole read that follows finds it intact.
func TestSnapshotPartsLeavesPipesAlone(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "snapshot")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no named pipes here:", err)
	}
	data, err := os.ReadFile("../../testdata/cases/01-hpa-statefulset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		f.Close()
	}()
	if _, ok := OpenSnapshotParts(fifo, Limits{}, func(*Snapshot, int, *Resource) {}); ok {
		t.Fatal("a pipe was read part by part")
	}
	s, err := LoadSnapshot(fifo)
	if err != nil || len(s.Resources) == 0 {
		t.Fatalf("the pipe read whole after: %v", err)
	}
}

// TestSnapshotPartsDeclines: what the part-by-part reader cannot show it
// reads as the whole read does, it leaves to the whole read, whose error (or
// snapshot) is then the one the user gets.
func TestSnapshotPartsDeclines(t *testing.T) {
	const head = "apiVersion: driftfix/v1\nkind: Snapshot\napplication: {apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}}\n"
	for _, tc := range []struct {
		name, doc string
		parts     bool
	}{
		{"block style", head + "resources:\n- live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n", true},
		{"an alias across resources", head + "resources:\n- live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, labels: &l {app: web}}}\n- live: {apiVersion: v1, kind: ConfigMap, metadata: {name: d, labels: *l}}\n", false},
		{"flow style at the top", "{apiVersion: driftfix/v1, kind: Snapshot, application: {apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}}, resources: []}\n", false},
		{"resources null", head + "resources: null\n", false},
		{"no list under resources", head + "resources:\n", false},
		{"resources twice", head + "resources:\n- live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\nresources: []\n", false},
		{"a document after", head + "resources: []\n---\nkind: x\n", false},
	} {
		file := filepath.Join(t.TempDir(), "s.yaml")
		if err := os.WriteFile(file, []byte(tc.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		got, ok := readParts(t, file)
		if ok != tc.parts {
			t.Errorf("%s: read part by part = %v, want %v", tc.name, ok, tc.parts)
			continue
		}
		if ok {
			want, err := LoadSnapshot(file)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: part by part %#v, whole %#v (%v)", tc.name, got, want, err)
			}
		}
	}
}
