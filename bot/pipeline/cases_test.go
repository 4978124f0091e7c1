package pipeline

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestCases diagnoses every snapshot in testdata/cases and checks the findings
// exactly against the .expected.yaml beside it (what the case is about, so a
// golden rewritten by mistake still fails) and the whole JSON output against
// its golden file.
func TestCases(t *testing.T) {
	files := corpus.Snapshots(t, "testdata/cases", ".yaml")
	if len(files) < 30 {
		t.Fatalf("found %d cases in testdata/cases, want at least 30", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			exp := corpus.Expect(t, file)
			_, rep := diagnoseFile(t, file)
			exp.Check(t, rep)
			raw, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			raw = append(raw, '\n')
			golden := strings.TrimSuffix(file, ".yaml") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, raw, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantRaw, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./bot/pipeline -run Cases -update)", err)
			}
			if !bytes.Equal(raw, wantRaw) {
				t.Errorf("output differs from %s (run with -update and review the diff):\n%s", golden, raw)
			}
		})
	}
}

// TestDiagnoseIsDeterministic diagnoses the same snapshot many times: findings,
// evidence and order must be byte-identical, so PR bodies and digests are too.
func TestDiagnoseIsDeterministic(t *testing.T) {
	snap := loadSnapshot(t, "../../testdata/cases/27-broad-ignore-system-all.yaml")
	var first []byte
	for i := 0; i < 20; i++ {
		rep, err := Diagnose(snap, drift.Sensitivity{})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = raw
		} else if !bytes.Equal(raw, first) {
			t.Fatalf("run %d differs from run 0:\n%s\n%s", i, raw, first)
		}
	}
}

// loadSnapshot reads a snapshot file, or stops the test.
func loadSnapshot(tb testing.TB, file string) *drift.Snapshot {
	tb.Helper()
	s, err := drift.LoadSnapshot(file)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// diagnoseFile reads and diagnoses a snapshot file, or stops the test.
func diagnoseFile(tb testing.TB, file string) (*drift.Snapshot, *drift.Report) {
	tb.Helper()
	s := loadSnapshot(tb, file)
	rep, err := Diagnose(s, drift.Sensitivity{})
	if err != nil {
		tb.Fatal(err)
	}
	return s, rep
}
