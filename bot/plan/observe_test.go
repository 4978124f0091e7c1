package plan

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/fights"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/bot/pipeline"
)

// TestObserveComparedAgrees: the writes observed from the comparison a
// diagnosis returned are those fights.Observe finds comparing the snapshot
// itself, for every snapshot of the corpora, with a watched path too.
func TestObserveComparedAgrees(t *testing.T) {
	var files []string
	for _, dir := range []string{"testdata/cases", "testdata/realworld", "testdata/hostile"} {
		files = append(files, corpus.Snapshots(t, dir, ".yaml")...)
	}
	for _, dir := range []string{"testdata/real", "testdata/differential"} {
		files = append(files, corpus.Snapshots(t, dir, ".json")...)
	}
	files = append(files, corpus.SharedFixturesIfPresent(t)...)
	at := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	compared := 0
	for _, f := range files {
		s, err := drift.LoadSnapshot(f)
		if err != nil {
			continue // the hostile corpus holds snapshots that do not load
		}
		var watch []fights.Key
		if len(s.Resources) > 0 {
			watch = []fights.Key{{Resource: s.Resources[0].Ref(), Path: "/metadata/labels"}}
		}
		want, werr := fights.Observe(s, at, watch)
		_, cmp, err := pipeline.DiagnoseCompared(s, drift.Sensitivity{})
		if (err != nil) != (werr != nil) {
			t.Fatalf("%s: diagnosis error %v, observe error %v", filepath.Base(f), err, werr)
		}
		if err != nil {
			continue
		}
		if got := fights.ObserveCompared(s, cmp, at, watch); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: from the diagnosis's comparison %+v, comparing again %+v", filepath.Base(f), got, want)
		}
		compared++
	}
	if compared < 100 {
		t.Fatalf("only %d snapshots compared", compared)
	}
}
