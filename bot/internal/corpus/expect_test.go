package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// recorder is a testing.TB that keeps what a helper reports instead of
// failing the test that runs it.
type recorder struct {
	testing.TB
	errs    []string
	fatal   bool
	skipped string
	logs    []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// record runs f on a recorder in its own goroutine, so Fatal and Skip end
// only f.
func record(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func finding(ns, kind, name, path string, cause drift.Cause, fix drift.FixKind) drift.Finding {
	return drift.Finding{
		Resource:    drift.Ref{Kind: kind, Namespace: ns, Name: name},
		Path:        drift.MustPointer(path),
		Cause:       cause,
		Evidence:    []drift.Evidence{drift.Say(drift.EvidenceGit, "because")},
		Remediation: drift.Remediation{Kind: fix},
	}
}

func TestCheck(t *testing.T) {
	hpa := finding("shop", "Deployment", "web", "/spec/replicas", drift.CauseHPAReplicas, "remove-field")
	manual := finding("shop", "ConfigMap", "cfg", "/data/A", drift.CauseManualChange, drift.FixNone)
	exp := Expectation{Findings: []Entry{
		{Kind: "Deployment", Name: "web", Path: "/spec/replicas", Cause: "hpa-replicas", Remediation: "remove-field"},
		{Kind: "ConfigMap", Name: "cfg", Path: "/data/A", Cause: "manual-change", Remediation: "none"},
	}, MustNot: []Entry{
		{Kind: "Deployment", Name: "web", Path: "/spec/replicas", Cause: "controller-write"},
		{Kind: "Deployment", Name: "web", Path: "/status"},
	}}
	noEvidence := manual
	noEvidence.Evidence = nil
	// Two findings at one kind, name and path (two namespaces) pair with
	// the entries whatever the order.
	twin := finding("other", "Deployment", "web", "/spec/replicas", drift.CauseManualChange, drift.FixNone)
	twins := Expectation{Findings: []Entry{
		{Kind: "Deployment", Name: "web", Path: "/spec/replicas", Cause: "manual-change", Remediation: "none"},
		{Kind: "Deployment", Name: "web", Path: "/spec/replicas", Cause: "hpa-replicas", Remediation: "remove-field"},
	}}
	for _, tc := range []struct {
		name     string
		exp      Expectation
		findings []drift.Finding
		want     []string // one substring per error, in order
	}{
		{"exact", exp, []drift.Finding{hpa, manual}, nil},
		{"order does not matter", exp, []drift.Finding{manual, hpa}, nil},
		{"missing", exp, []drift.Finding{hpa}, []string{"missing finding ConfigMap/cfg/data/A"}},
		{"unexpected", exp, []drift.Finding{hpa, manual, finding("shop", "Service", "web", "/spec/ports", drift.CauseUnknown, drift.FixNone)},
			[]string{"unexpected finding Service/web/spec/ports"}},
		{"wrong cause", exp, []drift.Finding{finding("shop", "Deployment", "web", "/spec/replicas", drift.CauseManualChange, "remove-field"), manual},
			[]string{"cause manual-change, want hpa-replicas"}},
		{"wrong fix", exp, []drift.Finding{finding("shop", "Deployment", "web", "/spec/replicas", drift.CauseHPAReplicas, drift.FixNone), manual},
			[]string{"fix none, want remove-field"}},
		{"must_not cause", Expectation{MustNot: exp.MustNot}, []drift.Finding{finding("shop", "Deployment", "web", "/spec/replicas", drift.CauseControllerWrite, drift.FixNone)},
			[]string{"unexpected finding", "must_not answer given: Deployment/web/spec/replicas controller-write"}},
		{"must_not any cause", exp, []drift.Finding{hpa, manual, finding("shop", "Deployment", "web", "/status", drift.CauseUnknown, drift.FixNone)},
			[]string{"unexpected finding Deployment/web/status", "must_not answer given: Deployment/web/status"}},
		{"no evidence", exp, []drift.Finding{hpa, noEvidence}, []string{"ConfigMap/cfg/data/A: no evidence"}},
		{"twins", twins, []drift.Finding{hpa, twin}, nil},
		{"twin missing", twins, []drift.Finding{hpa}, []string{"missing finding Deployment/web/spec/replicas (manual-change"}},
		{"nothing expected", Expectation{}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := record(t, func(tb testing.TB) { tc.exp.Check(tb, &drift.Report{Findings: tc.findings}) })
			if len(r.errs) != len(tc.want) {
				t.Fatalf("errors %q, want %d like %q", r.errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(r.errs[i], w) {
					t.Errorf("error %d %q, want it to say %q", i, r.errs[i], w)
				}
			}
		})
	}
}

func TestExpectIsStrict(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, text, want string }{
		{"ok", "source: s\nsummary: x\ntags: [mixed]\nfindings:\n  - {kind: A, name: b, path: /c, cause: unknown, remediation: none}\nmust_not:\n  - {kind: A, name: b, path: /d, why: w}\n", ""},
		{"empty path is the whole resource", "findings:\n  - {kind: A, name: b, path: \"\", cause: unknown, remediation: none}\n", ""},
		{"misspelt key", "findings:\n  - {kind: A, name: b, path: /c, cause: unknown, remedy: none}\n", "field remedy not found"},
		{"no fix kind", "findings:\n  - {kind: A, name: b, path: /c, cause: unknown}\n", "needs kind, name, cause and remediation"},
		{"must_not without name", "must_not:\n  - {kind: A, path: /c}\n", "needs kind and name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(ExpectationFile(snap), []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			r := record(t, func(tb testing.TB) { Expect(tb, snap) })
			switch {
			case tc.want == "" && r.fatal:
				t.Errorf("refused: %q", r.errs)
			case tc.want != "" && (!r.fatal || !strings.Contains(strings.Join(r.errs, " "), tc.want)):
				t.Errorf("errors %q, want one saying %q", r.errs, tc.want)
			}
		})
	}
}

func TestSnapshotsNoticesOrphanExpectation(t *testing.T) {
	r := record(t, func(tb testing.TB) {
		if n := len(Snapshots(tb, "testdata/cases", ".yaml")); n == 0 {
			tb.Errorf("no cases")
		}
	})
	if len(r.errs) != 0 {
		t.Fatalf("the cases: %q", r.errs)
	}
	dir := t.TempDir()
	for _, f := range []string{"01-a.yaml", "01-a.expected.yaml", "02-b.expected.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	r = record(t, func(tb testing.TB) { got = snapshotsIn(tb, dir, ".yaml") })
	if len(got) != 1 || filepath.Base(got[0]) != "01-a.yaml" {
		t.Errorf("snapshots %q, want 01-a.yaml alone", got)
	}
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "02-b.expected.yaml has no snapshot 02-b.yaml") {
		t.Errorf("errors %q, want one about 02-b", r.errs)
	}
}

func TestSharedFixturesMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "shared", "fixtures")
	for _, tc := range []struct {
		name     string
		require  string
		optional bool
		want     string // "skip", "log" or "fail"
	}{
		{"a fresh clone skips saying why", "", false, "skip"},
		{"a fresh clone goes on with the corpora", "", true, "log"},
		{"required fails", "1", false, "fail"},
		{"required fails where the fixtures are optional too", "1", true, "fail"},
		{"only 1 requires", "true", false, "skip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(RequireSharedFixtures, tc.require)
			var got []string
			r := record(t, func(tb testing.TB) { got = fixturesIn(tb, missing, tc.optional) })
			msg := strings.Join(append(append(r.errs, r.skipped), r.logs...), " ")
			if !strings.Contains(msg, missing) || !strings.Contains(msg, "../shared") {
				t.Errorf("said %q: want the folder %s and ../shared named", msg, missing)
			}
			switch tc.want {
			case "skip":
				if r.skipped == "" || r.fatal || !strings.Contains(r.skipped, RequireSharedFixtures) {
					t.Errorf("skipped %q, errors %q: want a skip naming %s", r.skipped, r.errs, RequireSharedFixtures)
				}
			case "log":
				if r.skipped != "" || r.fatal || len(r.logs) != 1 || got != nil {
					t.Errorf("skipped %q, errors %q, logs %q, files %q: want one log line and no files", r.skipped, r.errs, r.logs, got)
				}
			case "fail":
				if !r.fatal || r.skipped != "" || !strings.Contains(msg, RequireSharedFixtures) {
					t.Errorf("errors %q, skipped %q: want a failure naming %s", r.errs, r.skipped, RequireSharedFixtures)
				}
			}
		})
	}
	present := t.TempDir()
	for _, f := range []string{"01-a.yaml", "01-a.expected.yaml"} {
		if err := os.WriteFile(filepath.Join(present, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(RequireSharedFixtures, "1")
	var got []string
	r := record(t, func(tb testing.TB) { got = fixturesIn(tb, present, false) })
	if len(got) != 1 || filepath.Base(got[0]) != "01-a.yaml" || r.fatal || r.skipped != "" {
		t.Errorf("files %q, errors %q, skipped %q: want 01-a.yaml alone", got, r.errs, r.skipped)
	}
}
