package templates

import (
	"strings"
	"unicode/utf8"
)

// MaxConventionalTitle is the longest title ConventionalTitle writes: the
// header length commitlint's conventional configuration enforces.
const MaxConventionalTitle = 100

// maxScope is the longest scope (an application's name) a conventional
// title keeps whole, leaving room for the subject.
const maxScope = 40

// ConventionalTitle rewrites a title these templates wrote in the plain
// style, "driftfix(scope): subject", as a Conventional Commits header: a
// fix pull request's becomes "fix(app): subject", every other one (ignore
// rules, argocd-cm, the policy file) "chore(driftfix): subject". The result
// is at most MaxConventionalTitle characters, the subject cut with "…"; a
// title in no known form is returned as it is. The subject was already
// made inert when the plain title was written.
func ConventionalTitle(plain string) string {
	rest, ok := strings.CutPrefix(plain, "driftfix(")
	if !ok {
		return plain
	}
	scope, subject, ok := strings.Cut(rest, "): ")
	if !ok || scope == "" || subject == "" {
		return plain
	}
	// an application's name has no space, and the writers title alone
	// names a field manager under the scope policy
	head := "fix(" + shorten(scope, maxScope) + "): "
	if strings.HasPrefix(scope, "ignores ") || strings.HasPrefix(scope, "platform ") || (scope == "policy" && strings.HasPrefix(subject, "name a field manager ")) {
		head = "chore(driftfix): "
	}
	return head + shorten(subject, MaxConventionalTitle-utf8.RuneCountInString(head))
}

// shorten shortens s to at most n characters, ending it with "…" when it was
// longer.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
