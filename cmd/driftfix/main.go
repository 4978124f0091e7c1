// Command driftfix finds why Argo CD applications stay OutOfSync and proposes
// the narrowest fix.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

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

const usage = `driftfix finds why Argo CD applications stay OutOfSync and proposes the narrowest fix.

Usage:
  driftfix diagnose --snapshot FILE [-o text|json|yaml]
  driftfix diagnose APP --argocd-server URL [--app-namespace NS] [-o ...]
  driftfix snapshot APP --argocd-server URL [--app-namespace NS] [-o json|yaml] [-f FILE]
  driftfix scan --argocd-server URL [--stuck-after 10m] [-o text|json|yaml]
  driftfix fix --snapshot FILE [--repo DIR] [--dry-run] [-o text|json|yaml]
  driftfix ignores --snapshot FILE... [--repo DIR] [-o text|json|yaml]
  driftfix ignores --argocd-server URL [--repo DIR] [-o ...]   every active ignore rule and what it hides
  driftfix predict --repo DIR --base REV [--head REV] [-o text|json|sarif] [--all] [--app PATH] [--cluster FILE]   what a change will leave OutOfSync
  driftfix run --config FILE [--listen :8080] [--dry-run] [--leader-elect]
  driftfix once --config FILE [--dry-run]   exit 0 when the cycle ran, 1 when it could not scan or publish
  driftfix config validate FILE
  driftfix setup github-app [--org ORG] [--dir DIR]   create the GitHub App from its manifest; writes its id and key (0600)
  driftfix causes        print the causes driftfix names, in the order they are tried
  driftfix fixes         print the fix kinds driftfix plans, in order of preference
  driftfix version

-o and --output name the output format (--format, the older name, works too);
snapshot writes to a file with -f or --output-file.
The Argo CD API token is read from --argocd-token-file or ARGOCD_AUTH_TOKEN.

Run "driftfix COMMAND -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks an error in how the command was called.
var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var (
		code int
		err  error
	)
	switch args[0] {
	case "diagnose":
		code, err = cmdDiagnose(ctx, args[1:], stdout, stderr)
	case "snapshot":
		code, err = cmdSnapshot(ctx, args[1:], stdout, stderr)
	case "scan":
		code, err = cmdScan(ctx, args[1:], stdout, stderr, time.Now())
	case "fix":
		code, err = cmdFix(ctx, args[1:], stdout, stderr, time.Now())
	case "ignores":
		code, err = cmdIgnores(ctx, args[1:], stdout, stderr, time.Now())
	case "predict":
		code, err = cmdPredict(ctx, args[1:], stdout, stderr)
	case "run":
		code, err = cmdRun(ctx, args[1:], stdout, stderr)
	case "once":
		code, err = cmdOnce(ctx, args[1:], stdout, stderr, time.Now())
	case "config":
		code, err = cmdConfig(args[1:], stdout, stderr)
	case "setup":
		code, err = cmdSetup(ctx, args[1:], stdout, stderr)
	case "causes":
		return cmdCauses(stdout)
	case "fixes":
		return cmdFixes(stdout)
	case "version", "--version":
		fmt.Fprintln(stdout, versionString())
		return exitClean
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitClean
	default:
		fmt.Fprintf(stderr, "driftfix: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitClean
		}
		if !errors.As(err, new(loggedError)) {
			fmt.Fprintf(stderr, "driftfix %s: %v\n", args[0], err)
		}
		if code == exitClean {
			code = exitUsage
		}
		return code
	}
	return code
}

func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return "driftfix " + v
}
