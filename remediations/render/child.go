package render

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

// childEnv marks a process started to run one render. The package's init
// turns such a process into a render child before anything else runs.
const childEnv = "DRIFTFIX_RENDER_CHILD"

func init() {
	if os.Getenv(childEnv) == "1" {
		os.Exit(serveChild(os.Stdin, os.Stdout))
	}
	registerWireTypes()
}

// registerWireTypes names the dynamic types values and manifests hold, so
// that gob can carry them between the bot and a render process.
func registerWireTypes() {
	gob.Register(map[string]any{})
	gob.Register([]any{})
	gob.Register(map[any]any{})
}

// childRequest is one render, sent to a render process on its stdin.
type childRequest struct {
	Kind   string // "helm" or "kustomize"
	Files  map[string][]byte
	Helm   HelmOptions // Kind "helm"
	Dir    string      // Kind "kustomize"
	Limits Limits
}

// childReply is what a render process writes on its stdout.
type childReply struct {
	Objects []drift.Object
	Err     *wireError
}

// wireError carries a render's error across the process boundary with the
// typed error inside it, so errors.As still finds a LimitError or RemoteError.
type wireError struct {
	Message string
	Limit   *LimitError
	Remote  *RemoteError
}

// renderError is a render's error as the render process reported it.
type renderError struct {
	msg   string
	inner error
}

func (e *renderError) Error() string { return e.msg }
func (e *renderError) Unwrap() error { return e.inner }

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Message: err.Error()}
	var le *LimitError
	var re *RemoteError
	if errors.As(err, &le) {
		w.Limit = le
	} else if errors.As(err, &re) {
		w.Remote = re
	}
	return w
}

func (w *wireError) err() error {
	switch {
	case w.Limit != nil:
		return &renderError{w.Message, w.Limit}
	case w.Remote != nil:
		return &renderError{w.Message, w.Remote}
	}
	return errors.New(w.Message)
}

// executable is the binary a render process runs; tests replace it.
var executable = os.Executable

// childStarted, when set (by tests), is told the id of each render process.
var childStarted func(pid int)

// stderrMax bounds what is kept of a render process's stderr.
const stderrMax = 16 << 10

// inChild runs req in a render process and returns its manifests. what
// names the render in errors. A render process that cannot be started is an
// error: a render never falls back to running in the bot's own process.
func inChild(what string, req childRequest) ([]drift.Object, error) {
	lim := req.Limits
	if !osBounded {
		warnUnbounded()
	}
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("%s: find the binary to start a render process: %w", what, err)
	}
	var in bytes.Buffer
	if err := gob.NewEncoder(&in).Encode(req); err != nil {
		return nil, fmt.Errorf("%s: send the render to its process: %w", what, err)
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if lim.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, lim.Timeout)
	}
	defer cancel()
	// The reply is the manifests once more, gob-encoded: allow for the encoding.
	outMax := int64(-1)
	if lim.MaxRenderedBytes >= 0 {
		outMax = 4*lim.MaxRenderedBytes + 1<<20
	}
	stdout, stderr := &capped{max: outMax}, &capped{max: stderrMax}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = childEnviron()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, stdout, stderr
	cmd.SysProcAttr = childProcAttr()
	cmd.Cancel = func() error { return killTree(cmd.Process) }
	cmd.WaitDelay = time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start a render process (%s): %w", what, exe, err)
	}
	if childStarted != nil {
		childStarted(cmd.Process.Pid)
	}
	waitErr := cmd.Wait()
	killTree(cmd.Process) // anything the render left in its process group
	took := time.Since(start)
	slog.Debug("render process ended", "render", what, "pid", cmd.Process.Pid, "took", took, "state", cmd.ProcessState.String())
	if ctx.Err() == context.DeadlineExceeded {
		return nil, &LimitError{Limit: "Timeout", What: what, Got: "still running after " + took.Round(time.Millisecond).String() + ", killed", Max: lim.Timeout.String()}
	}
	var reply childReply
	if waitErr == nil && !stdout.over {
		if err := gob.NewDecoder(bytes.NewReader(stdout.buf.Bytes())).Decode(&reply); err == nil {
			if reply.Err != nil {
				return nil, reply.Err.err()
			}
			return reply.Objects, nil
		}
	}
	return nil, childFailure(what, lim, cmd.ProcessState, waitErr, stdout, stderr)
}

// childFailure explains a render process that gave no reply: the limit it
// ran into when one explains it, otherwise how it ended and what it said.
func childFailure(what string, lim Limits, st *os.ProcessState, waitErr error, stdout, stderr *capped) error {
	said := strings.TrimSpace(stderr.buf.String())
	switch {
	case stdout.over:
		return &LimitError{Limit: "MaxRenderedBytes", What: what, Got: "a reply over " + humanBytes(float64(stdout.max)), Max: humanBytes(float64(lim.MaxRenderedBytes))}
	case lim.MaxMemory > 0 && outOfMemory(said):
		return &LimitError{Limit: "MaxMemory", What: what, Got: "ran out of address space and stopped", Max: humanBytes(float64(lim.MaxMemory))}
	case st != nil && st.ExitCode() == -1 && lim.MaxCPU > 0 && st.UserTime()+st.SystemTime() >= lim.MaxCPU:
		return &LimitError{Limit: "MaxCPU", What: what, Got: (st.UserTime() + st.SystemTime()).Round(time.Millisecond).String() + " of CPU, killed", Max: lim.MaxCPU.String()}
	}
	if len(said) > 2048 { // what a process says first says most (a panic, a fatal error)
		said = said[:2048]
		if i := strings.LastIndexByte(said, '\n'); i > 0 {
			said = said[:i]
		}
		said += "\n…"
	}
	if waitErr == nil {
		waitErr = errors.New("no reply")
	}
	return fmt.Errorf("%s: the render process failed: %w: %s", what, waitErr, said)
}

// outOfMemory reports whether a Go process's last words are those of an
// allocation its address space limit refused (the race detector's runtime
// reports the refusal as address space collisions).
func outOfMemory(said string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "address space collisions"} {
		if strings.Contains(said, s) {
			return true
		}
	}
	return false
}

// childEnviron is a render process's whole environment: the marker, an
// empty PATH (nothing to run, no git) and no proxy or other setting of the
// bot's, so no credential reaches it.
func childEnviron() []string {
	return []string{childEnv + "=1", "PATH=", "GOTRACEBACK=none"}
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

// errNoNetwork is what any connection a render process tries gets.
var errNoNetwork = errors.New("a render process has no network")

type refuse struct{}

func (refuse) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Redacted(), errNoNetwork)
}

// isolate takes this process off the network as far as Go code reaches it:
// the default HTTP transport and client refuse, DNS lookups refuse, PATH is
// empty and no proxy is set.
func isolate() {
	http.DefaultTransport = refuse{}
	http.DefaultClient = &http.Client{Transport: refuse{}}
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errNoNetwork
	}}
	os.Setenv("PATH", "")
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy"} {
		os.Unsetenv(v)
	}
}

// serveChild is a render process: it reads one childRequest from in, runs it
// under its limits and writes one childReply to out. It returns the exit code.
func serveChild(in io.Reader, out io.Writer) int {
	registerWireTypes()
	var req childRequest
	if err := gob.NewDecoder(in).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "read the render request: %v\n", err)
		return 3
	}
	isolate()
	var once sync.Once
	reply := func(objs []drift.Object, err error) {
		once.Do(func() {
			if err := gob.NewEncoder(out).Encode(childReply{Objects: objs, Err: toWire(err)}); err != nil {
				fmt.Fprintf(os.Stderr, "write the render reply: %v\n", err)
			}
		})
	}
	what := req.Kind
	if req.Kind == "helm" {
		what = "chart " + strings.Trim(req.Helm.ChartDir, "/")
	} else {
		what = "kustomize build " + req.Dir
	}
	cpu, err := applyLimits(req.Limits)
	if err != nil {
		reply(nil, fmt.Errorf("%s: bound the render process: %w", what, err))
		return 0
	}
	go func() {
		if _, ok := <-cpu; ok {
			reply(nil, &LimitError{Limit: "MaxCPU", What: what, Got: "more than " + req.Limits.MaxCPU.String() + " of CPU, stopped", Max: req.Limits.MaxCPU.String()})
			os.Exit(0)
		}
	}()
	// The parent kills the process at the deadline; nothing is abandoned here.
	lim := req.Limits
	lim.Timeout = -1
	objs, err := func() (objs []drift.Object, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%s: %v", what, r)
			}
		}()
		switch req.Kind {
		case "helm":
			opts := req.Helm
			opts.Limits = lim
			return helm(req.Files, opts)
		case "kustomize":
			return kustomizeChecked(req.Files, req.Dir, lim)
		}
		return nil, fmt.Errorf("unknown render kind %q", req.Kind)
	}()
	reply(objs, err)
	return 0
}

// warnUnbounded logs once that renders are not bounded by the OS here.
var warnUnbounded = sync.OnceFunc(func() {
	slog.Warn("render processes are not bounded in memory and CPU on this system; only their deadline applies", "os", runtime.GOOS)
})
