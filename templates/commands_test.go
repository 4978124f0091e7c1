package templates

import (
	"strings"
	"testing"
)

// withoutCommands is a body without its commands section, which it must
// hold once, as CommandsSection writes it: fixed text no value reaches, so
// the hostile-value checks look at the rest.
func withoutCommands(t *testing.T, body string, on CommandsFor) string {
	t.Helper()
	sec := CommandsSection(on)
	if n := strings.Count(body, sec); n != 1 {
		t.Fatalf("the body holds the commands section %d times, want once:\n%s", n, body)
	}
	return strings.Replace(body, sec, "", 1)
}

// TestCommandsSection: every pull request body driftfix writes ends with
// one collapsed section listing every command, each as a person types it;
// a body of a pull request that obeys none says so.
func TestCommandsSection(t *testing.T) {
	fix, err := PRBody(pr)
	if err != nil {
		t.Fatal(err)
	}
	platform, err := PlatformPRBody(PlatformPRView{Instance: "main", Cause: "webhook-mutation", Key: "resource.customizations.ignoreDifferences.all", File: "argocd-cm.yaml",
		Rule: "jsonPointers: [/x]", Diff: "+x\n", Fingerprint: "f"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body string
		on   CommandsFor
	}{
		{"fix", fix, FixPR},
		{"platform", platform, OtherPR},
		{"ignore rules", IgnorePRBody(IgnorePRView{Instance: "main", File: "cm.yaml", Removed: []IgnoreLine{{Holder: "argocd-cm", Key: "k", Stale: true}}, StaleAfterDays: 14, Fingerprint: "f"}), OtherPR},
		{"writers", WriterPRBody(WriterPRView{Manager: "m", Is: "person", File: "p.yaml", Fingerprint: "f"}), OtherPR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rest := withoutCommands(t, tc.body, tc.on)
			sec := CommandsSection(tc.on)
			if !strings.HasPrefix(sec, "<details>\n<summary>") || !strings.HasSuffix(sec, "</details>\n") {
				t.Errorf("the section is not one collapsed <details> block:\n%s", sec)
			}
			for _, c := range Commands {
				if !strings.Contains(sec, "- `"+c.Example+"`: ") {
					t.Errorf("the section does not list %s", c.Example)
				}
			}
			if strings.Contains(rest, "<details>") {
				t.Error("a second <details> block")
			}
			if i, j := strings.Index(tc.body, sec), strings.LastIndex(tc.body, "<!-- driftfix:fingerprint="); i > j {
				t.Error("the section comes after the fingerprint marker; it must come before the footer")
			}
			obeys := strings.Contains(sec, "takes no commands")
			if obeys == (tc.on == FixPR) {
				t.Errorf("a %s pull request's section must say whether it takes commands:\n%s", tc.name, sec)
			}
		})
	}
	for _, c := range Commands {
		if !strings.HasPrefix(c.Example, "/driftfix "+c.Verb) || (c.Arg == "") != (c.Example == "/driftfix "+c.Verb) || c.Does == "" {
			t.Errorf("command %+v: its example must be /driftfix %s with an argument exactly when it takes one, and say what it does", c, c.Verb)
		}
	}
}
