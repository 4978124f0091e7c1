package render

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render/internal/proc"
)

// A process started to run one render serves it from the package's init,
// before anything else of the binary runs (see proc.Serve).
func init() {
	proc.Serve(serveChild)
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
	Kind    string // "helm", "kustomize" or "jsonnet"
	Files   map[string][]byte
	Helm    HelmOptions    // Kind "helm"
	Dir     string         // Kind "kustomize"
	Jsonnet JsonnetOptions // Kind "jsonnet"
	Unread  Unread         // Kind "kustomize"
	// BuildOptions are argocd-cm's kustomize.buildOptions (Kind "kustomize"),
	// parsed again in the render process.
	BuildOptions string
	Limits       Limits
}

// childReply is what a render process writes on its stdout.
type childReply struct {
	Objects []drift.Object
	Counts  []int // Kind "jsonnet": how many of Objects each file gave
	Err     *wireError
}

// wireError carries a render's error across the process boundary with the
// typed error inside it, so errors.As still finds a LimitError or RemoteError.
type wireError struct {
	Message string
	Limit   *LimitError
	Remote  *RemoteError
	Unread  *UnreadError
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
	var ue *UnreadError
	if errors.As(err, &le) {
		w.Limit = le
	} else if errors.As(err, &re) {
		w.Remote = re
	} else if errors.As(err, &ue) {
		w.Unread = ue
	}
	return w
}

func (w *wireError) err() error {
	switch {
	case w.Limit != nil:
		return &renderError{w.Message, w.Limit}
	case w.Remote != nil:
		return &renderError{w.Message, w.Remote}
	case w.Unread != nil:
		return &renderError{w.Message, w.Unread}
	}
	return errors.New(w.Message)
}

// childStarted, when set (by tests), is told the id of each render process.
var childStarted func(pid int)

// inChild runs req in a render process and returns its manifests. what
// names the render in errors. A render process that cannot be started is an
// error: a render never falls back to running in the bot's own process.
func inChild(what string, req childRequest) ([]drift.Object, error) {
	objs, _, err := inChildGroups(what, req)
	return objs, err
}

// inChildGroups is inChild with the reply's Counts.
func inChildGroups(what string, req childRequest) ([]drift.Object, []int, error) {
	lim := req.Limits
	if !proc.Bounded {
		warnUnbounded()
	}
	var in bytes.Buffer
	if err := gob.NewEncoder(&in).Encode(req); err != nil {
		return nil, nil, fmt.Errorf("%s: send the render to its process: %w", what, err)
	}
	b := proc.Bounds{Memory: lim.MaxMemory, CPU: lim.MaxCPU, Timeout: lim.Timeout}
	if lim.MaxRenderedBytes >= 0 {
		b.Output = 4*lim.MaxRenderedBytes + 1<<20 // the manifests once more, gob-encoded
	}
	ctx, cancel := stopContext(lim.Stop)
	defer cancel()
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, ErrStopped)
	}
	r, err := proc.Run(ctx, in.Bytes(), b, childStarted)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if r.Stopped {
		return nil, nil, fmt.Errorf("%s: %w (its process was killed after %s)", what, ErrStopped, r.Took.Round(time.Millisecond))
	}
	slog.Debug("render process ended", "render", what, "took", r.Took, "cpu", r.CPU, "err", r.Err)
	if r.TimedOut {
		return nil, nil, &LimitError{Limit: "Timeout", What: what, Got: "still running after " + r.Took.Round(time.Millisecond).String() + ", killed", Max: lim.Timeout.String()}
	}
	var reply childReply
	if r.Err == nil && !r.OutputOver {
		if err := gob.NewDecoder(bytes.NewReader(r.Stdout)).Decode(&reply); err == nil {
			if reply.Err != nil {
				return nil, nil, reply.Err.err()
			}
			return reply.Objects, reply.Counts, nil
		}
	}
	return nil, nil, childFailure(what, lim, r)
}

// childFailure explains a render process that gave no reply: the limit it
// ran into when one explains it, otherwise how it ended and what it said.
func childFailure(what string, lim Limits, r proc.Result) error {
	switch {
	case r.OutputOver:
		return &LimitError{Limit: "MaxRenderedBytes", What: what, Got: "a reply over " + humanBytes(float64(4*lim.MaxRenderedBytes)), Max: humanBytes(float64(lim.MaxRenderedBytes))}
	case lim.MaxMemory > 0 && proc.OutOfMemory(r.Stderr):
		return &LimitError{Limit: "MaxMemory", What: what, Got: "ran out of address space and stopped", Max: humanBytes(float64(lim.MaxMemory))}
	case r.Signaled && lim.MaxCPU > 0 && r.CPU >= lim.MaxCPU:
		return &LimitError{Limit: "MaxCPU", What: what, Got: r.CPU.Round(time.Millisecond).String() + " of CPU, killed", Max: lim.MaxCPU.String()}
	}
	said := r.Stderr
	if len(said) > 2048 { // what a process says first says most (a panic, a fatal error)
		said = said[:2048]
		if i := strings.LastIndexByte(said, '\n'); i > 0 {
			said = said[:i]
		}
		said += "\n…"
	}
	err := r.Err
	if err == nil {
		err = errors.New("no reply")
	}
	return fmt.Errorf("%s: the render process failed: %w: %s", what, err, said)
}

// serveChild is a render process: it reads one childRequest from in, runs it
// under its limits and writes one childReply to out. It returns the exit code.
func serveChild(in io.Reader, out io.Writer) int {
	registerWireTypes()
	var req childRequest
	if err := gob.NewDecoder(in).Decode(&req); err != nil {
		proc.Warnf("read the render request: %v", err)
		return 3
	}
	proc.Isolate()
	var once sync.Once
	reply := func(objs []drift.Object, counts []int, err error) {
		once.Do(func() {
			if err := gob.NewEncoder(out).Encode(childReply{Objects: objs, Counts: counts, Err: toWire(err)}); err != nil {
				proc.Warnf("write the render reply: %v", err)
			}
		})
	}
	what := "kustomize build " + req.Dir
	switch req.Kind {
	case "helm":
		what = "chart " + strings.Trim(req.Helm.ChartDir, "/")
	case "jsonnet":
		what = "jsonnet " + displayDir(req.Jsonnet.Dir)
	}
	cpu, err := proc.Bound(proc.Bounds{Memory: req.Limits.MaxMemory, CPU: req.Limits.MaxCPU})
	if err != nil {
		reply(nil, nil, fmt.Errorf("%s: bound the render process: %w", what, err))
		return 0
	}
	go func() {
		<-cpu
		reply(nil, nil, &LimitError{Limit: "MaxCPU", What: what, Got: "more than " + req.Limits.MaxCPU.String() + " of CPU, stopped", Max: req.Limits.MaxCPU.String()})
		proc.Exit()
	}()
	// The parent kills the process at the deadline; nothing is abandoned here.
	lim := req.Limits
	lim.Timeout = -1
	objs, counts, err := func() (objs []drift.Object, counts []int, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%s: %v", what, r)
			}
		}()
		switch req.Kind {
		case "helm":
			opts := req.Helm
			opts.Limits = lim
			objs, err := helm(req.Files, opts)
			return objs, nil, err
		case "kustomize":
			objs, err := kustomizeChecked(req.Files, req.Dir, req.BuildOptions, req.Unread, lim)
			return objs, nil, err
		case "jsonnet":
			opts := req.Jsonnet
			opts.Limits = lim
			objs, counts, err := jsonnetChecked(req.Files, opts)
			if err != nil {
				err = fmt.Errorf("%s: %w", what, err)
			}
			return objs, counts, err
		}
		return nil, nil, fmt.Errorf("unknown render kind %q", req.Kind)
	}()
	reply(objs, counts, err)
	return 0
}

// warnUnbounded logs once that renders are not bounded by the OS here.
var warnUnbounded = sync.OnceFunc(func() {
	slog.Warn("render processes are not bounded in memory and CPU on this system; only their deadline applies", "os", runtime.GOOS)
})
