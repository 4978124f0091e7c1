package oracle

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// corpora are the repository's snapshot sets and the public fixtures beside it.
var corpora = []string{
	"../../testdata/cases/*.yaml",
	"../../testdata/realworld/[0-9]*.yaml",
	"../../testdata/heldout/[0-9]*.yaml",
	"../../testdata/real/*.json",
	"../../testdata/differential/*.json",
	"../../testdata/hostile/*.yaml",
	"../../remediations/testdata/*.yaml",
	"../../../shared/fixtures/*.yaml",
}

func corpusFiles(t *testing.T) []string {
	var out []string
	for _, g := range corpora {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, ".expected.yaml") {
				out = append(out, f)
			}
		}
	}
	return out
}

func TestArgoCDOracleCorpora(t *testing.T) {
	files := corpusFiles(t)
	total, agree, skipped, appErr := 0, 0, 0, 0
	var lines []string
	for _, f := range files {
		s, err := drift.LoadSnapshot(f)
		if err != nil {
			continue // snapshots made to be refused (hostile inputs)
		}
		s, err = Prepare(s)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		av, aerr := ArgoCD(s)
		dv, derr := Driftfix(s)
		rel := strings.TrimPrefix(f, "../../")
		if aerr != nil || derr != nil {
			appErr++
			lines = append(lines, fmt.Sprintf("%s: argo error %v / driftfix error %v", rel, aerr, derr))
			continue
		}
		for i := range av {
			if av[i].Skipped != "" {
				skipped++
				continue
			}
			total++
			if Agree(av[i], dv[i]) {
				agree++
				continue
			}
			lines = append(lines, fmt.Sprintf("%s %s: argo %v %v / driftfix %v %v", rel, av[i].Resource, av[i].Modified, av[i].Paths, dv[i].Modified, dv[i].Paths))
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
	rate := float64(agree) / float64(max(total, 1))
	t.Logf("corpora: %d files, %d resources compared, %d agree (%.1f%%), %d skipped, %d application errors", len(files), total, agree, 100*rate, skipped, appErr)
	if total < 200 || rate < corporaFloor || appErr > 0 {
		t.Errorf("agreement with Argo CD on the corpora: %d resources, %.1f%% (floor %.0f%%), %d application errors", total, 100*rate, 100*corporaFloor, appErr)
	}
}

// corporaFloor is the corpora's agreement below which the test fails.
const corporaFloor = 0.98
