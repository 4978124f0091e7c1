package config

import (
	"strings"
	"testing"
)

func TestUnlisted(t *testing.T) {
	const head = "argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]\n"
	for _, tc := range []struct {
		name, yaml string
		want       Unlisted
		err        string
	}{
		{name: "defaults", yaml: head, want: Unlisted{CloseAfterCycles: 3, MaxListShrink: 0.2}},
		{name: "set", yaml: head + "unlisted: {closeAfterCycles: 5, maxListShrink: 0.05}\n", want: Unlisted{CloseAfterCycles: 5, MaxListShrink: 0.05}},
		{name: "one key keeps the other's default", yaml: head + "unlisted: {closeAfterCycles: 2}\n", want: Unlisted{CloseAfterCycles: 2, MaxListShrink: 0.2}},
		{name: "fraction above 1", yaml: head + "unlisted: {maxListShrink: 20}\n", err: "line 2: unlisted.maxListShrink: must be a fraction from 0 to 1"},
		{name: "zero cycles", yaml: head + "unlisted: {closeAfterCycles: 0}\n", err: "unlisted.closeAfterCycles: must be a whole number above 0"},
		{name: "unknown key", yaml: head + "unlisted: {after: 3}\n", err: "unlisted.after: unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Unlisted != tc.want {
				t.Errorf("unlisted %+v, want %+v", c.Unlisted, tc.want)
			}
		})
	}
}

// TestPlaintextArgoCDRefused: an http:// Argo CD server would carry the
// token in clear text; it is refused unless insecurePlaintext says so.
func TestPlaintextArgoCDRefused(t *testing.T) {
	for _, tc := range []struct{ yaml, err string }{
		{"argocd: [{server: http://argocd.argocd.svc, tokenFile: t}]\n", `argocd[0].server: "http://argocd.argocd.svc" is plain http`},
		{"argocd: [{server: http://argocd.argocd.svc, tokenFile: t, insecurePlaintext: true}]\n", ""},
		{"argocd: [{server: https://argocd.argocd.svc, tokenFile: t}]\n", ""},
	} {
		c, err := Parse([]byte(tc.yaml))
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.yaml, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q (config %+v)", tc.yaml, err, tc.err, c)
		}
	}
}
