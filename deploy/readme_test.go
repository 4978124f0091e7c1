package deploy_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/strvals"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/deploy"
)

func readmeCommand(t *testing.T, prefix string) []string {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	words, err := deploy.READMECommand(readme, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return words
}

// TestReadmeInstall renders the chart with the README's `helm install`
// line as written and follows what it installs: the policy driftfix reads
// from it must be valid, read its secrets from keys the README's Secret has,
// and reach a self-signed argocd-server (a TLS server on 127.0.0.1 with a
// certificate nobody trusts) with the TLS settings the line gives. The e2e
// TestInstallAsREADME runs the chart on the real stack, with that stack's
// plaintext argocd-server and emulated GitHub and Slack addresses.
func TestReadmeInstall(t *testing.T) {
	helm := readmeCommand(t, "helm install driftfix deploy/chart ")
	values := map[string]any{}
	for i, w := range helm {
		if w == "--set" && i+1 < len(helm) {
			if err := strvals.ParseInto(helm[i+1], values); err != nil {
				t.Fatalf("--set %s: %v", helm[i+1], err)
			}
		}
	}
	if ns := strings.Join(helm, " "); !strings.Contains(ns, " -n driftfix") {
		t.Fatalf("the README installs into another namespace than its Secret's: %s", ns)
	}
	objs, err := renderChart(t, values)
	if err != nil {
		t.Fatalf("the README's helm install line does not render: %v", err)
	}
	o := byKey(objs)
	cfg, err := config.Parse([]byte(drift.Str(o["ConfigMap driftfix/driftfix"], "data", "driftfix.yaml")))
	if err != nil {
		t.Fatalf("the README's helm install line renders a policy driftfix refuses: %v", err)
	}
	if !cfg.DryRun {
		t.Error("the README's first install is not a dry run")
	}

	// The Secret the README creates has every key the policy reads.
	secret := readmeCommand(t, "kubectl -n driftfix create secret generic driftfix ")
	keys := map[string]bool{}
	for _, w := range secret {
		if k, ok := strings.CutPrefix(w, "--from-file="); ok {
			keys[k] = true
		}
	}
	for _, f := range []string{cfg.ArgoCD[0].TokenFile, cfg.GitHub.PrivateKeyFile} {
		if f == "" || !keys[path.Base(f)] {
			t.Errorf("the policy reads %q, which the README's Secret (%v) does not hold", f, keys)
		}
	}
	if cfg.GitHub.AppID == 0 || path.Base(cfg.GitHub.PrivateKeyFile) != "github-app.pem" {
		t.Errorf("GitHub App %+v: setup github-app writes github-app.pem", cfg.GitHub)
	}

	// A self-signed argocd-server, reached as the policy says.
	a := cfg.ArgoCD[0]
	if !strings.HasPrefix(a.Server, "https://") || a.InsecurePlaintext {
		t.Fatalf("the README's line reaches Argo CD as %s (plaintext %v)", a.Server, a.InsecurePlaintext)
	}
	fake := argocdtest.NewServer("tok")
	defer fake.Close()
	tls := httptest.NewUnstartedServer(fake.Config.Handler)
	tls.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	tls.StartTLS()
	defer tls.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := argocd.New(argocd.Config{BaseURL: tls.URL, Token: "tok", CAFile: a.CAFile, Insecure: a.Insecure, Retries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListApplications(ctx); err != nil {
		t.Fatalf("the README's TLS settings do not reach a self-signed argocd-server: %v", err)
	}
	// Without them the same server is refused: the line's settings are what make it work.
	strict, err := argocd.New(argocd.Config{BaseURL: tls.URL, Token: "tok", Retries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.ListApplications(ctx); err == nil {
		t.Fatal("a self-signed argocd-server was trusted without the README's settings")
	}
}

// TestREADMECommandWords splits a documented command line as the shell a
// reader pastes it into would: quotes kept together, a '#' inside quotes not
// a comment, unclosed quotes refused.
func TestREADMECommandWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
		bad  bool
	}{
		{line: `helm upgrade x --set slack.channel='#gitops-drift' --set dryRun=false`, want: []string{"helm", "upgrade", "x", "--set", "slack.channel=#gitops-drift", "--set", "dryRun=false"}},
		{line: `kubectl create secret generic s --from-literal=a="b c" --from-literal=d=e\ f`, want: []string{"kubectl", "create", "secret", "generic", "s", "--from-literal=a=b c", "--from-literal=d=e f"}},
		{line: `echo "a \"q\" $x" 'it''s'`, want: []string{"echo", `a "q" $x`, "its"}},
		{line: `helm install x --set a='open`, bad: true},
		{line: `helm install x --set a="open`, bad: true},
	} {
		words, err := deploy.READMECommand([]byte("intro\n"+tc.line+"\n"), strings.Fields(tc.line)[0]+" ")
		if tc.bad {
			if err == nil {
				t.Errorf("%s: split as %q, want an error", tc.line, words)
			}
			continue
		}
		if err != nil || strings.Join(words, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: got %q (%v), want %q", tc.line, words, err, tc.want)
		}
	}
}
