package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// Entry is one line of an expectation: under findings, a finding the
// diagnosis must report (kind, name, path, cause and fix kind); under
// must_not, a wrong answer (any finding at that path, or only one with that
// cause), with why it would be wrong.
type Entry struct {
	Kind        string `yaml:"kind"`
	Name        string `yaml:"name"`
	Path        string `yaml:"path"`
	Cause       string `yaml:"cause"`
	Remediation string `yaml:"remediation"`
	Why         string `yaml:"why"`
}

// Key is the entry's resource and path, as Kind/name/path.
func (e Entry) Key() string { return e.Kind + "/" + e.Name + e.Path }

// FindingKey is a finding's resource and path, in the form of Entry.Key.
func FindingKey(f drift.Finding) string {
	return f.Resource.Kind + "/" + f.Resource.Name + f.Path.String()
}

// ViolatedBy reports whether f is the wrong answer a must_not entry names:
// any finding at its path, or, when the entry names a cause, one with that
// cause.
func (e Entry) ViolatedBy(f drift.Finding) bool {
	if f.Resource.Kind != e.Kind || f.Resource.Name != e.Name || f.Path.String() != e.Path {
		return false
	}
	return e.Cause == "" || string(f.Cause) == e.Cause
}

// Expectation is the diagnosis a snapshot must get, in the schema of the
// public fixtures' NN-name.expected.yaml: where the case comes from, what it
// is about, every finding, and the answers that would be wrong.
type Expectation struct {
	Source   string   `yaml:"source"`
	Tags     []string `yaml:"tags"`
	Summary  string   `yaml:"summary"`
	Findings []Entry  `yaml:"findings"`
	MustNot  []Entry  `yaml:"must_not"`
}

// ExpectationFile is the expectation beside a snapshot file:
// 01-name.yaml or 01-name.json has 01-name.expected.yaml.
func ExpectationFile(snapshot string) string {
	return strings.TrimSuffix(snapshot, filepath.Ext(snapshot)) + ".expected.yaml"
}

// Expect reads the expectation beside a snapshot file (see ExpectationFile),
// or stops the test. Unknown keys, a finding without kind, name, cause or
// fix kind, and a must_not entry without kind or name are errors, so a
// misspelt key cannot quietly loosen a check.
func Expect(tb testing.TB, snapshot string) Expectation {
	tb.Helper()
	exp, err := readExpectation(ExpectationFile(snapshot))
	if err != nil {
		tb.Fatal(err)
	}
	return exp
}

func readExpectation(file string) (Expectation, error) {
	var exp Expectation
	raw, err := os.ReadFile(file)
	if err != nil {
		return exp, fmt.Errorf("read expectation: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&exp); err != nil && !errors.Is(err, io.EOF) {
		return exp, fmt.Errorf("expectation %s: %w", file, err)
	}
	for i, e := range exp.Findings {
		if e.Kind == "" || e.Name == "" || e.Cause == "" || e.Remediation == "" {
			return exp, fmt.Errorf("expectation %s: findings[%d] (%s) needs kind, name, cause and remediation", file, i, e.Key())
		}
	}
	for i, e := range exp.MustNot {
		if e.Kind == "" || e.Name == "" {
			return exp, fmt.Errorf("expectation %s: must_not[%d] (%s) needs kind and name", file, i, e.Key())
		}
	}
	return exp, nil
}

// Check compares a diagnosis with the expectation exactly: every expected
// finding is reported once with its cause and fix kind and some evidence,
// nothing else is reported, and no must_not answer is given.
func (exp Expectation) Check(tb testing.TB, rep *drift.Report) {
	tb.Helper()
	left := append([]drift.Finding(nil), rep.Findings...)
	var missing []Entry
	// Exact matches first, so that two findings at one key (two
	// namespaces, say) pair with the right entries.
	for _, e := range exp.Findings {
		if i := match(left, e, true); i >= 0 {
			left = append(left[:i], left[i+1:]...)
		} else {
			missing = append(missing, e)
		}
	}
	for _, e := range missing {
		i := match(left, e, false)
		if i < 0 {
			tb.Errorf("missing finding %s (%s, fix %s)", e.Key(), e.Cause, e.Remediation)
			continue
		}
		f := left[i]
		left = append(left[:i], left[i+1:]...)
		if string(f.Cause) != e.Cause {
			tb.Errorf("%s: cause %s, want %s; evidence: %q", e.Key(), f.Cause, e.Cause, f.Evidence)
		}
		if string(f.Remediation.Kind) != e.Remediation {
			tb.Errorf("%s: fix %s, want %s (%s)", e.Key(), f.Remediation.Kind, e.Remediation, f.Remediation.Reason)
		}
	}
	sort.Slice(left, func(i, j int) bool { return FindingKey(left[i]) < FindingKey(left[j]) })
	for _, f := range left {
		tb.Errorf("unexpected finding %s: %s, fix %s; evidence %q", FindingKey(f), f.Cause, f.Remediation.Kind, f.Evidence)
	}
	for _, f := range rep.Findings {
		if len(f.Evidence) == 0 {
			tb.Errorf("%s: no evidence", FindingKey(f))
		}
		for _, m := range exp.MustNot {
			if m.ViolatedBy(f) {
				tb.Errorf("must_not answer given: %s %s (%s)", m.Key(), f.Cause, m.Why)
			}
		}
	}
}

// match returns the index of a finding at e's resource and path (with e's
// cause and fix kind too when exact), or -1.
func match(fs []drift.Finding, e Entry, exact bool) int {
	for i, f := range fs {
		if FindingKey(f) != e.Key() {
			continue
		}
		if !exact || (string(f.Cause) == e.Cause && string(f.Remediation.Kind) == e.Remediation) {
			return i
		}
	}
	return -1
}

// Snapshots lists the snapshot files with extension ext (".yaml" or
// ".json") in a folder of the module (a slash-separated path such as
// "testdata/cases"), leaving out the .expected.yaml beside them. An
// expectation with no snapshot beside it fails the test, so a case renamed or
// deleted by mistake is noticed.
func Snapshots(tb testing.TB, dir, ext string) []string {
	tb.Helper()
	return snapshotsIn(tb, Path(dir), ext)
}

func snapshotsIn(tb testing.TB, dir, ext string) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".expected.yaml") {
			out = append(out, f)
		}
	}
	expected, err := filepath.Glob(filepath.Join(dir, "*.expected.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range expected {
		if _, err := os.Stat(strings.TrimSuffix(e, ".expected.yaml") + ext); err != nil {
			tb.Errorf("%s has no snapshot %s beside it", e, strings.TrimSuffix(filepath.Base(e), ".expected.yaml")+ext)
		}
	}
	return out
}

// RequireSharedFixtures is the environment variable that, set to 1, makes a
// missing ../shared/fixtures a test failure instead of a skip. CI sets it
// (.ci/run), so the public fixtures are always checked there.
const RequireSharedFixtures = "DRIFTFIX_REQUIRE_SHARED_FIXTURES"

// SharedFixtures lists the public fixtures in ../shared/fixtures beside the
// repository root, for a test that checks nothing else. When there are none
// the test skips, naming the folder and how to get it; where
// RequireSharedFixtures is 1 it fails instead.
func SharedFixtures(tb testing.TB) []string {
	tb.Helper()
	return fixturesIn(tb, sharedDir(), false)
}

// SharedFixturesIfPresent lists the public fixtures for a test that also
// checks the corpora inside the module: when there are none it logs so and
// returns none, and the test goes on with the corpora; where
// RequireSharedFixtures is 1 it fails instead.
func SharedFixturesIfPresent(tb testing.TB) []string {
	tb.Helper()
	return fixturesIn(tb, sharedDir(), true)
}

func sharedDir() string {
	return filepath.Clean(filepath.Join(Root(), "..", "shared", "fixtures"))
}

func fixturesIn(tb testing.TB, dir string, optional bool) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "[0-9]*.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".expected.yaml") {
			out = append(out, f)
		}
	}
	if len(out) > 0 {
		return out
	}
	msg := fmt.Sprintf("no public fixtures (NN-name.yaml with NN-name.expected.yaml) in %s: put the project's shared folder, "+
		"which holds fixtures/, beside the repository root as ../shared to check them", dir)
	switch {
	case os.Getenv(RequireSharedFixtures) == "1":
		tb.Fatalf("%s (%s=1 requires them)", msg, RequireSharedFixtures)
	case optional:
		tb.Logf("%s; checked the corpora inside the module only", msg)
		return nil
	}
	tb.Skipf("%s; skipped (%s=1 makes this a failure)", msg, RequireSharedFixtures)
	return nil
}
