package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
)

func TestParseArgocdOpts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{in: "", want: map[string]string{}},
		{in: "--server argocd.example.com --insecure", want: map[string]string{"server": "argocd.example.com", "insecure": "true"}},
		{in: "--insecure --grpc-web", want: map[string]string{"insecure": "true", "grpc-web": "true"}},
		{in: "--server=argocd.example.com:443 --plaintext", want: map[string]string{"server=argocd.example.com:443": "true", "server": "argocd.example.com:443", "plaintext": "true"}},
		{in: "--server a --server=b", want: map[string]string{"server": "a", "server=b": "true"}},
		{in: "--config '/home/me/argo cd/config'", want: map[string]string{"config": "/home/me/argo cd/config"}},
		{in: `--header "X-Team: \"a\""`, want: map[string]string{"header": `X-Team: "a"`}},
		{in: `--config /a\ b`, want: map[string]string{"config": "/a b"}},
		{in: "--insecure false", want: map[string]string{"insecure": "false"}},
		{in: "argocd.example.com", err: `"argocd.example.com" is neither`},
		{in: "--server a b", err: `"b" is neither`},
		{in: "--server 'a", err: "single quote is not closed"},
		{in: `--server "a`, err: "double quote is not closed"},
		{in: `--server a\`, err: "ends with a backslash"},
	} {
		got, err := parseArgocdOpts(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// FuzzShellSplit: words quoted as a shell quotes them split back into the
// same words, and no input makes the ARGOCD_OPTS parser panic.
func FuzzShellSplit(f *testing.F) {
	f.Add("--server a.example.com", "it's")
	f.Add(`--header "x: y"`, `a\b"c`)
	f.Fuzz(func(t *testing.T, line, word string) {
		_, _ = parseArgocdOpts(line)
		if strings.ContainsRune(word, 0) {
			return
		}
		quoted := "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
		got, err := shellSplit("--x " + quoted + " \t" + quoted)
		if err != nil || len(got) != 3 || got[1] != word || got[2] != word {
			t.Fatalf("split of %q: %q, %v", quoted, got, err)
		}
	})
}

// TestArgocdCLIHabits: --server, ARGOCD_OPTS and ARGOCD_SERVER reach
// argocd-server in the argocd CLI's order (the command line, then
// ARGOCD_OPTS, then the variables); what driftfix cannot do is an error and
// what it does not use is said.
func TestArgocdCLIHabits(t *testing.T) {
	t.Setenv("ARGOCD_CONFIG_DIR", t.TempDir()) // no argocd login
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	t.Setenv("ARGOCD_OPTS", "")
	srv, tokenFile := liveServer(t, time.Now())
	host := strings.TrimPrefix(srv.URL, "http://")
	closed := strings.TrimPrefix(closedURL(t), "http://")
	quiet := []string{"scan", "--no-kube", "--repo-files=false", "--argocd-timeout", "2s"}
	for _, tc := range []struct {
		name, opts, server string
		args               []string
		code               int
		want               string // in stdout (exit 1) or stderr
	}{
		{name: "--server as --argocd-server", args: []string{"--server", host, "--plaintext", "--argocd-token-file", tokenFile}, code: exitDrift, want: "1 stuck"},
		{name: "ARGOCD_OPTS alone", opts: "--server " + host + " --plaintext --auth-token " + liveToken, code: exitDrift, want: "1 stuck"},
		{name: "ARGOCD_OPTS --key=value", opts: "--server=" + host + " --plaintext --auth-token=" + liveToken, code: exitDrift, want: "1 stuck"},
		{name: "the command line over ARGOCD_OPTS", opts: "--server " + closed + " --plaintext", args: []string{"--server", host, "--argocd-token-file", tokenFile}, code: exitDrift, want: "1 stuck"},
		{name: "ARGOCD_OPTS over ARGOCD_SERVER", opts: "--server " + host + " --plaintext", server: closed, args: []string{"--argocd-token-file", tokenFile}, code: exitDrift, want: "1 stuck"},
		{name: "ARGOCD_SERVER alone", server: host, args: []string{"--plaintext", "--argocd-token-file", tokenFile}, code: exitDrift, want: "1 stuck"},
		{name: "a refused token names ARGOCD_OPTS", opts: "--server " + host + " --plaintext --auth-token expired", code: exitUsage, want: "token from ARGOCD_OPTS --auth-token"},
		{name: "plain http from ARGOCD_OPTS", opts: "--server http://" + host + " --auth-token x", code: exitUsage, want: "ARGOCD_OPTS --server http://" + host + " is plain http"},
		{name: "port-forward is refused", opts: "--port-forward --port-forward-namespace argocd", code: exitUsage, want: "ARGOCD_OPTS: --port-forward"},
		{name: "core is refused", opts: "--core", code: exitUsage, want: "--core reads Kubernetes directly"},
		{name: "unused flags are said", opts: "--server " + host + " --plaintext --loglevel debug --http-retry-max 3", args: []string{"--argocd-token-file", tokenFile}, code: exitDrift, want: "ARGOCD_OPTS --http-retry-max --loglevel: not used by driftfix"},
		{name: "a value is never said", opts: "--server " + host + " --plaintext --auth-token=" + liveToken + " --header=X-Token:" + liveToken, code: exitDrift, want: "ARGOCD_OPTS --header: not used by driftfix"},
		{name: "a bad boolean", opts: "--insecure maybe", code: exitUsage, want: `ARGOCD_OPTS --insecure "maybe": want true or false`},
		{name: "a bad ARGOCD_OPTS", opts: "argocd.example.com", code: exitUsage, want: `ARGOCD_OPTS: "argocd.example.com" is neither`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ARGOCD_OPTS", tc.opts)
			t.Setenv("ARGOCD_SERVER", tc.server)
			code, out, stderr := runCLI(append(append([]string{}, quiet...), tc.args...)...)
			if code != tc.code || !strings.Contains(out+stderr, tc.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s%s", code, tc.code, tc.want, out, stderr)
			}
			if strings.Contains(out+stderr, liveToken) {
				t.Fatal("the token was printed")
			}
		})
	}
}

// TestScanNarrowed: scan's --selector, --project and --app-namespace narrow
// the applications argocd-server lists, and -o name prints one
// NAMESPACE/APP per stuck application, as argocd app list -o name.
func TestScanNarrowed(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", liveToken)
	t.Setenv("ARGOCD_OPTS", "")
	now := time.Now()
	var snaps []*drift.Snapshot
	for _, a := range []struct{ file, team, project, ns string }{
		{"01-hpa-statefulset.yaml", "data", "data", "argocd"},
		{"21-manual-kubectl-patch.yaml", "shop", "shop", "shop-apps"},
		{"11-builtin-quantity-hidden.yaml", "shop", "web", "argocd"},
	} {
		s, err := drift.LoadSnapshot(filepath.Join("../../testdata/cases", a.file))
		if err != nil {
			t.Fatal(err)
		}
		drift.Map(s.Application, "spec", "source")["repoURL"] = "file:///nonexistent/" + a.file + ".git"
		drift.Map(s.Application, "spec")["project"] = a.project
		md := drift.Map(s.Application, "metadata")
		md["namespace"], md["labels"] = a.ns, map[string]any{"team": a.team}
		st := drift.Map(s.Application, "status")
		st["sync"] = map[string]any{"status": "OutOfSync"}
		st["operationState"] = map[string]any{"phase": "Succeeded", "startedAt": now.Add(-time.Hour).Format(time.RFC3339), "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
		snaps = append(snaps, s)
	}
	srv := argocdtest.NewServer(liveToken, snaps...)
	t.Cleanup(srv.Close)
	base := []string{"scan", "--server", srv.URL, "--plaintext", "--no-kube", "--repo-files=false", "-o", "name"}
	all := "argocd/queue\nshop-apps/orders\nargocd/web\n"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"everything", nil, all},
		{"a label", []string{"-l", "team=shop"}, "shop-apps/orders\nargocd/web\n"},
		{"a set selector", []string{"--selector", "team in (data)"}, "argocd/queue\n"},
		{"a project", []string{"-p", "web"}, "argocd/web\n"},
		{"two projects", []string{"-p", "web", "--project", "data"}, "argocd/queue\nargocd/web\n"},
		{"a namespace", []string{"--app-namespace", "shop-apps"}, "shop-apps/orders\n"},
		{"all three", []string{"-l", "team=shop", "-p", "shop", "-N", "argocd"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runCLI(append(append([]string{}, base...), tc.args...)...)
			wantCode := exitDrift
			if tc.want == "" {
				wantCode = exitClean
			}
			if code != wantCode || !sameLines(out, tc.want) {
				t.Fatalf("exit %d, want %d; printed %q, want the lines of %q\n%s", code, wantCode, out, tc.want, stderr)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-l", "team in (data"}, `--selector "team in (data"`},
		{[]string{"-p", "Not_A_Project"}, `--project "Not_A_Project"`},
		{[]string{"--app-namespace", "Bad/NS"}, `--app-namespace "Bad/NS"`},
	} {
		code, _, stderr := runCLI(append(append([]string{}, base...), tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %s; want exit 2 naming %s", tc.args, code, stderr, tc.want)
		}
	}
}

// sameLines says whether a and b hold the same lines, in any order.
func sameLines(a, b string) bool {
	la, lb := strings.Split(strings.TrimSpace(a), "\n"), strings.Split(strings.TrimSpace(b), "\n")
	if len(la) != len(lb) {
		return false
	}
	seen := map[string]int{}
	for _, l := range la {
		seen[l]++
	}
	for _, l := range lb {
		seen[l]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
