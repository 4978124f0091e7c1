package templates

import (
	"regexp"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// The words of a pull request that are not its body's prose: the branch it
// is pushed to, and the marker its body ends with, by which the publisher
// finds it again from the Git host alone when the state database is lost.
// The cycle and the planners fill them with keys they make; nothing here
// reads a plan.

// KeyMarker ends a fix pull request's body with the fix's key and
// application (an AppKey).
func KeyMarker(key, appKey string) string {
	return "\n<!-- driftfix:key=" + key + " app=" + appKey + " -->\n"
}

// KeyMarkerRE reads the marker KeyMarker writes.
var KeyMarkerRE = regexp.MustCompile(`<!-- driftfix:key=([0-9a-f]+) app=(\S+) -->`)

// PlatformMarker ends a platform pull request's body, so it is told apart
// from a per-application fix; it never matches KeyMarkerRE.
func PlatformMarker(key string) string { return "\n<!-- driftfix:platform=" + key + " -->\n" }

// IgnoreMarker ends an ignore-rule pull request's body, so it is told apart
// from the other pull requests; it never matches KeyMarkerRE.
func IgnoreMarker(key string) string { return "\n<!-- driftfix:ignores=" + key + " -->\n" }

// WriterMarker ends a writers pull request's body.
func WriterMarker(key string) string { return "\n<!-- driftfix:writers=" + key + " -->\n" }

var branchUnsafe = regexp.MustCompile(`[^a-z0-9._-]+`)

// Branch names a fix's branch: prefix/<app>/<cause>-<key>, each part
// lower-cased with what Git or a reader would trip on made a dash.
func Branch(prefix, app string, cause drift.Cause, key string) string {
	clean := func(s string) string {
		return strings.Trim(branchUnsafe.ReplaceAllString(strings.ToLower(s), "-"), "-.")
	}
	return strings.TrimSuffix(prefix, "/") + "/" + clean(app) + "/" + clean(string(cause)) + "-" + key
}

// PlatformBranch is the branch of a platform fix.
func PlatformBranch(prefix, instance string, cause drift.Cause, key string) string {
	return Branch(prefix, "platform-"+instance, cause, key)
}

// IgnoreBranch is the branch of an ignore-rule pull request.
func IgnoreBranch(prefix, instance, key string) string {
	return Branch(prefix, "ignores-"+instance, "ignore-rules", key)
}

// WriterBranchPrefix is where the writers pull requests' branches are.
func WriterBranchPrefix(prefix string) string {
	return strings.TrimSuffix(prefix, "/") + "/policy-writers/"
}

// Shown is a value as a pull request or a check shows it: code, cut to a
// brief form, or "absent" when the side has none. It decides nothing about
// secrets: a live value comes here as drift.Finding.ShownLive gives it,
// already masked where another writer put it and the schema does not type
// the path as an integer, number or boolean.
func Shown(v any, present bool) string {
	if !present {
		return "absent"
	}
	return Code(drift.Brief(v, 80))
}

// ShownOf is a resource's value as Shown shows it, never a Secret's.
func ShownOf(ref drift.Ref, v any, present bool) string {
	if ref.Group == "" && ref.Kind == "Secret" && present {
		return "(Secret value not shown)"
	}
	return Shown(v, present)
}
