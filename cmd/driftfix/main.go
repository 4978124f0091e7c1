// Command driftfix finds why Argo CD applications stay OutOfSync and proposes
// the narrowest fix.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	// The time zone database inside the binary: a policy's
	// quietHours.timezone resolves in an image without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// Exit codes follow `argocd app diff`: 0 nothing differs, 1 drift found, 2 bad
// input or usage.
const (
	exitClean = 0
	exitDrift = 1
	exitUsage = 2
	// exitFailed is once's: the cycle could not scan an instance or publish.
	exitFailed = 1
)

// version and revision are set at build time with -ldflags
// "-X main.version=... -X main.revision=..."; without a revision, the one Go
// recorded from the checkout is used.
var (
	version  = "dev"
	revision = ""
)

// buildRevision is the source revision the binary was built from, "unknown"
// when neither the build nor Go recorded it.
func buildRevision() string {
	if revision != "" {
		return revision
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	switch {
	case rev == "":
		return "unknown"
	case modified == "true":
		return rev + "-dirty"
	}
	return rev
}

// about is the root command's description, shown by `driftfix help`.
const about = `driftfix finds why Argo CD applications stay OutOfSync and proposes the narrowest fix.

The Argo CD server and token come from --argocd-server (or --server) and
--argocd-token-file, else --server and --auth-token in ARGOCD_OPTS, else
ARGOCD_SERVER and ARGOCD_AUTH_TOKEN, else the current context of the argocd
CLI (what "argocd login" wrote), as the argocd CLI takes them. Installed on PATH as argocd-driftfix, driftfix
runs as an argocd CLI plugin: "argocd driftfix scan".

Exit codes, as "argocd app diff": 0 nothing differs, 1 drift found, 2 bad input.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, pluginName(os.Args[0]))
	stop()
	os.Exit(code)
}

// pluginName is how the user typed the command: "argocd driftfix" when the
// binary runs as the argocd CLI's plugin argocd-driftfix, else "driftfix".
func pluginName(arg0 string) string {
	if strings.HasPrefix(filepath.Base(arg0), "argocd-") {
		return "argocd " + strings.TrimPrefix(filepath.Base(arg0), "argocd-")
	}
	return "driftfix"
}

// cli is one invocation: where it writes, its raw arguments (to name a flag
// as it was typed) and the exit code its command chose.
type cli struct {
	ctx            context.Context
	stdout, stderr io.Writer
	args           []string
	code           int
	now            func() time.Time // the time a scan or cycle judges by
}

// runE adapts a command body returning an exit code to cobra.
func (c *cli) runE(f func(cmd *cobra.Command, args []string) (int, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		code, err := f(cmd, args)
		c.code = code
		return err
	}
}

// root builds the command tree. name is the command as typed ("driftfix",
// or "argocd driftfix" as a plugin).
func (c *cli) root(name string) *cobra.Command {
	root := &cobra.Command{
		Use:               "driftfix",
		Short:             "Find why Argo CD applications stay OutOfSync and propose the narrowest fix",
		Long:              about,
		Version:           versionString(),
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{},
		Annotations:       map[string]string{cobra.CommandDisplayNameAnnotation: name},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		// Go's flag package took -name for --name; pflag reads -name as -n -a ...
		for _, a := range c.args {
			if a == "--" {
				break
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
			if len(a) > 2 && a[0] == '-' && a[1] != '-' && cmd.Flags().Lookup(name) != nil && len(name) > 1 {
				return fmt.Errorf("%s: a long flag takes two dashes: --%s (see %s --help)", a, strings.TrimPrefix(a, "-"), cmd.CommandPath())
			}
		}
		return fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())
	})
	root.AddGroup(&cobra.Group{ID: "read", Title: "Read-only commands:"}, &cobra.Group{ID: "bot", Title: "The bot:"}, &cobra.Group{ID: "ref", Title: "Reference:"})
	for _, sub := range []*cobra.Command{c.diagnoseCmd(), c.snapshotCmd(), c.scanCmd(), c.fixCmd(), c.ignoresCmd(), c.predictCmd()} {
		sub.GroupID = "read"
		root.AddCommand(sub)
	}
	for _, sub := range []*cobra.Command{c.runCmd(), c.onceCmd(), c.configCmd(), c.setupCmd()} {
		sub.GroupID = "bot"
		root.AddCommand(sub)
	}
	for _, sub := range []*cobra.Command{c.causesCmd(), c.fixesCmd(), c.versionCmd(), c.docsCmd(), c.demoCmd()} {
		sub.GroupID = "ref"
		root.AddCommand(sub)
	}
	root.SetHelpCommandGroupID("ref")
	root.SetCompletionCommandGroupID("ref")
	return root
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, name ...string) int {
	display := "driftfix"
	if len(name) > 0 {
		display = name[0]
	}
	c := &cli{ctx: ctx, stdout: stdout, stderr: stderr, args: args, now: time.Now}
	if len(args) == 0 {
		root := c.root(display)
		root.SetOut(stderr)
		root.Help()
		return exitUsage
	}
	code, cmd, err := c.execute(display)
	if err == nil {
		return code
	}
	if !errors.As(err, new(loggedError)) {
		path := display
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
	}
	return code
}

// execute runs the command c.args name; an error comes back unprinted, with
// exit code 2 unless the command chose another.
func (c *cli) execute(display string) (int, *cobra.Command, error) {
	root := c.root(display)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetArgs(c.args)
	cmd, err := root.ExecuteC()
	if err != nil && c.code == exitClean {
		return exitUsage, cmd, err
	}
	return c.code, cmd, err
}

func (c *cli) versionCmd() *cobra.Command {
	return &cobra.Command{Use: "version", Short: "Print the version", Args: cobra.NoArgs,
		RunE: c.runE(func(*cobra.Command, []string) (int, error) {
			fmt.Fprintln(c.stdout, versionString())
			return exitClean, nil
		})}
}

func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return "driftfix " + v
}
