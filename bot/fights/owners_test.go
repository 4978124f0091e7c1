package fights

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// TestObserveOwnersAsDiffOwners: the writer Observe gives each path, taken
// from the comparison's owners where it has them, is the last writer
// diff.Owners names for that path of the live object, on every corpus
// snapshot, watched paths included.
func TestObserveOwnersAsDiffOwners(t *testing.T) {
	var files []string
	for _, dir := range []string{"testdata/cases", "testdata/realworld"} {
		files = append(files, corpus.Snapshots(t, dir, ".yaml")...)
	}
	files = append(files, corpus.Snapshots(t, "testdata/real", ".json")...)
	files = append(files, corpus.SharedFixturesIfPresent(t)...)
	at := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	checked := 0
	for _, f := range files {
		s, err := drift.LoadSnapshot(f)
		if err != nil {
			t.Fatal(err)
		}
		var watch []Key
		for i := range s.Resources {
			watch = append(watch, Key{Resource: s.Resources[i].Ref(), Path: "/metadata/labels"})
		}
		ws, err := Observe(s, at, watch)
		if err != nil {
			continue
		}
		for _, w := range ws {
			var live drift.Object
			for i := range s.Resources {
				if s.Resources[i].Ref() == w.Resource {
					live = s.Resources[i].Live
				}
			}
			p, _ := drift.ParsePointer(w.Path)
			if want := lastWriter(diff.Owners(live, p)); w.Manager != want {
				t.Errorf("%s %s %s: writer %q, diff.Owners says %q", filepath.Base(f), w.Resource, w.Path, w.Manager, want)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d writes checked", checked)
	}
}
