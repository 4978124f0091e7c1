package remediations

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// noNewline is what git prints after a last line that has no newline.
const noNewline = "\n\\ No newline at end of file\n"

// UnifiedDiff renders the change from before to after as a unified diff with
// three lines of context, as git shows it. It returns "" when nothing
// changed. The lines are matched by go-difflib, whose memory grows with the
// number of lines, not with their product.
func UnifiedDiff(file string, before, after []byte) string {
	if string(before) == string(after) {
		return ""
	}
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(string(before)), B: lines(string(after)),
		FromFile: "a/" + file, ToFile: "b/" + file, Context: 3,
	})
	if err != nil { // writing to a strings.Builder does not fail
		panic(err)
	}
	return out
}

// lines splits s after each newline. A last line without one carries git's
// marker, so it differs from the same text with a newline and prints as git
// prints it.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		return l[:len(l)-1]
	}
	l[len(l)-1] += noNewline
	return l
}
