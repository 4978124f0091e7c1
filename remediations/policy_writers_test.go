package remediations_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
)

// policyWriters reads a policy file's writers with the policy's own parser,
// as the bot does.
func policyWriters(src []byte) ([]drift.Writer, error) {
	cfg, err := config.Parse(src)
	if err != nil {
		return nil, err
	}
	return cfg.Policy.Writers, nil
}

// policyFile is a policy as platform leads write it: comments, blank
// lines, a quoted key, writers already listed.
const policyFile = `# driftfix's policy for the platform team.
argocd:
  - name: main   # the production instance
    server: https://argocd.example.com
    tokenEnv: ARGOCD_TOKEN

policy:
  labels: [driftfix]
  # Who writes what, named by the platform team.
  writers:
    - manager: acme-operator   # ours
      is: controller
      owns: [/spec/replicas]

  dashboard:
    enabled: true
`

// TestAddPolicyWriter: a writer entry is added in place, every other line
// kept; a file without writers (or without policy) gets the keys it needs;
// hostile manager names are written so that they read back as exactly
// themselves and match only themselves; a manager placed already, an
// invalid policy and a flow-style policy are refused, never half-edited.
func TestAddPolicyWriter(t *testing.T) {
	noWriters := "argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]\npolicy:\n  labels: [driftfix]\n"
	noPolicy := "argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]\n"
	tests := []struct {
		name, src, manager string
		is                 drift.WriterKind
		err                error  // wanted error, by errors.Is
		refused            string // wanted error text, when not nil
	}{
		{name: "appended after the writers", src: policyFile, manager: "replica-tuner", is: drift.WriterController},
		{name: "a person", src: policyFile, manager: "ops-laptop", is: drift.WriterPerson},
		{name: "writers created", src: noWriters, manager: "replica-tuner", is: drift.WriterPerson},
		{name: "policy created", src: noPolicy, manager: "replica-tuner", is: drift.WriterController},
		{name: "a glob is a literal", src: policyFile, manager: "*", is: drift.WriterPerson},
		{name: "a glob class is a literal", src: policyFile, manager: `acme-[a-z]?\x`, is: drift.WriterController},
		{name: "YAML and Markdown syntax", src: policyFile, manager: "x\n  is: person\n- manager: '*'\"#`@admin <b>", is: drift.WriterController},
		{name: "YAML words", src: policyFile, manager: "null", is: drift.WriterController},
		{name: "control and invisible characters", src: policyFile, manager: "tool\x1b[31m\u202e\u2028\ufeff\t", is: drift.WriterController},
		{name: "placed already", src: policyFile, manager: "acme-operator", is: drift.WriterPerson, err: remediations.ErrWriterPlaced},
		{name: "an invalid policy", src: "policy: {}\n", manager: "x", is: drift.WriterPerson, refused: "read the policy file"},
		{name: "a flow-style policy", src: "argocd: [{name: main, server: https://a.example.com, tokenEnv: T}]\npolicy: {labels: [driftfix]}\n", manager: "x", is: drift.WriterPerson, refused: "cannot edit in place"},
		{name: "not a kind", src: policyFile, manager: "x", is: "client", refused: "write controller or person"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := remediations.AddPolicyWriter([]byte(tt.src), policyWriters, tt.manager, tt.is, "placed on the Drift Dashboard acme/shop#1")
			if tt.err != nil || tt.refused != "" {
				if err == nil || (tt.err != nil && !errors.Is(err, tt.err)) || !strings.Contains(err.Error(), tt.refused) || out != nil {
					t.Fatalf("want refused (%v %q), got %v and %d bytes", tt.err, tt.refused, err, len(out))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkAdded(t, tt.src, out, tt.manager, tt.is)
			if !strings.Contains(string(out), "# placed on the Drift Dashboard acme/shop#1\n") {
				t.Errorf("the comment is not above the entry:\n%s", out)
			}
			if _, err := remediations.AddPolicyWriter(out, policyWriters, tt.manager, tt.is, ""); !errors.Is(err, remediations.ErrWriterPlaced) {
				t.Errorf("adding the same writer twice: %v", err)
			}
		})
	}
	out, err := remediations.AddPolicyWriter([]byte(policyFile), policyWriters, "replica-tuner", drift.WriterController, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(policyFile, "      owns: [/spec/replicas]\n", "      owns: [/spec/replicas]\n    - manager: \"replica-tuner\"\n      is: controller\n", 1); string(out) != want {
		t.Errorf("the entry must be added after the last writer, nothing else changed:\n%s", out)
	}
}

// checkAdded holds an edited policy to what a user relies on: every line of
// the file as it was is still there in order, the policy parses, and its
// writers place exactly manager (and no other name) as is.
func checkAdded(t *testing.T, src string, out []byte, manager string, is drift.WriterKind) {
	t.Helper()
	rest := string(out)
	for _, l := range strings.SplitAfter(src, "\n") {
		i := strings.Index(rest, l)
		if i < 0 {
			t.Fatalf("line %q of the file was lost or moved:\n%s", l, out)
		}
		rest = rest[i+len(l):]
	}
	cfg, err := config.Parse(out)
	if err != nil {
		t.Fatalf("the edited policy does not parse: %v\n%s", err, out)
	}
	ws := cfg.Policy.Writers
	w := ws[len(ws)-1]
	if !w.MatchesManager(manager) || w.Is != is || len(w.Owns) != 0 {
		t.Fatalf("the last writer %+v does not place %q as %s:\n%s", w, manager, is, out)
	}
	for _, other := range []string{manager + "x", "x" + manager, "", "acme", strings.ToUpper(manager) + "Z"} {
		if other != manager && w.MatchesManager(other) {
			t.Errorf("the entry for %q also matches %q", manager, other)
		}
	}
}

// FuzzAddPolicyWriter: whatever the manager name, the edited policy is
// either refused or a valid policy holding the file as it was, whose new
// entry names exactly that manager.
func FuzzAddPolicyWriter(f *testing.F) {
	for _, s := range []string{"replica-tuner", "*", "a\nb: c", `\`, "[", "'\"", "- x", "#", "\u2028", "null", "~", "0x1F", "a: b", "&a", "!!binary x"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, manager string, controller bool) {
		is := drift.WriterPerson
		if controller {
			is = drift.WriterController
		}
		out, err := remediations.AddPolicyWriter([]byte(policyFile), policyWriters, manager, is, "fuzz")
		if err != nil {
			if out != nil {
				t.Fatal("a refused edit returned a file")
			}
			if strings.TrimSpace(manager) != "" && utf8.ValidString(manager) && manager != "acme-operator" && !errors.Is(err, remediations.ErrWriterPlaced) {
				t.Fatalf("a valid name was refused: %v", err)
			}
			return
		}
		checkAdded(t, policyFile, out, manager, is)
	})
}
