package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigValidateRepoFile: `config validate --repo-file` checks a
// repository's own file, each problem with the file, line and key; with the
// central policy too, against what its repoFile.allow lets repositories set.
func TestConfigValidateRepoFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	good := write("good.yaml", "labels: [gitops]\nreviewers: [alice]\ntitleStyle: plain\n")
	bad := write("bad.yaml", "labels: [gitops]\nschedule: \"@daily\"\ntitleStyle: shouting\n")
	policy := write("driftfix.yaml", exampleBase+"policy:\n  repoFile:\n    allow: [labels]\n")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		want   []string // each in stdout or stderr
		unwant string
	}{
		{name: "a valid file", args: []string{"--repo-file", good}, code: exitClean, want: []string{good + ": valid"}},
		{name: "problems with line and key", args: []string{"--repo-file", bad}, code: exitUsage,
			want: []string{bad + ":2: schedule: a repository cannot decide it", bad + ":3: titleStyle:", "2 problems in " + bad}},
		{name: "against the policy's allow list", args: []string{policy, "--repo-file", good}, code: exitUsage,
			want: []string{policy + ": valid", good + ":2: reviewers: the central policy does not let repositories set it", good + ":3: titleStyle:"}, unwant: good + ": valid"},
		{name: "a policy file as a repository's file", args: []string{"--repo-file", policy}, code: exitUsage, want: []string{policy + ":1: argocd: unknown key (a repository may set: labels", policy + ":5: policy: a repository cannot decide it"}},
		{name: "nothing named", code: exitUsage, want: []string{"name a policy file", "--repo-file .github/driftfix.yaml"}},
		{name: "a missing file", args: []string{"--repo-file", filepath.Join(dir, "none.yaml")}, code: exitUsage, want: []string{"none.yaml: no such file"}},
		{name: "a directory", args: []string{"--repo-file", dir}, code: exitUsage, want: []string{"not a regular file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runCLI(append([]string{"config", "validate"}, tc.args...)...)
			all := out + stderr
			if code != tc.code {
				t.Errorf("exit %d, want %d:\n%s", code, tc.code, all)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
			if tc.unwant != "" && strings.Contains(all, tc.unwant) {
				t.Errorf("output says %q:\n%s", tc.unwant, all)
			}
		})
	}
}
