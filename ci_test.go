package driftfix_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCIRunsArgoCDBinaryTests keeps the tests that need the argocd binary
// running somewhere: they skip in `go test ./...` without one, so .ci/run
// must run each of them after the e2e stack build, with the stack's binary
// and DRIFTFIX_REQUIRE_ARGOCD_BIN=1 (a skip there is a failure).
func TestCIRunsArgoCDBinaryTests(t *testing.T) {
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	script := string(ci)
	build := strings.Index(script, "e2e/stack/build.sh\n")
	step := strings.Index(script, "DRIFTFIX_REQUIRE_ARGOCD_BIN=1")
	if build < 0 || step < build {
		t.Fatal(".ci/run does not run the argocd binary tests with DRIFTFIX_REQUIRE_ARGOCD_BIN=1 after e2e/stack/build.sh")
	}
	runFlag := regexp.MustCompile(`-run '([^']+)'`).FindStringSubmatch(script[step:])
	if runFlag == nil {
		t.Fatal(".ci/run's argocd binary step names no -run pattern")
	}
	run := regexp.MustCompile(runFlag[1])
	testFunc := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	found := 0
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "oracle" || d.Name() == "stack" || strings.HasPrefix(d.Name(), ".")) && p != "." {
			return filepath.SkipDir // other modules, and the stack's tools
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		src := string(b)
		for _, at := range regexp.MustCompile(`Getenv\("DRIFTFIX_ARGOCD_BIN"\)`).FindAllStringIndex(src, -1) {
			fns := testFunc.FindAllStringSubmatch(src[:at[0]], -1)
			if len(fns) == 0 {
				continue
			}
			name := fns[len(fns)-1][1]
			found++
			if !run.MatchString(name) {
				t.Errorf("%s: %s needs the argocd binary and .ci/run's -run '%s' after the stack build leaves it out", p, name, runFlag[1])
			}
			if !strings.Contains(script[step:], "./"+filepath.Dir(p)) {
				t.Errorf("%s: .ci/run's argocd binary step does not test package ./%s", p, filepath.Dir(p))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("no test reads DRIFTFIX_ARGOCD_BIN: the check found nothing to check")
	}
}
