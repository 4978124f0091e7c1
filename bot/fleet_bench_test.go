package bot

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/bot/internal/proccpu"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/state"
)

// fleet builds apps applications, outOfSync of them stuck with perApp
// resources each (cloned from the testdata cases), the rest Synced. The
// applications share their spec and status maps (only their names
// differ), as they share resources: what the emulated server holds is
// then small beside what the cycle holds, which the benchmarks measure.
func fleet(tb testing.TB, apps, outOfSync, perApp int, now time.Time) []*drift.Snapshot {
	tb.Helper()
	pool := corpus.Bench(tb, perApp*4).Resources
	spec := map[string]any{"project": "default", "destination": map[string]any{"namespace": "shop"}}
	op := map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
	synced := map[string]any{"sync": map[string]any{"status": "Synced", "revision": "abc"}, "operationState": op}
	stuck := map[string]any{"sync": map[string]any{"status": "OutOfSync", "revision": "abc"}, "operationState": op}
	var out []*drift.Snapshot
	for i := 0; i < apps; i++ {
		name := fmt.Sprintf("app-%04d", i)
		s := &drift.Snapshot{Application: drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": name, "namespace": "argocd"}, "spec": spec, "status": synced}}
		if i%(apps/outOfSync) == 0 {
			s.Application["status"] = stuck
			for j := 0; j < perApp; j++ {
				s.Resources = append(s.Resources, pool[(i+j)%len(pool)])
			}
		}
		out = append(out, s)
	}
	return out
}

// BenchmarkFleetCycle runs one cycle (scan, diagnose, plan) against a fleet
// served on loopback with 5 ms latency per call, and reports the cycle time,
// the calls made and the peak heap (the emulated servers' data included):
//
//   - apps=5000: 500 OutOfSync with 20 resources each; targets 10 s, 150 MB.
//   - apps=20000: 2,000 OutOfSync with 20 resources each; targets at -cpu 1:
//     8 s and 200 MB, with 1 + 2 Argo CD calls per stuck application.
//   - instances=3: three instances of 5,000 applications scanned by one
//     cycle, concurrently; the cycle must stay within the sum of their budgets.
func BenchmarkFleetCycle(b *testing.B) {
	for _, tc := range []struct {
		name                   string
		instances, apps, stuck int
	}{
		{"apps=5000", 1, 5000, 500},
		{"apps=20000", 1, 20000, 2000},
		{"instances=3", 3, 5000, 500},
	} {
		b.Run(tc.name, func(b *testing.B) { benchFleet(b, tc.instances, tc.apps, tc.stuck) })
	}
	b.Run("steady/apps=50000", func(b *testing.B) { benchSteady(b, 50000, 5000, false) })
	b.Run("steady-inprocess/apps=50000", func(b *testing.B) { benchSteady(b, 50000, 5000, true) })
}

// benchSteady runs a first cycle over a fleet of apps applications (stuck
// of them stuck), then, before each next cycle, changes 1% of the
// applications (a new compared revision for half of them, a live object
// written again for the other half) and runs it with the same memo. It
// reports the first cycle's CPU (first-cpu-s), the second's (the first to
// reuse), a steady cycle's (steady-cpu-s) and the peak heap over all of
// them: a steady cycle must cost under a tenth of the first, and
// apps=50000 peak under 300 MB. Each cycle saves its memo in a state
// database, as the bot does; restart-cpu-s is a restarted bot's first
// cycle (reading the memo back, then the cycle).
//
// The emulated Argo CD serves from a process of its own (the test binary
// again, running TestSteadyFleetServer), as Argo CD does: the CPU and the
// heap reported are driftfix's, and the server's CPU is reported apart
// (server-first-cpu-s, server-steady-cpu-s). With inProcess set, the
// server runs in the benchmark's process and counts in both, as the
// benchmark measured before.
func benchSteady(b *testing.B, apps, stuck int, inProcess bool) {
	now := time.Now()
	var srv fleetServer
	if inProcess {
		srv = newSteadyFleet(b, apps, stuck, now)
	} else {
		srv = startFleetProcess(b, apps, stuck, now)
	}
	defer srv.close()
	cfg, err := config.Parse([]byte("argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]\nfullCycleEvery: 1000000\n"))
	if err != nil {
		b.Fatal(err)
	}
	c, err := argocd.New(argocd.Config{BaseURL: srv.url(), Token: "bench-token"})
	if err != nil {
		b.Fatal(err)
	}
	ins := []plan.Instance{{Name: "main", Client: c}}
	mem := memo.New(0)
	// Each cycle saves what changed in the memo, as the bot does.
	st, err := state.Open(context.Background(), filepath.Join(b.TempDir(), "state.db"), rowSeal)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	seal, err := memo.NewSeal([]byte("bench-secret"), [32]byte{1})
	if err != nil {
		b.Fatal(err)
	}
	run := func() plan.CycleResult {
		res := plan.Cycle(context.Background(), cfg, ins, now, plan.CycleOptions{Memo: mem})
		if len(res.Errors) > 0 {
			b.Fatal(res.Errors[0])
		}
		if err := mem.Save(context.Background(), st, seal); err != nil {
			b.Fatal(err)
		}
		if res.Scanned != apps || len(res.Stuck) != stuck {
			b.Fatalf("scanned %d, stuck %d", res.Scanned, len(res.Stuck))
		}
		return res
	}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak, stop := heapPeak()
	cpu0, srv0 := proccpu.Used(), srv.cpu()
	run()
	first, srvFirst := proccpu.Used()-cpu0, srv.cpu()-srv0
	// The second cycle is the first to reuse: it also reads every stuck
	// application's resource tree whole once, which later cycles find
	// unchanged by its digest. It is reported apart from the steady ones.
	srv.change(-1)
	cpu0 = proccpu.Used()
	run()
	second := proccpu.Used() - cpu0
	var steady, srvSteady time.Duration
	var reused, rediagnosed int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		srv.change(i)
		b.StartTimer()
		cpu, sc := proccpu.Used(), srv.cpu()
		res := run()
		steady += proccpu.Used() - cpu
		srvSteady += srv.cpu() - sc
		reused += res.Reused
		rediagnosed += len(res.Stuck) - res.Reused
	}
	b.StopTimer()
	stop()
	// A restart: the old memo gone with its process, a new one read back
	// from the state store, then a cycle.
	srv.change(b.N)
	mem = nil
	runtime.GC()
	restartPeak, stopRestart := heapPeak()
	cpu0 = proccpu.Used()
	mem = memo.New(0)
	if n, err := mem.Load(context.Background(), st, seal, cfg); err != nil || n == 0 {
		b.Fatalf("%d read back: %v", n, err)
	}
	if res := run(); res.Reused == 0 {
		b.Fatal("the restarted cycle reused nothing")
	}
	restart := proccpu.Used() - cpu0
	stopRestart()
	b.ReportMetric(float64(restartPeak())/(1<<20), "restart-peak-heap-MB")
	b.ReportMetric(first.Seconds(), "first-cpu-s")
	b.ReportMetric(restart.Seconds(), "restart-cpu-s")
	b.ReportMetric(second.Seconds(), "second-cpu-s")
	b.ReportMetric(steady.Seconds()/float64(b.N), "steady-cpu-s")
	b.ReportMetric(float64(rediagnosed)/float64(b.N), "diagnosed/cycle")
	b.ReportMetric(float64(reused)/float64(b.N), "reused/cycle")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
	if inProcess {
		// What the emulated server and the fleet it serves hold before the
		// first cycle, and the cycles' own peak above it.
		b.ReportMetric(float64(base.HeapInuse)/(1<<20), "base-heap-MB")
		b.ReportMetric(float64(peak()-min(peak(), base.HeapInuse))/(1<<20), "cycle-heap-MB")
	} else {
		b.ReportMetric(srvFirst.Seconds(), "server-first-cpu-s")
		b.ReportMetric(srvSteady.Seconds()/float64(b.N), "server-steady-cpu-s")
	}
}

// fleetServer is the emulated Argo CD of benchSteady.
type fleetServer interface {
	url() string
	// change changes 1% of the applications, as cycle i sees them.
	change(i int)
	// cpu is the CPU time the server's process has used (in process: 0).
	cpu() time.Duration
	close()
}

// steadyFleet is the emulated server and the fleet it serves.
type steadyFleet struct {
	srv   *argocdtest.Server
	snaps []*drift.Snapshot
	apps  int
	rnd   *rand.Rand
}

func newSteadyFleet(tb testing.TB, apps, stuck int, now time.Time) *steadyFleet {
	snaps := fleet(tb, apps, stuck, 20, now)
	srv := argocdtest.NewServer("bench-token", snaps...)
	srv.Delay(5 * time.Millisecond)
	srv.Freeze()
	return &steadyFleet{srv: srv, snaps: snaps, apps: apps, rnd: rand.New(rand.NewPCG(7, 11))}
}

func (f *steadyFleet) url() string        { return f.srv.URL }
func (f *steadyFleet) cpu() time.Duration { return 0 }
func (f *steadyFleet) close()             { f.srv.Close() }

func (f *steadyFleet) change(i int) {
	for range f.apps / 100 {
		k := f.rnd.IntN(f.apps)
		s := f.snaps[k]
		next := &drift.Snapshot{Application: drift.DeepCopy(s.Application).(map[string]any), Resources: slices.Clone(s.Resources)}
		if len(next.Resources) > 0 && f.rnd.IntN(2) == 0 {
			j := f.rnd.IntN(len(next.Resources))
			if live := next.Resources[j].Live; live != nil {
				live = drift.DeepCopy(live).(map[string]any)
				drift.Map(live, "metadata")["resourceVersion"] = fmt.Sprintf("%d-%d", i, k)
				next.Resources[j].Live = live
			}
		} else {
			drift.Map(next.Application, "status", "sync")["revision"] = fmt.Sprintf("rev-%d-%d", i, k)
		}
		f.snaps[k] = next
		f.srv.Add(next)
	}
}

// fleetProcess is a steadyFleet served by a process of its own, told what
// to do one line at a time on its standard input.
type fleetProcess struct {
	tb    testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	where string
}

// startFleetProcess starts the test binary serving the fleet
// (TestSteadyFleetServer) and waits for its address.
func startFleetProcess(tb testing.TB, apps, stuck int, now time.Time) *fleetProcess {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSteadyFleetServer$", "-test.count", "1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("DRIFTFIX_STEADY_FLEET=%d,%d,%d", apps, stuck, now.UnixNano()))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &fleetProcess{tb: tb, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	p.where = p.ask("")
	return p
}

// ask sends a line (none when empty) and returns the server's answer.
func (p *fleetProcess) ask(line string) string {
	if line != "" {
		if _, err := fmt.Fprintln(p.in, line); err != nil {
			p.tb.Fatalf("fleet server: %v", err)
		}
	}
	for p.out.Scan() {
		if answer, ok := strings.CutPrefix(p.out.Text(), "fleet: "); ok {
			return answer
		}
	}
	p.tb.Fatalf("fleet server stopped: %v", p.out.Err())
	return ""
}

func (p *fleetProcess) url() string  { return p.where }
func (p *fleetProcess) change(i int) { p.ask(fmt.Sprint("change ", i)) }
func (p *fleetProcess) cpu() time.Duration {
	ns, err := strconv.ParseInt(p.ask("cpu"), 10, 64)
	if err != nil {
		p.tb.Fatalf("fleet server's CPU: %v", err)
	}
	return time.Duration(ns)
}
func (p *fleetProcess) close() {
	p.in.Close()
	p.cmd.Wait()
}

// TestSteadyFleetServer is benchSteady's emulated Argo CD when the
// benchmark starts it as a process of its own (DRIFTFIX_STEADY_FLEET:
// applications, stuck ones, the time in Unix nanoseconds): it serves the
// fleet on loopback, writes "fleet: URL", then answers "change N" (change
// 1% of the applications as for cycle N) and "cpu" (its CPU time so far,
// in nanoseconds) until its input ends. Run otherwise, it is skipped.
func TestSteadyFleetServer(t *testing.T) {
	spec := os.Getenv("DRIFTFIX_STEADY_FLEET")
	if spec == "" {
		t.Skip("started by BenchmarkFleetCycle/steady only")
	}
	var apps, stuck int
	var at int64
	if _, err := fmt.Sscanf(spec, "%d,%d,%d", &apps, &stuck, &at); err != nil {
		t.Fatalf("DRIFTFIX_STEADY_FLEET=%q: %v", spec, err)
	}
	f := newSteadyFleet(t, apps, stuck, time.Unix(0, at))
	defer f.close()
	fmt.Println("fleet:", f.url())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch cmd := in.Text(); {
		case cmd == "cpu":
			fmt.Println("fleet:", int64(proccpu.Used()))
		case strings.HasPrefix(cmd, "change "):
			i, err := strconv.Atoi(strings.TrimPrefix(cmd, "change "))
			if err != nil {
				t.Fatal(err)
			}
			f.change(i)
			fmt.Println("fleet: ok")
		default:
			t.Fatalf("unknown command %q", cmd)
		}
	}
}

// heapPeak samples the heap in use every 5 ms until stop is called; peak
// returns the largest sample.
func heapPeak() (peak func() uint64, stop func()) {
	var max atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				if m.HeapInuse > max.Load() {
					max.Store(m.HeapInuse)
				}
			}
		}
	}()
	return max.Load, func() { close(done); wg.Wait() }
}

func benchFleet(b *testing.B, instances, apps, stuck int) {
	now := time.Now()
	var servers []*argocdtest.Server
	for i := 0; i < instances; i++ {
		srv := argocdtest.NewServer("bench-token", fleet(b, apps, stuck, 20, now)...)
		defer srv.Close()
		srv.Delay(5 * time.Millisecond)
		// The fleet does not change: the emulator encodes each resource's
		// managed-resources item once and serves the same bytes after.
		srv.Freeze()
		servers = append(servers, srv)
	}
	cfg, err := config.Parse([]byte("argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak, stop := heapPeak()
	var calls int
	cpu0 := proccpu.Used()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ins []plan.Instance
		var clients []*argocd.Client
		for j, srv := range servers {
			c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "bench-token"})
			if err != nil {
				b.Fatal(err)
			}
			clients = append(clients, c)
			ins = append(ins, plan.Instance{Name: fmt.Sprintf("i%d", j), Client: c})
		}
		res := plan.Cycle(context.Background(), cfg, ins, now, plan.CycleOptions{})
		if len(res.Errors) > 0 {
			b.Fatal(res.Errors[0])
		}
		if res.Scanned != apps*instances || len(res.Stuck) != stuck*instances {
			b.Fatalf("scanned %d, stuck %d", res.Scanned, len(res.Stuck))
		}
		calls = 0
		for _, c := range clients {
			for _, n := range c.Calls() {
				calls += n
			}
		}
	}
	b.StopTimer()
	cpu := proccpu.Used() - cpu0
	stop()
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/cycle")
	b.ReportMetric(float64(calls)/float64(instances), "calls/instance")
	// The process's CPU time (driftfix and the emulated servers, user and
	// system) per cycle: what the cycle costs whatever else the machine runs.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/cycle")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak()-min(peak(), base.HeapInuse))/(1<<20), "cycle-heap-MB")
}
