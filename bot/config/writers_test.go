package config

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

const writersHead = "argocd: [{name: main, server: https://argocd.example.com, tokenFile: /t}]\npolicy:\n  writers:\n    - {manager: acme-operator, is: controller, owns: [/spec/replicas]}\n"

// TestWritersTakeEffect: the policy's writers reach the safety model in
// order, each with what it is, the paths it owns (kind-scoped or not) and
// where the policy says so.
func TestWritersTakeEffect(t *testing.T) {
	c, err := Parse([]byte(writersHead + `    - {manager: "release-bot-*", is: person}
    - manager: flags-operator
      is: controller
      owns: ["ConfigMap:/data/*", /metadata/annotations/flags.example.com~1rev]
`))
	if err != nil {
		t.Fatal(err)
	}
	ws := c.Policy.Sensitivity().Writers
	if len(ws) != 3 {
		t.Fatalf("writers = %+v, want 3", ws)
	}
	if ws[0].Manager != "acme-operator" || ws[0].Is != drift.WriterController || !ws[0].Policy || ws[0].Source != "policy.writers[0], line 4" {
		t.Errorf("writers[0] = %+v", ws[0])
	}
	if !ws[1].MatchesManager("release-bot-prod") || ws[1].MatchesManager("release") || ws[1].Is != drift.WriterPerson {
		t.Errorf("writers[1] = %+v: the glob must match release-bot-prod only", ws[1])
	}
	cm := drift.Ref{Kind: "ConfigMap", Namespace: "shop", Name: "flags"}
	dep := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	for _, tc := range []struct {
		ref  drift.Ref
		path string
		want bool
	}{
		{cm, "/data/BETA", true},
		{dep, "/data/BETA", false},
		{dep, "/metadata/annotations/flags.example.com~1rev", true},
		{dep, "/metadata/annotations/other", false},
	} {
		if _, ok := ws[2].OwnsPath(tc.ref, drift.MustPointer(tc.path)); ok != tc.want {
			t.Errorf("flags-operator owns %s %s = %v, want %v", tc.ref, tc.path, ok, tc.want)
		}
	}
}

// TestWritersValidated: an entry that cannot place a writer is an error
// naming the key and the line.
func TestWritersValidated(t *testing.T) {
	for _, tc := range []struct{ entry, want string }{
		{`{is: controller}`, "line 5: policy.writers[1].manager: is required"},
		{`{manager: x}`, "line 5: policy.writers[1].is: is required"},
		{`{manager: x, is: robot}`, "line 5: policy.writers[1].is: must be controller or person"},
		{`{manager: x, is: client}`, "line 5: policy.writers[1].is: must be controller or person"},
		{`{manager: "x[", is: person}`, "line 5: policy.writers[1]: manager \"x[\" is not a valid glob"},
		{`{manager: x, is: person, owns: [/spec/replicas]}`, "line 5: policy.writers[1]: a person owns no field"},
		{`{manager: x, is: controller, owns: [spec.replicas]}`, "line 5: policy.writers[1].owns[0]: "},
		{`{manager: x, is: controller, owns: ["deployment:/spec/replicas"]}`, "line 5: policy.writers[1].owns[0]: "},
		{`{manager: x, is: controller, owns: [/]}`, "line 5: policy.writers[1].owns[0]: "},
		{`{manager: argocd-controller, is: controller}`, "line 5: policy.writers[1].manager: argocd-controller is Argo CD's own"},
		{`{manager: x, is: controller, role: admin}`, "line 5: policy.writers[1].role"},
		{`acme`, "line 5: policy.writers[1]: must be a mapping"},
	} {
		_, err := Parse([]byte(writersHead + "    - " + tc.entry + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("entry %s: error %v, want one naming %q", tc.entry, err, tc.want)
		}
	}
}
