// Package corpus reads the repository's snapshot corpora for tests and
// benchmarks in any package: paths are taken from the module root, so a test
// reads testdata/cases/01-hpa-statefulset.yaml the same from every folder.
package corpus

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// Root is the module's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Path joins a slash-separated path inside the module to its root.
func Path(rel string) string { return filepath.Join(Root(), filepath.FromSlash(rel)) }

// Load reads a snapshot file (a path inside the module), or stops the test.
func Load(tb testing.TB, rel string) *drift.Snapshot {
	tb.Helper()
	s, err := drift.LoadSnapshot(Path(rel))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// Bench builds an application with n resources by cloning, under new names,
// the resources of several testdata cases (a mix of clean ones, server
// defaults, HPA replicas, webhook injections, quantities and manual edits),
// with their cluster context.
func Bench(tb testing.TB, n int) *drift.Snapshot {
	tb.Helper()
	var pool []drift.Resource
	var cluster []drift.Object
	var app drift.Object
	for _, name := range []string{"01-hpa-statefulset", "11-builtin-quantity-hidden", "05-cabundle-cainjector-ssa", "17-webhook-adds-label",
		"12-builtin-unknown-field", "21-manual-kubectl-patch", "30-secret-stringdata", "09-cr-quantity-conversion", "16-empty-values-dropped"} {
		s := Load(tb, "testdata/cases/"+name+".yaml")
		if app == nil {
			app = s.Application
		}
		pool = append(pool, s.Resources...)
		cluster = append(cluster, s.Cluster...)
	}
	out := &drift.Snapshot{Application: app, Cluster: cluster}
	for i := 0; len(out.Resources) < n; i++ {
		r := pool[i%len(pool)]
		c := drift.Resource{Target: clone(r.Target), Live: clone(r.Live)}
		suffix := fmt.Sprintf("-%d", i)
		for _, o := range []drift.Object{c.Target, c.Live} {
			if o != nil {
				md := o["metadata"].(map[string]any)
				md["name"] = md["name"].(string) + suffix
			}
		}
		out.Resources = append(out.Resources, c)
	}
	return out
}

func clone(o drift.Object) drift.Object {
	if o == nil {
		return nil
	}
	return drift.DeepCopy(o).(map[string]any)
}

// Corpora are every set of snapshots in the repository that an invariant
// over all diagnoses is checked on, as globs inside the module. (The public
// fixtures beside the repository have their exact expectations in
// TestSharedFixtures.)
var Corpora = []string{
	"testdata/cases/*.yaml",
	"testdata/realworld/[0-9]*.yaml",
	"testdata/heldout/[0-9]*.yaml",
	"testdata/real/*.json",
	"testdata/differential/*.json",
	"testdata/hostile/*.yaml",
	"remediations/testdata/*.yaml",
}

// Files returns the snapshot files the globs (inside the module) match,
// their expectation files left out, or stops the test.
func Files(tb testing.TB, globs ...string) []string {
	tb.Helper()
	var out []string
	for _, glob := range globs {
		files, err := filepath.Glob(Path(glob))
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range files {
			if !strings.HasSuffix(f, ".expected.yaml") {
				out = append(out, f)
			}
		}
	}
	return out
}
