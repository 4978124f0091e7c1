package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// TestSharedFixtures diagnoses every public fixture in ../shared/fixtures and
// checks it against its .expected.yaml exactly: each expected finding (kind,
// name, path, cause, fix kind) with evidence, nothing else, and no must_not
// answer. It skips when the fixtures are missing (fails where
// DRIFTFIX_REQUIRE_SHARED_FIXTURES=1, as in CI).
func TestSharedFixtures(t *testing.T) {
	for _, in := range corpus.SharedFixtures(t) {
		t.Run(strings.TrimSuffix(filepath.Base(in), ".yaml"), func(t *testing.T) {
			exp := corpus.Expect(t, in)
			_, rep := diagnoseFile(t, in)
			exp.Check(t, rep)
		})
	}
}
