package config

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestSensitivePathsTakeEffect: every form a policy may write an entry in
// (a JSON pointer, a dotted path, a field name, a kind-scoped path) makes that
// path sensitive, and only there.
func TestSensitivePathsTakeEffect(t *testing.T) {
	c, err := Parse([]byte(`argocd: [{name: main, server: https://argocd.example.com, tokenFile: /t}]
policy:
  sensitivePaths:
    - /spec/template/spec/dnsConfig
    - spec.template.spec.containers[].resources
    - tolerations
    - Deployment:/spec/paused
    - ConfigMap:data.policy\.json
`))
	if err != nil {
		t.Fatal(err)
	}
	sens := c.Policy.Sensitivity()
	for _, tc := range []struct {
		kind, path string
		want       bool
	}{
		{"Deployment", "/spec/template/spec/dnsConfig", true},
		{"Deployment", "/spec/template/spec/dnsConfig/nameservers/0", true},
		{"Deployment", "/spec/template/spec/containers/1/resources/limits/cpu", true},
		{"StatefulSet", "/spec/template/spec/tolerations/0", true},
		{"Deployment", "/spec/paused", true},
		{"StatefulSet", "/spec/paused", false},
		{"ConfigMap", "/data/policy.json", true},
		{"ConfigMap", "/data/other", false},
		{"Deployment", "/spec/template/spec/containers/0/imagePullPolicy", false},
		{"Deployment", "/spec/replicas", false},
	} {
		_, why, ok := sens.Check(tc.kind, drift.MustPointer(tc.path), nil)
		if ok != tc.want {
			t.Errorf("%s %s: sensitive %v (%s), want %v", tc.kind, tc.path, ok, why, tc.want)
		}
	}
}

// TestSensitivePathsValidated: an entry that cannot name a path is an error
// naming the key and the line.
func TestSensitivePathsValidated(t *testing.T) {
	for _, tc := range []struct{ entry, want string }{
		{`""`, "line 5: policy.sensitivePaths[1]: "},
		{`"/spec/~2x"`, "line 5: policy.sensitivePaths[1]: "},
		{`"spec..template"`, "line 5: policy.sensitivePaths[1]: "},
		{`"deployment:/spec/paused"`, "line 5: policy.sensitivePaths[1]: "},
		{`"Deployment:"`, "line 5: policy.sensitivePaths[1]: "},
		{`"/"`, "line 5: policy.sensitivePaths[1]: "},
		{`"has space"`, "line 5: policy.sensitivePaths[1]: "},
	} {
		_, err := Parse([]byte("argocd: [{name: main, server: https://argocd.example.com, tokenFile: /t}]\npolicy:\n  sensitivePaths:\n    - env\n    - " + tc.entry + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("entry %s: error %v, want one naming %s", tc.entry, err, tc.want)
		}
	}
}
