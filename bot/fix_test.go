package bot

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
)

func TestFixSharedFixturesProbe(t *testing.T) {
	snaps, _ := filepath.Glob(filepath.Join(sharedFixtures, "[0-9]*[a-z].yaml"))
	for _, in := range snaps {
		if strings.HasSuffix(in, ".expected.yaml") {
			continue
		}
		s, err := drift.LoadSnapshot(in)
		if err != nil {
			t.Fatal(err)
		}
		_, plans, err := Fix(s, remediations.RepoFromSnapshot(s), drift.Sensitivity{}, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range plans {
			t.Logf("%s: %s %s edits=%d verified=%q dropped=%q", filepath.Base(in), p.Kind, p.Resource, len(p.Edits), p.Verification, p.Dropped)
			for _, e := range p.Edits {
				t.Logf("---- %s\n%s", e.File, e.After)
			}
		}
	}
}
