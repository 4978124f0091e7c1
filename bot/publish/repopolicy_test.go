package publish

import (
	"testing"
)

// TestConventionalHistory: a history is conventional when at least half of
// its subjects, and at least three, are Conventional Commits headers of a
// known type; driftfix's own plain titles, merges and git's reverts do
// not count either way.
func TestConventionalHistory(t *testing.T) {
	for _, tc := range []struct {
		name     string
		subjects []string
		want     bool
	}{
		{"all conventional", []string{"feat: a", "fix(ui): b", "chore(deps)!: c"}, true},
		{"half", []string{"feat: a", "fix: b", "docs: c", "Add d", "Fix e", "bump f"}, true},
		{"under half", []string{"feat: a", "fix: b", "docs: c", "Add d", "Fix e", "bump f", "more g"}, false},
		{"too few", []string{"feat: a", "fix: b"}, false},
		{"empty", nil, false},
		{"unknown types do not count", []string{"wip: a", "update: b", "release: c"}, false},
		{"a type without its colon and space", []string{"feat:a", "fix(x) b", "chore()!: c"}, false},
		{"upper case types count", []string{"Feat: a", "FIX: b", "Docs: c"}, true},
		{"driftfix's own and merges left out", []string{"driftfix(shop): x", "driftfix(cart): y", "Merge pull request #3 from a/b", "feat: a", "fix: b", "ci: c", `Revert "feat: a"`}, true},
	} {
		if got := ConventionalHistory(tc.subjects); got != tc.want {
			t.Errorf("%s: ConventionalHistory(%q) = %v, want %v", tc.name, tc.subjects, got, tc.want)
		}
	}
}

// TestSigned: the sign-off joins the message's trailer block when its last
// paragraph is one, and starts one otherwise.
func TestSigned(t *testing.T) {
	const so = "Signed-off-by: driftfix[bot] <1+driftfix[bot]@users.noreply.github.com>"
	for _, tc := range []struct{ in, want string }{
		{"fix(shop): x\n\nPlanned.\n\ndriftfix-fix: abc", "fix(shop): x\n\nPlanned.\n\ndriftfix-fix: abc\n" + so + "\n"},
		{"fix(shop): x\n\ndriftfix-fix: abc\n", "fix(shop): x\n\ndriftfix-fix: abc\n" + so + "\n"},
		{"fix(shop): x\n\nPlanned and verified.", "fix(shop): x\n\nPlanned and verified.\n\n" + so + "\n"},
		{"fix: only a subject", "fix: only a subject\n\n" + so + "\n"},
		{"fix: a: b", "fix: a: b\n\n" + so + "\n"}, // a subject alone is no trailer block
	} {
		if got := signed(tc.in, so); got != tc.want {
			t.Errorf("signed(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
