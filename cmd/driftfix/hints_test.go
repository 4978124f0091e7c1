package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

var (
	// flagWord is a --flag as a hint or help names it.
	flagWord = regexp.MustCompile("(?:^|[\\s(`\"'\\[=,/])--([a-z][a-z0-9-]*)")
	// foreign is a command line of another program in a hint (kubectl,
	// helm, git, go, xargs or an argocd command other than driftfix): its
	// flags are that program's, up to the end of the clause.
	foreign = regexp.MustCompile(`\b(kubectl|helm|git|go|xargs|argocd (?:login|app|account|proj|repo|cluster|context|admin|version))\b[^;\n)]*?(?: and |[;\n)]|$)`)
	// ownCommand is a driftfix command line in a hint: its flags are that
	// command's, up to the end of the clause.
	ownCommand = regexp.MustCompile(`\bdriftfix ((?:[a-z][a-z-]* ?){1,2})([^;\n)]*?)(?: and |[;\n)]|$)`)
	// typed is cobra's answer to a flag the user typed: not a hint.
	typed = regexp.MustCompile(`unknown (?:shorthand )?flag: '?-[^\s']+`)
)

// TestHintsNameOwnFlags walks the command tree and runs every command as a
// new user would (no arguments, --help, against a live Argo CD without a
// kubeconfig, with a policy file): every --flag it prints, in an error, a
// hint, a warning or its help, is a flag of that command, unless it is
// another program's (kubectl ..., argocd login ...).
func TestHintsNameOwnFlags(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("ARGOCD_CONFIG_DIR", home)
	t.Setenv("KUBECONFIG", filepath.Join(home, "no-kubeconfig"))
	for _, v := range []string{"ARGOCD_SERVER", "ARGOCD_AUTH_TOKEN", "ARGOCD_OPTS", "KUBERNETES_SERVICE_HOST"} {
		t.Setenv(v, "")
	}
	srv, tokenFile := liveServer(t, time.Now())
	policy := filepath.Join(home, "driftfix.yaml")
	if err := os.WriteFile(policy, []byte("stateFile: "+filepath.Join(home, "state.db")+"\nargocd:\n  - name: test\n    insecurePlaintext: true\n    server: "+srv.URL+"\n    tokenFile: "+tokenFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	snapshot := "../../testdata/cases/01-hpa-statefulset.yaml"
	// Commands that serve until stopped or print another program's text.
	onlyHelp := map[string]bool{"run": true, "setup github-app": true, "completion": true}
	c := &cli{ctx: context.Background(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, now: time.Now}
	checked := 0
	root := c.root("driftfix")
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.HasSubCommands() {
			for _, sub := range cmd.Commands() {
				walk(sub)
			}
			return
		}
		path := strings.Fields(strings.TrimPrefix(cmd.CommandPath(), "driftfix"))
		name := strings.Join(path, " ")
		// predict is on Go's flag package until it moves to cobra.
		if name == "help" || name == "predict" || cmd.Hidden {
			return
		}
		has := func(f string) bool { return cmd.Flags().Lookup(f) != nil }
		variants := [][]string{{"--help"}}
		if !onlyHelp[name] && !onlyHelp[path[0]] {
			variants = append(variants, nil, []string{policy}, []string{snapshot}, []string{"--snapshot", snapshot})
			if has("argocd-server") {
				live := []string{"--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--repo-files=false"}
				variants = append(variants, live, append([]string{"queue"}, live...))
			}
			if has("config") {
				variants = append(variants, []string{"--config", policy})
				if has("dry-run") {
					variants = append(variants, []string{"--config", policy, "--dry-run"})
				}
			}
		}
		for _, v := range variants {
			args := append(append([]string{}, path...), v...)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			code, out, stderr := runCLIContext(ctx, args...)
			cancel()
			text := typed.ReplaceAllString(out+"\n"+stderr, " ")
			text = foreign.ReplaceAllString(text, " ")
			type named struct {
				flag string
				of   *cobra.Command
			}
			var flags []named
			text = ownCommand.ReplaceAllStringFunc(text, func(clause string) string {
				m := ownCommand.FindStringSubmatch(clause)
				target, _, err := root.Find(strings.Fields(m[1]))
				if err != nil || target == root {
					target = cmd
				}
				for _, f := range flagWord.FindAllStringSubmatch(m[2], -1) {
					flags = append(flags, named{f[1], target})
				}
				return " "
			})
			for _, f := range flagWord.FindAllStringSubmatch(text, -1) {
				flags = append(flags, named{f[1], cmd})
			}
			for _, n := range flags {
				f := n.flag
				if f == "help" || n.of.Flags().Lookup(f) != nil || n.of.InheritedFlags().Lookup(f) != nil {
					continue
				}
				line := ""
				for _, l := range strings.Split(out+"\n"+stderr, "\n") {
					if strings.Contains(l, "--"+f) {
						line = l
						break
					}
				}
				t.Errorf("driftfix %s (exit %d) names --%s, which %q does not take:\n  %s", strings.Join(args, " "), code, f, n.of.CommandPath(), strings.TrimSpace(line))
			}
			checked++
		}
	}
	walk(root)
	if checked < 40 {
		t.Fatalf("only %d runs checked", checked)
	}
	t.Logf("%d runs checked", checked)
}

// runCLIContext is runCLI with a context.
func runCLIContext(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}
