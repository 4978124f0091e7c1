package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

// argocdLogin writes the argocd CLI's config as `argocd login SERVER
// --plaintext` leaves it, into a fresh $ARGOCD_CONFIG_DIR.
func argocdLogin(t *testing.T, server, token string) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("ARGOCD_CONFIG_DIR", dir)
	cfg := "contexts:\n- name: " + server + "\n  server: " + server + "\n  user: " + server + "\ncurrent-context: " + server +
		"\nprompts-enabled: false\nservers:\n- grpc-web-root-path: \"\"\n  plain-text: true\n  server: " + server +
		"\nusers:\n- auth-token: " + token + "\n  name: " + server + "\n"
	f := filepath.Join(dir, "config")
	if err := os.WriteFile(f, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestArgoCDCLIContext: with no server or token given, driftfix reads the
// context `argocd login` wrote, and says so when argocd-server refuses it.
func TestArgoCDCLIContext(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	srv, tokenFile := liveServer(t, time.Now())
	host := strings.TrimPrefix(srv.URL, "http://")
	quiet := []string{"--no-kube", "--repo-files=false"}

	// No flag, no variable, no config: what to type.
	code, _, stderr := runCLI(append([]string{"scan"}, quiet...)...)
	if code != exitUsage || !strings.Contains(stderr, "give --argocd-server URL, set ARGOCD_SERVER, or run argocd login first") {
		t.Fatalf("nothing given: exit %d, %s", code, stderr)
	}

	cfgFile := argocdLogin(t, host, liveToken)
	code, out, stderr := runCLI(append([]string{"scan"}, quiet...)...)
	if code != exitDrift || !strings.Contains(out, "1 stuck") {
		t.Fatalf("scan from the argocd context: exit %d\n%s%s", code, out, stderr)
	}
	// The server given, its token from the context of that server.
	code, _, stderr = runCLI(append([]string{"diagnose", "queue", "--argocd-server", host, "--plaintext"}, quiet...)...)
	if code != exitDrift {
		t.Fatalf("diagnose with the server given: exit %d, %s", code, stderr)
	}
	// That token is not sent in clear text when argocd used it with TLS.
	raw, _ := os.ReadFile(cfgFile)
	os.WriteFile(cfgFile, []byte(strings.Replace(string(raw), "  plain-text: true\n", "", 1)), 0o600)
	code, _, stderr = runCLI(append([]string{"diagnose", "queue", "--argocd-server", host, "--plaintext"}, quiet...)...)
	if code != exitUsage || !strings.Contains(stderr, "driftfix does not send it in clear text with --plaintext") {
		t.Fatalf("a TLS context's token over --plaintext: exit %d, %s", code, stderr)
	}
	os.WriteFile(cfgFile, raw, 0o600)
	// A flag still wins over the context.
	code, _, stderr = runCLI(append([]string{"scan", "--argocd-server", closedURL(t), "--plaintext", "--argocd-token-file", tokenFile, "--argocd-timeout", "1s"}, quiet...)...)
	if code != exitUsage || !strings.Contains(stderr, "server from --argocd-server, token from --argocd-token-file") {
		t.Fatalf("flags over the context: exit %d, %s", code, stderr)
	}

	// A token argocd-server refuses: the error names the context and file.
	argocdLogin(t, host, "expired")
	code, _, stderr = runCLI(append([]string{"scan"}, quiet...)...)
	if code != exitUsage || !strings.Contains(stderr, `the argocd CLI's context "`+host+`" in `) || !strings.Contains(stderr, "run argocd login again") {
		t.Fatalf("refused token: exit %d, %s", code, stderr)
	}
	if strings.Contains(stderr, "expired\"") || strings.Contains(stderr, liveToken) {
		t.Fatalf("a token was printed: %s", stderr)
	}

	// A config others can read is refused, as argocd refuses it.
	cfgFile = argocdLogin(t, host, liveToken)
	if err := os.Chmod(cfgFile, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(append([]string{"scan"}, quiet...)...)
	if code != exitUsage || !strings.Contains(stderr, "chmod 600") {
		t.Fatalf("config mode 0644: exit %d, %s", code, stderr)
	}
	// --argocd-config and --argocd-context name another file and context.
	os.Chmod(cfgFile, 0o600)
	other := filepath.Join(t.TempDir(), "other")
	raw, _ = os.ReadFile(cfgFile)
	os.WriteFile(other, raw, 0o600)
	t.Setenv("ARGOCD_CONFIG_DIR", t.TempDir())
	code, _, stderr = runCLI(append([]string{"scan", "--argocd-config", other, "--argocd-context", "prod"}, quiet...)...)
	if code != exitUsage || !strings.Contains(stderr, `has no context "prod"`) {
		t.Fatalf("--argocd-context prod: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(append([]string{"scan", "--argocd-config", other}, quiet...)...)
	if code != exitDrift {
		t.Fatalf("--argocd-config: exit %d, %s", code, stderr)
	}
	// Contexts driftfix cannot use say what to give instead.
	for _, server := range []string{"kubernetes", "port-forward"} {
		core := map[string]string{"kubernetes": "  core: true\n", "port-forward": ""}[server]
		text := "contexts: [{name: c, server: " + server + ", user: c}]\ncurrent-context: c\nservers:\n- server: " + server + "\n" + core + "users: [{name: c}]\n"
		os.WriteFile(other, []byte(text), 0o600)
		code, _, stderr = runCLI(append([]string{"scan", "--argocd-config", other}, quiet...)...)
		if code != exitUsage || !strings.Contains(stderr, "give --argocd-server") {
			t.Errorf("a %s context: exit %d, %s", server, code, stderr)
		}
	}
}

// TestNamespacedApplication: NAMESPACE/APP is the application APP in
// NAMESPACE (Argo CD's apps in any namespace), as --app-namespace says it.
func TestNamespacedApplication(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	srv, tokenFile := liveServer(t, time.Now())
	// A second queue, in team-a, without drift.
	s, err := drift.LoadSnapshot("../../testdata/cases/11-builtin-quantity-hidden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	md := drift.Map(s.Application, "metadata")
	md["name"], md["namespace"] = "queue", "team-a"
	drift.Map(s.Application, "status")["sync"] = map[string]any{"status": "Synced"}
	srv.Add(s)
	args := []string{"--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--no-kube", "--repo-files=false", "-o", "json"}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"Argo CD's namespace", []string{"diagnose", "queue"}, exitDrift, `"syncStatus": "OutOfSync"`},
		{"argocd/queue", []string{"diagnose", "argocd/queue"}, exitDrift, `"syncStatus": "OutOfSync"`},
		{"team-a/queue", []string{"diagnose", "team-a/queue"}, exitClean, `"syncStatus": "Synced"`},
		{"-N team-a", []string{"diagnose", "queue", "-N", "team-a"}, exitClean, `"syncStatus": "Synced"`},
		{"-n team-a, as kubectl", []string{"diagnose", "queue", "-n", "team-a"}, exitClean, `"syncStatus": "Synced"`},
		{"--app-namespace agreeing", []string{"diagnose", "team-a/queue", "--app-namespace", "team-a"}, exitClean, ""},
		{"--app-namespace disagreeing", []string{"diagnose", "team-a/queue", "--app-namespace", "argocd"}, exitUsage, `is in namespace "team-a", but --app-namespace says "argocd"`},
		{"two slashes", []string{"diagnose", "a/b/c"}, exitUsage, `application "a/b/c": want APP or NAMESPACE/APP`},
		{"snapshot team-a/queue", []string{"snapshot", "team-a/queue", "--renders=false"}, exitClean, `"namespace": "team-a"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runCLI(append(tt.args, args...)...)
			if code != tt.code || !strings.Contains(out+stderr, tt.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s%s", code, tt.code, tt.want, out, stderr)
			}
		})
	}
}

// TestServerAddress: http:// needs --plaintext, as the policy's http://
// server needs insecurePlaintext; HOST:PORT is https as the argocd CLI reads
// it, and a server that does not speak TLS gets what to type.
func TestServerAddress(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	srv, tokenFile := liveServer(t, time.Now())
	host := strings.TrimPrefix(srv.URL, "http://")
	base := []string{"scan", "--argocd-token-file", tokenFile, "--no-kube", "--repo-files=false", "--argocd-timeout", "2s"}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"http:// alone", []string{"--argocd-server", srv.URL}, exitUsage, "is plain http, which sends the API token in clear text: add --plaintext"},
		{"http:// with --plaintext", []string{"--argocd-server", srv.URL, "--plaintext"}, exitDrift, "1 stuck"},
		{"HOST:PORT with --plaintext", []string{"--argocd-server", host, "--plaintext"}, exitDrift, "1 stuck"},
		{"HOST:PORT of a server without TLS", []string{"--argocd-server", host}, exitUsage, "has no scheme, so https:// was assumed (as the argocd CLI does): for a server without TLS, add --plaintext"},
		{"https:// with --plaintext", []string{"--argocd-server", "https://" + host, "--plaintext"}, exitUsage, "is https, but --plaintext says the server has no TLS"},
		{"another scheme", []string{"--argocd-server", "grpc://" + host}, exitUsage, `want https://HOST, http://HOST with --plaintext, or HOST:PORT`},
		{"ARGOCD_SERVER as argocd takes it", []string{"--plaintext"}, exitDrift, "1 stuck"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "ARGOCD_SERVER as argocd takes it" {
				t.Setenv("ARGOCD_SERVER", host)
			}
			code, out, stderr := runCLI(append(append([]string{}, base...), tt.args...)...)
			if code != tt.code || !strings.Contains(out+stderr, tt.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s%s", code, tt.code, tt.want, out, stderr)
			}
		})
	}
}

// TestNotASnapshot: a Kubernetes manifest given where a snapshot goes is
// named as what it is, with what to give instead.
func TestNotASnapshot(t *testing.T) {
	f := filepath.Join(t.TempDir(), "deployment.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2}\n---\nkind: Service\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"diagnose", "--snapshot", f}, {"diagnose", "-f", f}, {"fix", "--snapshot", f, "--dry-run"}, {"ignores", "--snapshot", f}} {
		code, _, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, f+" is not a snapshot: it is a Deployment (apps/v1)") || !strings.Contains(stderr, "driftfix snapshot APP -f FILE") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

// TestCompletionAndManPages: the shell completions and man pages cobra
// writes, for every command.
func TestCompletionAndManPages(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, stderr := runCLI("completion", shell)
		if code != exitClean || !strings.Contains(out, "driftfix") || len(out) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes, %s", shell, code, len(out), stderr)
		}
	}
	// Completion of -o's values, as the shell scripts ask for it.
	code, out, _ := runCLI("__complete", "diagnose", "-o", "")
	if code != exitClean || !strings.Contains(out, "json\nyaml\nwide\n") {
		t.Errorf("completing -o: exit %d\n%s", code, out)
	}
	dir := t.TempDir()
	code, out, stderr := runCLI("docs", "man", dir)
	if code != exitClean {
		t.Fatalf("docs man: exit %d, %s", code, stderr)
	}
	for _, page := range []string{"driftfix.1", "driftfix-diagnose.1", "driftfix-scan.1", "driftfix-config-validate.1", "driftfix-setup-github-app.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil || !strings.Contains(string(b), ".TH \"DRIFTFIX\" \"1\"") {
			t.Errorf("%s: %v\n%.200s", page, err, b)
		}
	}
	if !strings.Contains(out, "man pages in "+dir) {
		t.Errorf("docs man says %q", out)
	}
}

// TestPluginName: run as the argocd CLI's plugin argocd-driftfix, help and
// errors name the command as the user typed it.
func TestPluginName(t *testing.T) {
	if got := pluginName("/usr/local/bin/argocd-driftfix"); got != "argocd driftfix" {
		t.Errorf("pluginName: %q", got)
	}
	if got := pluginName("./driftfix"); got != "driftfix" {
		t.Errorf("pluginName: %q", got)
	}
	var out, errb strings.Builder
	code := run(t.Context(), []string{"scan", "-h"}, &out, &errb, "argocd driftfix")
	if code != exitClean || !strings.Contains(out.String(), "argocd driftfix scan [flags]") {
		t.Errorf("help as a plugin: exit %d\n%s", code, out.String())
	}
	out.Reset()
	code = run(t.Context(), []string{"diagnose", "a/b/c"}, &out, &errb, "argocd driftfix")
	if code != exitUsage || !strings.HasPrefix(errb.String(), "argocd driftfix diagnose: ") {
		t.Errorf("error as a plugin: exit %d, %q", code, errb.String())
	}
}

// TestArgoCDPlugin runs `argocd driftfix scan` with the real argocd 3.6.1
// (the e2e stack's binary, or $DRIFTFIX_ARGOCD_BIN; skipped without one):
// argocd finds this test binary on PATH as argocd-driftfix and runs it with
// the arguments after driftfix and its environment; driftfix reads the
// context argocd login would have written and scans the Argo CD API fake.
func TestArgoCDPlugin(t *testing.T) {
	bin := os.Getenv("DRIFTFIX_ARGOCD_BIN")
	if bin == "" {
		bin = "../../e2e/stack/bin/argocd"
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("DRIFTFIX_REQUIRE_ARGOCD_BIN") == "1" { // CI, after the stack build
			t.Fatalf("no argocd binary (%v), and DRIFTFIX_REQUIRE_ARGOCD_BIN=1 requires it", err)
		}
		t.Skipf("no argocd binary (%v): build the e2e stack (e2e/stack/build.sh) or set DRIFTFIX_ARGOCD_BIN", err)
	}
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	srv, _ := liveServer(t, time.Now())
	argocdLogin(t, strings.TrimPrefix(srv.URL, "http://"), liveToken)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pathDir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(pathDir, "argocd-driftfix")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args     []string
		code     int
		inStdout string
	}{
		{[]string{"driftfix", "scan", "--no-kube", "--repo-files=false"}, exitDrift, "3 applications scanned, 1 stuck OutOfSync"},
		{[]string{"driftfix", "diagnose", "argocd/queue", "--no-kube", "--repo-files=false", "-o", "json"}, exitDrift, `"application": "queue"`},
		{[]string{"driftfix", "scan", "--help"}, exitClean, "argocd driftfix scan [flags]"},
	} {
		cmd := exec.Command(bin, tt.args...)
		cmd.Env = append(os.Environ(), "DRIFTFIX_TEST_MAIN=1", "HOME="+t.TempDir(), "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if cmd.ProcessState == nil {
			t.Fatalf("argocd %v: %v", tt.args, err)
		}
		if code := cmd.ProcessState.ExitCode(); code != tt.code || !strings.Contains(out.String(), tt.inStdout) {
			t.Errorf("argocd %v: exit %d, want %d with %q\n%s%s", tt.args, code, tt.code, tt.inStdout, out.String(), errb.String())
		}
		// argocd reports a plugin's non-zero exit on standard output.
		if tt.code != exitClean && !strings.HasSuffix(out.String(), "Error: exit status 1\n") {
			t.Errorf("argocd %v: no exit status line after the output:\n%s", tt.args, out.String())
		}
	}
}

// FuzzAppName: any application argument is split into a namespace and a
// Kubernetes object name or refused with the argument named; what is
// accepted joins back to the argument.
func FuzzAppName(f *testing.F) {
	for _, s := range []string{"guestbook", "argocd/guestbook", "a/b/c", "/x", "x/", "./x.yaml", "Team/App", "team-a/web.v2"} {
		f.Add(s, "")
		f.Add(s, "team-a")
	}
	f.Fuzz(func(t *testing.T, arg, flagNS string) {
		ns, name, err := appName(arg, flagNS)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(arg)) {
				t.Fatalf("error does not name %q: %v", arg, err)
			}
			return
		}
		if !dnsSubdomain.MatchString(name) || (ns != "" && !dnsLabel.MatchString(ns)) {
			t.Fatalf("accepted %q as %q/%q", arg, ns, name)
		}
		if arg != name && arg != ns+"/"+name {
			t.Fatalf("%q became %q/%q", arg, ns, name)
		}
	})
}
