package bot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
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
	b.Run("steady/apps=50000", func(b *testing.B) { benchSteady(b, 50000, 5000) })
}

// benchSteady runs a first cycle over a fleet of apps applications (stuck
// of them stuck), then, before each next cycle, changes 1% of the
// applications (a new compared revision for half of them, a live object
// written again for the other half) and runs it with the same memo. It
// reports the first cycle's CPU (first-cpu-s), the second's (the first to
// reuse), a steady cycle's (steady-cpu-s) and the peak heap over all of
// them: a steady cycle must cost under a tenth of the first, and
// apps=50000 peak under 300 MB.
func benchSteady(b *testing.B, apps, stuck int) {
	now := time.Now()
	snaps := fleet(b, apps, stuck, 20, now)
	srv := argocdtest.NewServer("bench-token", snaps...)
	defer srv.Close()
	srv.Delay(5 * time.Millisecond)
	srv.Freeze()
	cfg, err := config.Parse([]byte("argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]\nfullCycleEvery: 1000000\n"))
	if err != nil {
		b.Fatal(err)
	}
	c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "bench-token"})
	if err != nil {
		b.Fatal(err)
	}
	ins := []cycle.Instance{{Name: "main", Client: c}}
	memo := cycle.NewMemo(0)
	run := func() cycle.CycleResult {
		res := cycle.Cycle(context.Background(), cfg, ins, now, cycle.CycleOptions{Memo: memo})
		if len(res.Errors) > 0 {
			b.Fatal(res.Errors[0])
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
	cpu0 := processCPU()
	run()
	first := processCPU() - cpu0
	rnd := rand.New(rand.NewPCG(7, 11))
	// change changes 1% of the applications, as cycle i sees them.
	change := func(i int) {
		for range apps / 100 {
			k := rnd.IntN(apps)
			s := snaps[k]
			next := &drift.Snapshot{Application: drift.DeepCopy(s.Application).(map[string]any), Resources: slices.Clone(s.Resources)}
			if len(next.Resources) > 0 && rnd.IntN(2) == 0 {
				j := rnd.IntN(len(next.Resources))
				if live := next.Resources[j].Live; live != nil {
					live = drift.DeepCopy(live).(map[string]any)
					drift.Map(live, "metadata")["resourceVersion"] = fmt.Sprintf("%d-%d", i, k)
					next.Resources[j].Live = live
				}
			} else {
				drift.Map(next.Application, "status", "sync")["revision"] = fmt.Sprintf("rev-%d-%d", i, k)
			}
			snaps[k] = next
			srv.Add(next)
		}
	}
	// The second cycle is the first to reuse: it also reads every stuck
	// application's resource tree whole once, which later cycles find
	// unchanged by its digest. It is reported apart from the steady ones.
	change(-1)
	cpu0 = processCPU()
	run()
	second := processCPU() - cpu0
	var steady time.Duration
	var reused, rediagnosed int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		change(i)
		b.StartTimer()
		cpu := processCPU()
		res := run()
		steady += processCPU() - cpu
		reused += res.Reused
		rediagnosed += len(res.Stuck) - res.Reused
	}
	b.StopTimer()
	stop()
	b.ReportMetric(first.Seconds(), "first-cpu-s")
	b.ReportMetric(second.Seconds(), "second-cpu-s")
	b.ReportMetric(steady.Seconds()/float64(b.N), "steady-cpu-s")
	b.ReportMetric(float64(rediagnosed)/float64(b.N), "diagnosed/cycle")
	b.ReportMetric(float64(reused)/float64(b.N), "reused/cycle")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
	// What the emulated server and the fleet it serves hold before the
	// first cycle, and the cycles' own peak above it.
	b.ReportMetric(float64(base.HeapInuse)/(1<<20), "base-heap-MB")
	b.ReportMetric(float64(peak()-min(peak(), base.HeapInuse))/(1<<20), "cycle-heap-MB")
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
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ins []cycle.Instance
		var clients []*argocd.Client
		for j, srv := range servers {
			c, err := argocd.New(argocd.Config{BaseURL: srv.URL, Token: "bench-token"})
			if err != nil {
				b.Fatal(err)
			}
			clients = append(clients, c)
			ins = append(ins, cycle.Instance{Name: fmt.Sprintf("i%d", j), Client: c})
		}
		res := cycle.Cycle(context.Background(), cfg, ins, now, cycle.CycleOptions{})
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
	cpu := processCPU() - cpu0
	stop()
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/cycle")
	b.ReportMetric(float64(calls)/float64(instances), "calls/instance")
	// The process's CPU time (driftfix and the emulated servers, user and
	// system) per cycle: what the cycle costs whatever else the machine runs.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/cycle")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak()-min(peak(), base.HeapInuse))/(1<<20), "cycle-heap-MB")
}
