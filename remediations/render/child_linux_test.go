package render

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone reports whether no process has the id any more.
func gone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// TestRenderProcessIsBounded renders charts that the static estimate admits
// but that would exhaust the bot: a string sized through a variable (the
// estimate cannot see it) and tpl recursion that fans out forever. Each
// must be stopped by the operating system or killed at its deadline, with
// the limit named, the process gone, and the next render working.
func TestRenderProcessIsBounded(t *testing.T) {
	// tpl calls itself twice per level, 40 levels deep: 2^40 calls, each
	// cloning the templates, in little memory.
	fanout := map[string]string{
		"templates/_r.tpl": `{{- define "r" }}{{ if lt (len .) 40 }}{{ tpl "{{ include \"r\" (append . 1) }}{{ include \"r\" (append . 1) }}" . }}{{ end }}{{- end }}` + "\n",
		"templates/x.yaml": "a: {{ include \"r\" list }}\n",
	}
	cases := []struct {
		name    string
		files   map[string]string
		lim     Limits
		limit   string
		within  time.Duration // the render must end within this
		message string
	}{
		{name: "repeat sized through a variable", limit: "MaxMemory", lim: Limits{MaxMemory: 64 << 20}, within: 30 * time.Second, message: "address space",
			files: map[string]string{"templates/x.yaml": "{{ $n := 100000000 }}a: {{ repeat $n \"x\" }}\n"}},
		{name: "tpl recursion past the deadline", limit: "Timeout", lim: Limits{Timeout: time.Second, MaxCPU: time.Minute}, within: 15 * time.Second, message: "killed",
			files: fanout},
		{name: "tpl recursion past the CPU limit", limit: "MaxCPU", lim: Limits{Timeout: time.Minute, MaxCPU: time.Second}, within: 45 * time.Second, message: "CPU",
			files: fanout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var pids []int
			childStarted = func(pid int) { pids = append(pids, pid) }
			defer func() { childStarted = nil }()
			start := time.Now()
			_, err := Helm(chartFiles(c.files), HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n", Limits: c.lim})
			took := time.Since(start)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != c.limit {
				t.Fatalf("err = %v, want the %s limit", err, c.limit)
			}
			if !strings.Contains(err.Error(), c.limit) || !strings.Contains(err.Error(), "chart c") || !strings.Contains(err.Error(), c.message) {
				t.Errorf("err = %v: it must name the limit, the chart and say %q", err, c.message)
			}
			if took > c.within {
				t.Errorf("the render took %v, want it stopped within %v", took, c.within)
			}
			if len(pids) != 1 {
				t.Fatalf("started %d render processes, want 1", len(pids))
			}
			if !gone(pids[0]) {
				t.Errorf("render process %d is still there after the render returned", pids[0])
			}
			renderOrdinary(t)
		})
	}
}

// TestRenderStoppedKillsItsProcess stops a render that would run for a
// minute (Limits.Stop closed, as a spent budget or Ctrl-C closes it): it
// ends at once with ErrStopped, its process gone, and a render whose stop
// is closed before it starts starts no process.
func TestRenderStoppedKillsItsProcess(t *testing.T) {
	fanout := map[string]string{
		"templates/_r.tpl": `{{- define "r" }}{{ if lt (len .) 40 }}{{ tpl "{{ include \"r\" (append . 1) }}{{ include \"r\" (append . 1) }}" . }}{{ end }}{{- end }}` + "\n",
		"templates/x.yaml": "a: {{ include \"r\" list }}\n",
	}
	var pids []int
	childStarted = func(pid int) { pids = append(pids, pid) }
	defer func() { childStarted = nil }()
	stop := make(chan struct{})
	time.AfterFunc(500*time.Millisecond, func() { close(stop) })
	start := time.Now()
	_, err := Helm(chartFiles(fanout), HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n", Limits: Limits{Timeout: time.Minute, MaxCPU: time.Minute, Stop: stop}})
	took := time.Since(start)
	if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "chart c") {
		t.Fatalf("err = %v, want ErrStopped naming the chart", err)
	}
	if took > 10*time.Second {
		t.Errorf("the stopped render took %v, want it killed at once", took)
	}
	if len(pids) != 1 || !gone(pids[0]) {
		t.Fatalf("render processes %v: want one, gone after the render returned", pids)
	}
	_, err = Helm(chartFiles(fanout), HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n", Limits: Limits{Stop: stop}})
	if !errors.Is(err, ErrStopped) || len(pids) != 1 {
		t.Errorf("after stop: err = %v, %d processes started; want ErrStopped and none", err, len(pids)-1)
	}
	renderOrdinary(t)
}
