package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// TestRealSnapshots diagnoses the snapshots captured from the real stack
// (e2e/stack: kube-apiserver, kube-controller-manager, Argo CD 3.6.1) by
// `go test -tags e2e ./e2e -update-real` and checks each exactly against the
// .expected.yaml beside it.
func TestRealSnapshots(t *testing.T) {
	files := corpus.Snapshots(t, "testdata/real", ".json")
	if len(files) == 0 {
		t.Fatal("no snapshots in testdata/real")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			exp := corpus.Expect(t, file)
			_, rep := diagnoseFile(t, file)
			exp.Check(t, rep)
		})
	}
}
