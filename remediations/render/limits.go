package render

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Limits bound one render so that a repository cannot exhaust the bot: what a
// chart or kustomization may hold, what a render may produce and how long it
// may take. A zero field takes its default (see DefaultLimits); a negative
// one is no limit.
type Limits struct {
	// MaxFiles is the number of files a chart may hold (Chart.yaml, values,
	// templates, subcharts' files together).
	MaxFiles int
	// MaxChartBytes is the total size of a chart's files, or of the files a
	// kustomize build is staged with.
	MaxChartBytes int64
	// MaxTemplateBytes is the size of one template file.
	MaxTemplateBytes int64
	// MaxValuesBytes is the size of one values input: a values file, the
	// Application's helm.values or its valuesObject written as YAML.
	MaxValuesBytes int64
	// MaxRenderedBytes is the size of the rendered manifests. For Helm it is
	// also checked before rendering, against an upper estimate of what the
	// templates can produce (loops multiplied out, includes expanded), so a
	// template that would expand hugely is refused without being run.
	MaxRenderedBytes int64
	// Timeout is the wall-clock time one render may take; its process is
	// killed when it runs out.
	Timeout time.Duration
	// MaxMemory is the address space a render process may add to what it
	// holds when it starts (RLIMIT_AS, Linux only). A render that needs more
	// fails to allocate and its process dies.
	MaxMemory int64
	// MaxCPU is the CPU time a render process may use (RLIMIT_CPU, Linux
	// only, in whole seconds rounded up). Zero takes Timeout.
	MaxCPU time.Duration
	// Stop, when closed, kills the render process running and starts no
	// other (a budget of many renders spent, the user's interrupt); such a
	// render fails with ErrStopped. Nil: renders are stopped by their own
	// limits only. A render process never receives it.
	Stop <-chan struct{}
}

// ErrStopped is a render stopped through Limits.Stop.
var ErrStopped = errors.New("the render was stopped before it finished")

// stopContext is a context done when stop is closed.
func stopContext(stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	if stop != nil {
		select {
		case <-stop:
			cancel()
			return ctx, cancel
		default:
		}
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// DefaultLimits are the limits a render runs under when Options leave a
// field zero. They are far above what real charts and overlays need (the
// largest public charts are a few hundred files and under 2 MiB).
var DefaultLimits = Limits{
	MaxFiles:         2000,
	MaxChartBytes:    16 << 20,
	MaxTemplateBytes: 1 << 20,
	MaxValuesBytes:   2 << 20,
	MaxRenderedBytes: 32 << 20,
	Timeout:          10 * time.Second,
	MaxMemory:        384 << 20,
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxFiles == 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxChartBytes == 0 {
		l.MaxChartBytes = d.MaxChartBytes
	}
	if l.MaxTemplateBytes == 0 {
		l.MaxTemplateBytes = d.MaxTemplateBytes
	}
	if l.MaxValuesBytes == 0 {
		l.MaxValuesBytes = d.MaxValuesBytes
	}
	if l.MaxRenderedBytes == 0 {
		l.MaxRenderedBytes = d.MaxRenderedBytes
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxMemory == 0 {
		l.MaxMemory = d.MaxMemory
	}
	if l.MaxCPU == 0 {
		l.MaxCPU = l.Timeout
	}
	return l
}

// over reports whether n exceeds limit (a negative limit is none).
func over[T int | int64 | float64](n T, limit T) bool {
	return limit >= 0 && n > limit
}

// LimitError is a render refused or stopped because it went over one of its
// Limits. Limit is the field's name, What what exceeded it.
type LimitError struct {
	Limit string // the Limits field, e.g. "MaxRenderedBytes"
	What  string // e.g. "chart charts/web: templates/x.yaml"
	Got   string // the size or time reached (or estimated)
	Max   string // the limit
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: over the render limit %s (%s; the limit is %s)", e.What, e.Limit, e.Got, e.Max)
}

// RemoteError is a render refused because the repository asks for something
// outside it: a remote kustomize base, resource or chart, or a Helm
// dependency that is not vendored. Rendering never reaches a network.
type RemoteError struct {
	File string // the file that names it
	URL  string // what it names
	Why  string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("%s refers to %s: %s", e.File, e.URL, e.Why)
}

// withTimeout runs f in a goroutine and gives up after d. A Go template or
// kustomize build cannot be cancelled, so a render that runs past its budget
// is abandoned: its goroutine finishes (or not) on its own and its result is
// dropped. Renders run in a process of their own, killed at their deadline,
// so this only serves a render run in process (d < 0 runs f directly).
func withTimeout[T any](d time.Duration, what string, f func() (T, error)) (T, error) {
	if d < 0 {
		return f()
	}
	type result struct {
		v   T
		err error
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				var zero T
				ch <- result{zero, fmt.Errorf("%s: %v", what, r)}
			}
		}()
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, &LimitError{Limit: "Timeout", What: what, Got: "still running after " + d.String(), Max: d.String()}
	}
}

// humanBytes writes a size for an error message.
func humanBytes(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f bytes", n)
}
