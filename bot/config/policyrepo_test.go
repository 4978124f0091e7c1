package config

import (
	"strings"
	"testing"
)

// TestPolicyRepo: policyRepo names the repository and the file this policy
// is kept in, and is refused, with its line, when either is missing or the
// file or branch could not be one.
func TestPolicyRepo(t *testing.T) {
	const head = "argocd: [{name: main, server: https://argocd.example.com, tokenFile: /t}]\n"
	for _, tc := range []struct {
		name, yaml string
		want       PolicyRepo
		err        string
	}{
		{"not set", "", PolicyRepo{}, ""},
		{"url, file and branch", "policyRepo: {url: https://github.com/acme/platform.git, file: deploy/driftfix.yaml, branch: live}\n",
			PolicyRepo{URL: "https://github.com/acme/platform.git", File: "deploy/driftfix.yaml", Branch: "live"}, ""},
		{"the file is required", "policyRepo: {url: https://github.com/acme/platform.git}\n", PolicyRepo{}, "line 2: policyRepo: needs url and file"},
		{"a file outside the repository", "policyRepo: {url: https://github.com/acme/platform.git, file: ../driftfix.yaml}\n", PolicyRepo{}, "must be a clean path"},
		{"not a URL", "policyRepo: {url: acme/platform, file: driftfix.yaml}\n", PolicyRepo{}, "must be an http(s) URL"},
		{"not a branch", "policyRepo: {url: https://github.com/acme/platform.git, file: driftfix.yaml, branch: '-x y'}\n", PolicyRepo{}, "is not a branch name"},
		{"an unknown key", "policyRepo: {url: https://github.com/acme/platform.git, file: driftfix.yaml, path: x}\n", PolicyRepo{}, "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(head + tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want an error with %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.PolicyRepo != tc.want || c.PolicyRepo.Set() != (tc.want.URL != "") {
				t.Errorf("got %+v, want %+v", c.PolicyRepo, tc.want)
			}
		})
	}
}
