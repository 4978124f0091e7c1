package config

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

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

// TestSensitivePathsAsTableEntries: a policy entry is written exactly like
// an entry of the built-in table (bot/drift/sensitive.yaml): every built-in
// entry but for the fix it allows is accepted as written, and an entry's
// scope, name, mode and reason take effect.
func TestSensitivePathsAsTableEntries(t *testing.T) {
	raw, err := os.ReadFile("../drift/sensitive.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Paths []map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	for _, e := range table.Paths {
		delete(e, "allow") // only the built-in table allows a fix
	}
	file := map[string]any{
		"argocd": []any{map[string]any{"name": "main", "server": "https://argocd.example.com", "tokenFile": "/t"}},
		"policy": map[string]any{"sensitivePaths": table.Paths},
	}
	b, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(b)
	if err != nil {
		t.Fatalf("the built-in entries, written in a policy: %v", err)
	}
	if got := len(c.Policy.SensitivePaths); got != len(table.Paths) || got < 100 {
		t.Fatalf("%d entries read, want %d", got, len(table.Paths))
	}

	c, err = Parse([]byte(`argocd: [{name: main, server: https://argocd.example.com, tokenFile: /t}]
policy:
  sensitivePaths:
    - scope: pod
      pattern: /containers|initContainers/*/resources
      reason: what runs
      what: the resources a container may use
      source: https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
    - {scope: core/ConfigMap, name: platform-settings, pattern: /data}
    - {scope: [apps/Deployment, apps/StatefulSet], pattern: /spec/strategy/rollingUpdate, mode: whole}
    - Deployment:/spec/paused
`))
	if err != nil {
		t.Fatal(err)
	}
	sens := c.Policy.Sensitivity()
	deploy := drift.Ref{Group: "apps", Kind: "Deployment", Name: "web"}
	for _, tc := range []struct {
		ref            drift.Ref
		path, reason   string
		want, wantWhat string
	}{
		{deploy, "/spec/template/spec/containers/0/resources/limits/cpu", "what runs", "/spec/template/spec/containers/0/resources", "the resources a container may use"},
		{drift.Ref{Group: "batch", Kind: "CronJob", Name: "c"}, "/spec/jobTemplate/spec/template/spec/initContainers/0/resources", "what runs", "/spec/jobTemplate/spec/template/spec/initContainers/0/resources", "the resources a container may use"},
		{drift.Ref{Kind: "ConfigMap", Name: "platform-settings"}, "/data/x", "policy", "/data", "listed in the policy's sensitivePaths as core/ConfigMap:/data"},
		{drift.Ref{Kind: "ConfigMap", Name: "app-settings"}, "/data/x", "", "", ""},
		{deploy, "/spec/paused", "policy", "/spec/paused", "listed in the policy's sensitivePaths as Deployment:/spec/paused"},
		{deploy, "/spec/replicas", "", "", ""},
	} {
		m, ok := sens.Within(tc.ref, drift.MustPointer(tc.path))
		if ok != (tc.want != "") || ok && (m.Path.String() != tc.want || m.Reason != tc.reason || m.What != tc.wantWhat) {
			t.Errorf("%s %s: %v %+v, want %s (%s: %s)", tc.ref, tc.path, ok, m, tc.want, tc.reason, tc.wantWhat)
		}
	}
	// A whole item: the item itself is sensitive, a field beneath it is
	// judged by its own entries.
	if _, ok := sens.Within(deploy, drift.MustPointer("/spec/strategy/rollingUpdate")); !ok {
		t.Error("a whole-item entry: the item itself is sensitive")
	}
	if m, ok := sens.Within(deploy, drift.MustPointer("/spec/strategy/rollingUpdate/maxSurge")); ok {
		t.Errorf("a whole-item entry is no subtree: a field beneath it is sensitive (%s)", m)
	}
}

// TestSensitivePathEntriesValidated: an entry written as a mapping that
// cannot be read is an error naming the key, the line and the problem.
func TestSensitivePathEntriesValidated(t *testing.T) {
	for _, tc := range []struct{ entry, want string }{
		{`{scope: pod, pattern: image}`, `line 6: policy.sensitivePaths[1]: pattern "image" is a field name`},
		{`{scope: secret, pattern: /data}`, `line 6: policy.sensitivePaths[1]: "secret" is not a scope`},
		{`{scope: core/Secret, pattern: /data, allow: pin-helm-value}`, "only the built-in table names a fix"},
		{`{scope: core/Secret, pattern: /data, reason: secrets}`, `reason "secrets"`},
		{`{scope: core/Secret, pattern: /data, mode: everything}`, `mode "everything"`},
		{`{scope: core/Secret, pattern: /data, hidden: maybe}`, `hidden "maybe"`},
		{`{scope: core/Secret, patern: /data}`, "policy.sensitivePaths[1].patern: unknown key"},
		{`{scope: core/Secret}`, "pattern is empty"},
		{`{scope: pod, name: x, pattern: /x}`, `name "x" needs a scope of one kind`},
	} {
		_, err := Parse([]byte("argocd: [{name: main, server: https://argocd.example.com, tokenFile: /t}]\npolicy:\n  sensitivePaths:\n    - env\n    -\n      " + tc.entry + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("entry %s: error %v, want one saying %s", tc.entry, err, tc.want)
		}
	}
}

// TestSensitivePathEntriesNeverWeaken: a policy entry only adds protection.
// One that copies a built-in path but says its live content may always be
// hidden (hidden: never), or that it is one item and not a subtree (mode:
// whole), leaves the built-in judgement as it was: an injected privileged
// sidecar is still never ignored, a container's image still never removed.
func TestSensitivePathEntriesNeverWeaken(t *testing.T) {
	c, err := Parse([]byte(`argocd: [{name: main, server: https://argocd.example.com, tokenFile: /t}]
policy:
  sensitivePaths:
    - {scope: pod, pattern: /containers/*, mode: whole, hidden: never}
    - {scope: pod, pattern: /containers/*/securityContext, hidden: never}
    - {scope: pod, pattern: /containers/*/image, mode: whole, reason: policy}
    - {scope: all, pattern: /spec, mode: whole, hidden: never}
    - {scope: pod, pattern: /containers, hidden: never}
`))
	if err != nil {
		t.Fatal(err)
	}
	deploy := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	pod := func(ctrs ...any) drift.Object {
		return drift.Object{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": ctrs}}}}
	}
	target := pod(map[string]any{"name": "web", "image": "web:1"})
	live := pod(map[string]any{"name": "web", "image": "web:1"}, map[string]any{"name": "proxy", "image": "proxy:1", "securityContext": map[string]any{"privileged": true}})
	for _, s := range []drift.Sensitivity{{}, c.Policy.Sensitivity()} {
		f := drift.Finding{Resource: deploy, Path: drift.MustPointer("/spec/template/spec/containers/1"), InLive: true}
		if why, refused := s.Refuse(drift.FixIgnoreDifference, &f, target, live); !refused || !strings.Contains(why, "privileged: true") {
			t.Errorf("ignoring a privileged sidecar: refused %v (%s)", refused, why)
		}
		tmpl := drift.Finding{Resource: deploy, Path: drift.MustPointer("/spec/template"), InLive: true}
		if why, refused := s.Refuse(drift.FixIgnoreDifference, &tmpl, nil, live); !refused || !strings.Contains(why, "privileged: true") {
			t.Errorf("ignoring a pod template holding a privileged sidecar: refused %v (%s)", refused, why)
		}
		img := drift.Finding{Resource: deploy, Path: drift.MustPointer("/spec/template/spec/containers/0/image"), InGit: true, Git: "web:1", InLive: true, Live: "web:2"}
		if why, refused := s.Refuse(drift.FixRemoveField, &img, target, live); !refused || !strings.Contains(why, "image: the image a container runs") {
			t.Errorf("removing an image: refused %v (%s)", refused, why)
		}
	}
}
