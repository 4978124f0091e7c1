// Package proc runs one render in a process of its own: the running binary
// started again, its request on stdin and its reply on stdout, off the
// network, bounded in memory and CPU by the operating system and killed with
// its process group at its deadline. It is the one place under remediations
// that starts processes and touches the OS; render decides what runs in it.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Env marks a process started by Run.
const Env = "DRIFTFIX_RENDER_CHILD"

// Executable is the binary Run starts; tests replace it.
var Executable = os.Executable

// Bounds are what a render process may use. A zero or negative field is no bound.
type Bounds struct {
	Memory  int64         // address space it may add to what it holds when bounded (RLIMIT_AS)
	CPU     time.Duration // CPU time (RLIMIT_CPU, whole seconds rounded up)
	Timeout time.Duration // wall-clock time, after which Run kills it
	Output  int64         // bytes of stdout kept; more is noted as Result.OutputOver
}

// Result is how a render process ended.
type Result struct {
	Stdout     []byte
	Stderr     string // its first words, bounded
	OutputOver bool   // it wrote more than Bounds.Output
	TimedOut   bool   // it ran past Bounds.Timeout and was killed
	Stopped    bool   // Run's context was done while it ran: it was killed
	Signaled   bool   // it ended by a signal
	CPU        time.Duration
	Took       time.Duration
	Err        error // from waiting for it: its exit status
}

// stderrMax bounds what is kept of a render process's stderr.
const stderrMax = 16 << 10

// Run starts the running binary as a render process with in on its stdin
// and waits for it, killing it and its process group at b.Timeout or when
// ctx is done (Result.Stopped). started, when not nil, is told its process
// id. The error is that no process could be started, or that ctx was done
// before it was; how the process ended is in the Result.
func Run(ctx context.Context, in []byte, b Bounds, started func(pid int)) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("start a render process: %w", context.Cause(ctx))
	}
	exe, err := Executable()
	if err != nil {
		return Result{}, fmt.Errorf("find the binary to start a render process: %w", err)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	if b.Timeout > 0 {
		ctx, cancel = context.WithTimeout(parent, b.Timeout)
	}
	defer cancel()
	stdout, stderr := &capped{max: -1}, &capped{max: stderrMax}
	if b.Output > 0 {
		stdout.max = b.Output
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = Environ()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), stdout, stderr
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return killTree(cmd.Process) }
	cmd.WaitDelay = time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start a render process (%s): %w", exe, err)
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	waitErr := cmd.Wait()
	killTree(cmd.Process) // anything the render left in its process group
	st := cmd.ProcessState
	return Result{Stdout: stdout.buf.Bytes(), Stderr: strings.TrimSpace(stderr.buf.String()), OutputOver: stdout.over,
		TimedOut: parent.Err() == nil && ctx.Err() == context.DeadlineExceeded, Stopped: parent.Err() != nil, Signaled: st.ExitCode() == -1,
		CPU: st.UserTime() + st.SystemTime(), Took: time.Since(start), Err: waitErr}, nil
}

// Environ is a render process's whole environment: the marker, an empty
// PATH (nothing to run, no git) and no proxy or other setting of the bot's,
// so no credential reaches it; GOTRACEBACK=none keeps a crash's words short.
func Environ() []string {
	return []string{Env + "=1", "PATH=", "GOTRACEBACK=none"}
}

// Serve makes this process a render process when Run started it: it runs
// serve with its stdin and stdout and exits with the code serve returns.
// Otherwise it returns at once. Call it from an init, so that the process
// does nothing else first.
func Serve(serve func(in io.Reader, out io.Writer) int) {
	if os.Getenv(Env) == "1" {
		os.Exit(serve(os.Stdin, os.Stdout))
	}
}

// Warnf writes a render process's note to its stderr, which Run keeps.
func Warnf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// Exit ends the render process at once.
func Exit() { os.Exit(0) }

// OutOfMemory reports whether a Go process's last words are those of an
// allocation its address-space limit refused (the race detector's runtime
// reports the refusal as address space collisions, or as its own allocator
// failing to map memory).
func OutOfMemory(said string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "address space collisions", "ThreadSanitizer failed to allocate"} {
		if strings.Contains(said, s) {
			return true
		}
	}
	return false
}

// ErrNoNetwork is what any connection a render process tries gets.
var ErrNoNetwork = errors.New("a render process has no network")

type refuse struct{}

func (refuse) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Redacted(), ErrNoNetwork)
}

// Isolate takes this process off the network as far as Go code reaches it:
// the default HTTP transport and client refuse, DNS lookups refuse, PATH is
// empty and no proxy is set.
func Isolate() {
	http.DefaultTransport = refuse{}
	http.DefaultClient = &http.Client{Transport: refuse{}}
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, ErrNoNetwork
	}}
	os.Setenv("PATH", "")
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy"} {
		os.Unsetenv(v)
	}
}

// Bound applies b's memory and CPU bounds to this process (see Bounds). The
// channel is closed when the CPU bound is reached; the kernel kills the
// process a second later.
func Bound(b Bounds) (<-chan struct{}, error) {
	sig, err := applyLimits(b)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	if sig != nil {
		go func() {
			<-sig
			close(done)
		}()
	}
	return done, nil
}

// capped keeps the first max bytes written to it (max < 0: all), and notes
// that more came; it never fails a write, so the writer is never blocked.
type capped struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int64
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - int64(c.buf.Len()); c.max >= 0 && int64(len(p)) > room {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}
