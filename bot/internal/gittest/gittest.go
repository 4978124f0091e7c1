// Package gittest runs the git command for tests that build real
// repositories.
package gittest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Identity is the author and committer of every test commit.
var Identity = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}

// Run runs git with args in dir, as Identity and with the extra environment
// given, and returns its output trimmed; a failure stops the test with
// git's output.
func Run(tb testing.TB, dir string, env []string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), Identity...), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
