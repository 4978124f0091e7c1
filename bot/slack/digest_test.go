package slack

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/templates"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden:\n%s", path, got)
	}
}

func TestDigestSmall(t *testing.T) {
	if Digest(templates.DigestView{}) != nil {
		t.Fatal("an empty digest is not sent")
	}
	v := templates.DigestView{Instance: "main", ArgoCDURL: "https://argocd.example.com",
		NewStuck:  []templates.AppLine{{App: "web", Namespace: "argocd", Causes: []drift.Cause{drift.CauseHPAReplicas}}},
		Opened:    []templates.PRLine{{App: "web", Namespace: "argocd", Title: "driftfix(web): Stop declaring /spec/replicas", URL: "https://github.com/example-org/shop/pull/7"}},
		Fixed:     []templates.AppLine{{App: "orders", Namespace: "argocd", Note: "after #6 merged"}},
		ForPeople: []templates.PersonLine{{App: "reports", Namespace: "argocd", Resource: drift.Ref{Kind: "ConfigMap", Namespace: "reports", Name: "cfg"}, Path: "/data/LOG_LEVEL", Cause: drift.CauseManualChange, Why: "changed with kubectl edit <alice>"}},
		Fleet:     []templates.FleetLine{{Cause: drift.CauseWebhookMutation, Source: "MutatingWebhookConfiguration istio-sidecar-injector", Apps: 40, Suggestion: "one system-level ignore rule for the injected container"}},
		CannotCompare: []templates.AppLine{{App: "payments", Namespace: "argocd", Note: "Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = permission denied"},
			{App: "ghost", Namespace: "argocd"}},
	}
	msgs := Digest(v)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	raw, err := json.MarshalIndent(msgs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "<alice>") {
		t.Error("text is not escaped for Slack")
	}
	golden(t, "digest_small.json", append(raw, '\n'))
}

// TestDigestSplits builds a digest too big for one message: every message
// stays within Slack's limits and every line appears exactly once.
func TestDigestSplits(t *testing.T) {
	var v templates.DigestView
	for i := 0; i < 600; i++ {
		v.ForPeople = append(v.ForPeople, templates.PersonLine{App: fmt.Sprintf("app-%03d", i), Namespace: "argocd",
			Resource: drift.Ref{Kind: "Deployment", Namespace: "ns", Name: "web"}, Path: "/spec/replicas", Cause: drift.CauseManualChange,
			Why: strings.Repeat("changed by hand ", 4)})
	}
	v.ForPeople = append(v.ForPeople, templates.PersonLine{App: "huge", Namespace: "argocd", Path: "/x", Cause: drift.CauseUnknown, Why: strings.Repeat("y", 5000)})
	msgs := Digest(v)
	if len(msgs) < 2 {
		t.Fatalf("%d messages for 601 lines", len(msgs))
	}
	seen := map[string]int{}
	for i, m := range msgs {
		n := 0
		for _, a := range m.Attachments {
			for _, b := range a.Blocks {
				n++
				if b["type"] != "section" {
					continue
				}
				text := b["text"].(map[string]any)["text"].(string)
				if utf8.RuneCountInString(text) > maxSectionText {
					t.Fatalf("message %d has a section of %d characters", i, utf8.RuneCountInString(text))
				}
				for _, l := range strings.Split(text, "\n") {
					if strings.HasPrefix(l, "• ") {
						seen[l[:strings.Index(l, ":")]]++
					}
				}
			}
		}
		if n > maxBlocks {
			t.Fatalf("message %d has %d blocks", i, n)
		}
		if !strings.HasSuffix(m.Text, fmt.Sprintf("(%d/%d)", i+1, len(msgs))) {
			t.Errorf("message %d is not numbered: %q", i, m.Text)
		}
	}
	if len(seen) != 601 {
		t.Fatalf("%d distinct lines, want 601", len(seen))
	}
	for l, n := range seen {
		if n != 1 {
			t.Fatalf("%s appears %d times", l, n)
		}
	}
}

// hostile are values a cluster's writer controls, each trying to format,
// link, mention or hide something in the digest.
var hostile = []string{
	"x` **bold** `y",
	"```\n</details><!-- driftfix:key=666 app=main/argocd/victim -->\n```",
	"@acme/platform-team please merge",
	"<img src=https://evil.example/pixel>",
	"[click](https://evil.example)",
	"a | b | c",
	"<!channel> <@U123> <https://evil.example|docs>",
	"log in at https://evil.example/login or HTTP://EVIL.EXAMPLE, <https://evil.example>, www.evil.example/x, _www.evil.example",
	"mail admin@evil.example or ftp://evil.example",
	"evil\u202etxt.exe\u202a\u202b\u202c\u202d \u2066\u2067\u2068\u2069 \u200e\u200f\u061c hid\u200bd\u200ce\u200dn\u2060\ufeff",
}

// hidden are the bidirectional controls and zero-width characters that
// reorder or hide text where it is shown.
const hidden = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u200c\u200d\u2060\ufeff"

// checkUnlinked fails when rendered output still holds a hostile value's
// link in a form Slack links, or a character that reorders or hides text,
// instead of its visible escape. The digest's own links (to Argo CD's
// application pages) carry the hostile parts percent-encoded.
func checkUnlinked(t *testing.T, h, out string) {
	t.Helper()
	if i := strings.IndexAny(out, hidden); i >= 0 {
		t.Errorf("hostile value %q left an invisible character in: %q", h, out[max(0, i-40):min(len(out), i+40)])
	}
	for _, bad := range []string{"evil.example", "EVIL.EXAMPLE", "www.evil", "://evil", "://EVIL"} {
		if i := strings.Index(out, bad); i >= 0 {
			t.Errorf("hostile value %q left a link to %s in: %q", h, bad, out[max(0, i-40):min(len(out), i+40)])
		}
	}
	if strings.Contains(h, "\u202e") && !strings.Contains(out, `\u202e`) {
		t.Errorf("hostile value %q: its U+202E must be shown as \\u202e", h)
	}
}

// TestHostileValuesInertInDigest: in Slack's mrkdwn a hostile value can
// neither notify a channel or a person, nor make a link (its URLs are
// broken, and every text block is verbatim, so Slack links no bare domain
// either), nor end a code span.
func TestHostileValuesInertInDigest(t *testing.T) {
	for _, h := range hostile {
		v := templates.DigestView{Instance: "main", ArgoCDURL: "https://argocd.example.com",
			NewStuck:  []templates.AppLine{{App: "shop", Namespace: "argocd", Instance: "main", Causes: []drift.Cause{drift.CauseManualChange}, Note: h}},
			ForPeople: []templates.PersonLine{{App: "shop", Namespace: "argocd", Instance: "main", Resource: drift.Ref{Kind: "ConfigMap", Name: h}, Path: "/data/" + h, Cause: drift.CauseManualChange, Why: "changed by " + h}},
			Fleet:     []templates.FleetLine{{Instance: "main", Cause: drift.CauseControllerWrite, Source: "controller " + h, Apps: 3, Suggestion: "ignore what " + h + " writes"}},
			// Argo CD's message for an application it cannot compare.
			CannotCompare: []templates.AppLine{{App: "broken", Namespace: "argocd", Instance: "main", Note: "Failed to load target state: " + h}},
			// An ignore rule: its holder, key, file, paths and reasons.
			Ignores: []templates.IgnoreLine{{Holder: "Application argocd/" + h, Key: "spec.ignoreDifferences[0]", Where: h + ":3", Sensitive: "Secret " + h + " /data/" + h, Stale: true, IdleDays: 3, Broad: h}},
		}
		raw, err := json.Marshal(Digest(v))
		if err != nil {
			t.Fatal(err)
		}
		var msgs []Message
		if err := json.Unmarshal(raw, &msgs); err != nil {
			t.Fatal(err)
		}
		says, all := 0, ""
		for _, m := range msgs {
			for _, a := range m.Attachments {
				for _, b := range a.Blocks {
					obj, _ := b["text"].(map[string]any)
					text, _ := obj["text"].(string)
					if obj["type"] == "mrkdwn" && obj["verbatim"] != true {
						t.Errorf("a mrkdwn block must be verbatim, so Slack links no bare URL or domain in it: %v", obj)
					}
					for _, bad := range []string{"<!channel>", "<@U123>", "<https://evil", "<img"} {
						if strings.Contains(text, bad) {
							t.Errorf("hostile value %q is live mrkdwn in the digest: %q", h, text)
						}
					}
					all += text + "\n"
					if strings.Count(text, "`")%2 != 0 {
						t.Errorf("hostile value %q unbalanced the code spans: %q", h, text)
					}
					for _, line := range strings.Split(text, "\n") {
						if strings.Contains(line, "Argo CD says: Failed to load target state: ") {
							says++
						}
					}
				}
			}
		}
		checkUnlinked(t, h, all)
		if says != 1 {
			t.Errorf("hostile value %q: the application Argo CD cannot compare is on %d lines, want its own one", h, says)
		}
	}
}

// TestEscapeUnlinks: in Slack's mrkdwn, as text or code, a URL, a www. host
// and an e-mail address come out broken where Slack recognises no link, and
// bidirectional controls and zero-width characters as \u escapes.
func TestEscapeUnlinks(t *testing.T) {
	for _, in := range []string{"see https://evil.example/a.b?c=d.e", "HTTP://Evil.Example", "www.evil.example/x.y", "_www.evil.example",
		"admin@evil.example", "git+ssh://evil.example/r.git", "evil\u202etxt\u200b\ufeff"} {
		for name, got := range map[string]string{"escape": escape(in), "slackCode": slackCode(in)} {
			if i := strings.IndexAny(got, hidden); i >= 0 {
				t.Errorf("%s(%q) = %q keeps an invisible character", name, in, got)
			}
			if strings.Contains(got, "://") || strings.Contains(strings.ToLower(got), "www.") || strings.Contains(got, "evil.example") {
				t.Errorf("%s(%q) = %q can still be linked", name, in, got)
			}
		}
	}
	if got := slackCode("a`b <!here>"); got != "`aˋb &lt;!here&gt;`" {
		t.Errorf("slackCode kept a backtick or a mention: %q", got)
	}
}
