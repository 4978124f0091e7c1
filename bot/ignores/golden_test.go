package ignores

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// now dates the test inventories.
var now = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func load(t testing.TB, names ...string) []*drift.Snapshot {
	t.Helper()
	var out []*drift.Snapshot
	for _, n := range names {
		s, err := drift.LoadSnapshot(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func inventory(t testing.TB, names ...string) *Report {
	t.Helper()
	rep, err := Inventory(load(t, names...), Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestIgnoreInventoryGolden checks the text and JSON reports of the two test
// snapshots against testdata/inventory.golden.{txt,json}; -update rewrites them.
func TestIgnoreInventoryGolden(t *testing.T) {
	rep := inventory(t, "shop.yaml", "platform.yaml")
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"inventory.golden.txt": Text(rep), "inventory.golden.json": append(js, '\n')} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./bot/ignores -run Golden -update)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from the report (go test ./bot/ignores -run Golden -update, then read the diff):\n%s", name, got)
		}
	}
}
