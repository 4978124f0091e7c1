package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestKustomizeGeneratorInputs: a kustomization's generators read inputs
// of any type (.conf, .env, a binary certificate); a repository's other
// files (an image far over MaxChartBytes) are not staged; an input the
// caller did not read is named as over its budget, never as missing.
func TestKustomizeGeneratorInputs(t *testing.T) {
	files := jsonnetRepo(map[string]string{
		"app/kustomization.yaml": `configMapGenerator:
- name: conf
  files:
  - app.conf
  - index=site/index.html
  envs:
  - .env
  options:
    disableNameSuffixHash: true
secretGenerator:
- name: tls
  files:
  - tls.crt
  options:
    disableNameSuffixHash: true
`,
		"app/app.conf":        "listen 80;\n",
		"app/site/index.html": "<h1>hi</h1>\n",
		"app/.env":            "MODE=prod\nLEVEL=3\n",
		"app/tls.crt":         "\x00\x01\xfe\xff",
		"docs/screenshot.png": strings.Repeat("p", 2<<20),
	})
	objs, err := KustomizeWithOptions(files, "app", KustomizeOptions{Limits: Limits{MaxChartBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("objects: %v", objs)
	}
	cm, secret := objs[0], objs[1]
	if drift.Str(cm, "kind") != "ConfigMap" {
		cm, secret = secret, cm
	}
	for k, want := range map[string]string{"app.conf": "listen 80;\n", "index": "<h1>hi</h1>\n", "MODE": "prod", "LEVEL": "3"} {
		if got := drift.Str(cm, "data", k); got != want {
			t.Errorf("ConfigMap data %s = %q, want %q", k, got, want)
		}
	}
	if got := drift.Str(secret, "data", "tls.crt"); got != "AAH+/w==" {
		t.Errorf("Secret data tls.crt = %q, want the binary file base64-encoded", got)
	}

	delete(files, "app/.env")
	_, err = KustomizeWithOptions(files, "app", KustomizeOptions{Unread: Unread{"app/.env": {Size: 5 << 20, Budget: "the per-file read budget of 4.0 MiB", Raise: "--max-file-bytes"}}})
	var ue *UnreadError
	if !errors.As(err, &ue) || ue.File != "app/.env" || !strings.Contains(err.Error(), "app/.env (5.0 MiB) is over the per-file read budget of 4.0 MiB, so it was not read; raise it with --max-file-bytes") {
		t.Errorf("an unread input: %v", err)
	}
}
