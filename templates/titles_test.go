package templates

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestConventionalTitle: every title these templates write in the plain
// style has a conventional form: fix(app) for a fix, chore(driftfix) for
// the rest, within 100 characters, on one line, the subject kept.
func TestConventionalTitle(t *testing.T) {
	fix := pr
	long := pr
	long.App = strings.Repeat("a", 63)
	long.Action = "Stop declaring {paths} of {resource}, " + strings.Repeat("and more ", 20)
	policyApp := pr
	policyApp.App = "policy"
	for _, tc := range []struct {
		name, plain, want string
	}{
		{"fix", PRTitle(fix), "fix(storefront-web): Stop declaring /spec/replicas of Deployment storefront/web"},
		{"an application named policy", PRTitle(policyApp), "fix(policy): Stop declaring /spec/replicas of Deployment storefront/web"},
		{"ignore rules", IgnorePRTitle(IgnorePRView{Instance: "main", File: "argocd/cm.yaml", Removed: []IgnoreLine{{}}, StaleAfterDays: 14}),
			"chore(driftfix): remove 1 ignore rule that hid nothing for 14 days in argocd/cm.yaml"},
		{"platform", PlatformPRTitle(PlatformPRView{Instance: "main", Source: "istio-sidecar-injector", Apps: make([]PlatformAppView, 3)}),
			"chore(driftfix): ignore what istio-sidecar-injector writes, for 3 applications"},
		{"writers", WriterPRTitle(WriterPRView{Is: "controller"}), "chore(driftfix): name a field manager a controller in writers"},
		{"not driftfix's", "Update README", "Update README"},
		{"no subject", "driftfix(x): ", "driftfix(x): "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ConventionalTitle(tc.plain); got != tc.want {
				t.Errorf("ConventionalTitle(%q) = %q, want %q", tc.plain, got, tc.want)
			}
		})
	}
	got := ConventionalTitle(PRTitle(long))
	if n := utf8.RuneCountInString(got); n > MaxConventionalTitle || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "fix("+strings.Repeat("a", 39)+"…): Stop declaring") {
		t.Errorf("a long title is %d characters: %q", n, got)
	}
	// hostile values stay as inert as the plain title made them
	for _, h := range hostile {
		v := pr
		v.Findings = []FindingView{{Resource: drift.Ref{Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}, Path: "/data/" + h}}
		got := ConventionalTitle(PRTitle(v))
		if strings.ContainsAny(got, "\n\r") {
			t.Errorf("%q: two lines: %q", h, got)
		}
		checkUnlinked(t, h, got)
	}
}
