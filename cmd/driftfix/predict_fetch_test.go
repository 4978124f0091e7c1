package main

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestFetchSpecs: each form of a revision a CI gives is fetched as the
// narrowest ref (a branch into its remote-tracking ref, a tag, a commit by
// hash), and what is not a name never reaches git.
func TestFetchSpecs(t *testing.T) {
	hash := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		name string
		want []string
		err  string
	}{
		{hash, []string{hash}, ""},
		{"main", []string{"+refs/heads/main:refs/remotes/origin/main", "+refs/tags/main:refs/tags/main"}, ""},
		{"origin/main", []string{"+refs/heads/main:refs/remotes/origin/main"}, ""},
		{"origin/release/1.x", []string{"+refs/heads/release/1.x:refs/remotes/origin/release/1.x"}, ""},
		{"refs/heads/main", []string{"+refs/heads/main:refs/remotes/origin/main"}, ""},
		{"refs/remotes/origin/main", []string{"+refs/heads/main:refs/remotes/origin/main"}, ""},
		{"refs/tags/v1", []string{"+refs/tags/v1:refs/tags/v1"}, ""},
		{"refs/pull/7/head", []string{"+refs/pull/7/head:refs/pull/7/head"}, ""},
		{"refs/remotes/upstream/main", nil, "give --remote"},
		{hash[:12], nil, "give the whole commit hash"},
		{"HEAD", nil, ""},
		{"--upload-pack=x", nil, ""},
		{"main:refs/heads/x", nil, ""},
		{"a b", nil, ""},
		{"../x", nil, ""},
		{"x.lock", nil, ""},
		{"a@{1}", nil, ""},
		{"", nil, ""},
	} {
		got, err := fetchSpecs(tc.name, "origin")
		switch {
		case tc.want != nil && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%q: %q, %v; want %q", tc.name, got, err, tc.want)
		case tc.want == nil && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %q, %v; want an error %q", tc.name, got, err, tc.err)
		}
	}
	if _, err := fetchSpecs("main", "-x"); err == nil {
		t.Error("a remote named as an option is taken")
	}
}

// FuzzFetchSpecs: whatever the revision and remote, what reaches git is a
// commit hash or a refspec from refs/ into refs/ with no option, space,
// control character, .. or second colon; and splitRevision never panics.
func FuzzFetchSpecs(f *testing.F) {
	for _, s := range []string{"main", "origin/main", "refs/tags/v1", "HEAD~2", "--upload-pack=x", "a:b", strings.Repeat("0", 40), "x^2~3", "@~1", "a\x00b"} {
		f.Add(s, "origin")
	}
	f.Fuzz(func(t *testing.T, name, remote string) {
		splitRevision(name)
		specs, err := fetchSpecs(name, remote)
		if err != nil {
			return
		}
		for _, s := range specs {
			if len(s) == 40 && !strings.Contains(s, ":") {
				continue
			}
			src, dst, ok := strings.Cut(strings.TrimPrefix(s, "+"), ":")
			if !ok || strings.Contains(dst, ":") || !strings.HasPrefix(src, "refs/") || !strings.HasPrefix(dst, "refs/") ||
				strings.Contains(s, "..") || strings.HasPrefix(s, "-") || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
				t.Fatalf("fetchSpecs(%q, %q) gives %q", name, remote, s)
			}
		}
	})
}

// TestSplitRevision: a name and its ancestry moves, as Git reads them.
func TestSplitRevision(t *testing.T) {
	for _, tc := range []struct {
		rev   string
		name  string
		moves []int
		ok    bool
	}{
		{"main", "main", nil, true},
		{"HEAD^", "HEAD", []int{0}, true},
		{"HEAD~3", "HEAD", []int{0, 0, 0}, true},
		{"HEAD^2~1", "HEAD", []int{1, 0}, true},
		{"@~1", "HEAD", []int{0}, true},
		{"x^0", "x", nil, true},
		{"main@{1}~1", "", nil, false},
		{"HEAD:file", "HEAD:file", nil, true},
		{"HEAD^{tree}", "", nil, false},
		{"~1", "", nil, false},
	} {
		name, moves, ok := splitRevision(tc.rev)
		if name != tc.name || !slices.Equal(moves, tc.moves) || ok != tc.ok {
			t.Errorf("%q: %q %v %v; want %q %v %v", tc.rev, name, moves, ok, tc.name, tc.moves, tc.ok)
		}
	}
}
