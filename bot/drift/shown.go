package drift

import (
	"fmt"
)

// This file decides which live values outputs may show, by the value's
// origin and never by its look. A value another writer put in the cluster
// may carry a secret (a webhook fills a password into a placeholder, a
// person pastes a token, a string "3" can be a PIN): outputs (evidence, PR
// bodies, checks, dashboards, digests, the CLI) show it only where it
// cannot, and otherwise its length and hash, the way Secret data is masked.

// LiveShown reports whether a live value may be shown as it is. It may when
// it is Git's own value, as written or in another form derived from it (the
// stored form of Git's quantity, "1" for Git's 1); or when the kind's schema
// (the compiled-in type of a built-in kind, the CRD's OpenAPI schema)
// types the path as an integer, number or boolean (schemaScalar, set by the
// diff from the schema alone) and the value is one: such a field holds no
// text. Nothing else is shown, whatever the string looks like.
func LiveShown(schemaScalar bool, git any, inGit bool, live any) bool {
	if inGit && (Equal(git, live) || semanticSame(git, live)) {
		return true
	}
	if !schemaScalar {
		return false
	}
	if _, ok := live.(bool); ok {
		return true
	}
	_, ok := Number(live)
	return ok
}

func semanticSame(a, b any) bool {
	_, ok := SemanticallyEqual(a, b)
	return ok
}

// MaskValue renders a value outputs do not show: its kind and length only.
// No digest of it either: a short value (a PIN, a flag, a label) is found
// again from any hash of it by trying the few values it can be.
func MaskValue(v any) string {
	what := "a value"
	switch x := v.(type) {
	case string:
		what = fmt.Sprintf("a %d-byte string", len(x))
	case map[string]any:
		what = fmt.Sprintf("an object of %d keys", len(x))
	case []any:
		what = fmt.Sprintf("a list of %d items", len(x))
	}
	return fmt.Sprintf("(not shown: %s another writer put there)", what)
}

// ShownLive returns the finding's live value as outputs may show it: the
// value where LiveShown allows it, else MaskValue's text. A normalized
// value is the API server's own (Git's value in its stored form, a default
// of the type or the CRD schema, an allocation), written by no other writer.
// Every output that shows a finding's live value goes through it.
func (f *Finding) ShownLive() any {
	if !f.InLive || f.Cause == CauseNormalized || LiveShown(f.SchemaScalar, f.Git, f.InGit, f.Live) {
		return f.Live
	}
	return MaskValue(f.Live)
}
