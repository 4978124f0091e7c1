package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/docs"
)

// TestSharedFixtures diagnoses every public fixture in ../shared/fixtures and
// checks it against its .expected.yaml exactly: each expected finding (kind,
// name, path, cause, fix kind) with evidence, nothing else, and no must_not
// answer. It skips when the fixtures are missing (fails where
// DRIFTFIX_REQUIRE_SHARED_FIXTURES=1, as in CI). The number exact is the
// figure the docs state (docs/figures.yaml, "shared-fixtures").
func TestSharedFixtures(t *testing.T) {
	files, ran, exact := corpus.SharedFixtures(t), 0, 0
	for _, in := range files {
		if t.Run(strings.TrimSuffix(filepath.Base(in), ".yaml"), func(t *testing.T) {
			ran++
			exp := corpus.Expect(t, in)
			_, rep := diagnoseFile(t, in)
			exp.Check(t, rep)
		}) {
			exact++
		}
	}
	if ran < len(files) {
		return // -run chose some fixtures: the figure is of all
	}
	docs.Hold(t, "shared-fixtures", "fixtures", float64(len(files)))
	docs.Hold(t, "shared-fixtures", "exact", float64(exact))
}
