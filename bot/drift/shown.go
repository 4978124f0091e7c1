package drift

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// This file decides which live values outputs may show. A value another
// writer put in the cluster may carry a secret (a webhook fills a password
// into a placeholder, a person pastes a token): outputs (evidence, PR bodies,
// checks, dashboards, digests, the CLI) show it only where it cannot, and
// otherwise its length and hash, the way Secret data is masked.

// showableTokens are the last path steps whose values are shown whatever
// they hold: counts, resource amounts, pull policies, images (a reference
// names what runs and carries no credential; reviewers must see it), CA
// bundles (certificates are public).
var showableTokens = map[string]bool{
	"replicas": true, "minReplicas": true, "maxReplicas": true, "generation": true, "revisionHistoryLimit": true,
	"imagePullPolicy": true, "image": true, "progressDeadlineSeconds": true, "terminationGracePeriodSeconds": true,
	"caBundle": true, // a CA's certificates are public
}

// rbacFields are the top-level fields of RBAC kinds (no other kind has them
// at the top).
var rbacFields = map[string]bool{"rules": true, "aggregationRule": true, "subjects": true, "roleRef": true}

// LiveShowable reports whether a live value may be shown as it is: it is a
// number, a boolean, null, a quantity or a duration; it is Git's own value
// in another form; or it is at a path whose values carry no secret (a
// replica count, resources, an image).
func LiveShowable(p Pointer, git any, inGit bool, live any) bool {
	if inGit && (Equal(git, live) || semanticSame(git, live)) {
		return true
	}
	for _, t := range p {
		if t == "resources" {
			return true
		}
	}
	if len(p) > 0 && rbacFields[p[0]] {
		return true // RBAC grants: verbs, resources and subjects, which reviewers must see
	}
	if len(p) == 3 && p[0] == "metadata" && p[1] == "annotations" && p[2] == "argocd.argoproj.io/tracking-id" {
		return true // Argo CD's own tracking id: application, group, kind, namespace and name
	}
	if len(p) == 3 && p[0] == "metadata" && p[1] == "labels" || len(p) == 5 && p[2] == "metadata" && p[3] == "labels" {
		return true // label values identify objects: 63 characters of a restricted set, listed by anyone who can list the kind
	}
	if len(p) > 0 && showableTokens[p[len(p)-1]] {
		return true
	}
	return harmless(live, 0)
}

func semanticSame(a, b any) bool {
	_, ok := SemanticallyEqual(a, b)
	return ok
}

// harmless reports whether every leaf of v is a value that cannot carry a
// secret.
func harmless(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case nil, bool, int, int64, float64, json.Number:
		return true
	case string:
		if x == "true" || x == "false" {
			return true
		}
		if _, ok := ParseQuantity(x); ok {
			return true
		}
		_, err := time.ParseDuration(x)
		return err == nil
	case map[string]any:
		for _, e := range x {
			if !harmless(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !harmless(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// MaskValue renders a value outputs do not show: its kind, its length and
// the first 12 hex digits of its SHA-256, so a person who knows a value can
// check it.
func MaskValue(v any) string {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	what := "a value"
	switch x := v.(type) {
	case string:
		what = fmt.Sprintf("a %d-byte string", len(x))
		sum = sha256.Sum256([]byte(x))
	case map[string]any:
		what = fmt.Sprintf("an object of %d keys", len(x))
	case []any:
		what = fmt.Sprintf("a list of %d items", len(x))
	}
	return fmt.Sprintf("(not shown: %s another writer put there, sha256 %s)", what, hex.EncodeToString(sum[:6]))
}

// ShownLive returns the finding's live value as outputs may show it: the
// value, or MaskValue's text where it could carry a secret. A normalized
// value is the API server's own (Git's value in its stored form, a default
// of the type or the CRD schema, an allocation), written by no other writer.
func (f *Finding) ShownLive() any {
	if !f.InLive || f.Cause == CauseNormalized || LiveShowable(f.Path, f.Git, f.InGit, f.Live) {
		return f.Live
	}
	return MaskValue(f.Live)
}
