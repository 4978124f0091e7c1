package bot

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/proccpu"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/plan"
)

// The simulated hour of BenchmarkFleetHour: four periods of fifteen
// minutes, each applied as fifteen one-minute batches of changes.
const (
	hourApps     = 50000
	hourStuck    = 500 // 1% stuck before the hour
	hourPeriods  = 4
	hourMinutes  = 15
	hourChanges  = hourApps / 100 // changed per period
	hourTurnEach = 2              // applications turning OutOfSync after a sync, per minute
)

// BenchmarkFleetHour runs one simulated hour of a fleet of 50,000
// applications (500 stuck), 1% of them changing every 15 minutes (of
// which 2 a minute turn OutOfSync after a sync), twice, one after the
// other, each against an emulated Argo CD in a process of its own:
//
//   - polling: a cycle every 15 minutes (the list read whole, the stuck
//     applications' memo checked, what changed diagnosed);
//   - watch: the application watch stream followed, each application that
//     turns OutOfSync diagnosed alone as its event comes (an App unit),
//     no cycle within the hour (the safety-net cycle runs at a longer
//     interval; one such cycle's CPU is reported apart).
//
// It reports each mode's CPU over the hour (poll-cpu-s, watch-cpu-s),
// their ratio (watch/poll, bound 0.25), the time from an application
// turning OutOfSync to its diagnosis at p95 (poll-p95-s on the simulated
// clock, watch-p95-s as measured), the fixes the diagnoses proposed (each
// asks the bot for a publishing cycle) and the safety-net cycle's CPU
// with the stream (net-cycle-cpu-s).
func BenchmarkFleetHour(b *testing.B) {
	for range b.N {
		poll, pollLat, _ := fleetHour(b, false)
		watch, watchLat, extra := fleetHour(b, true)
		b.ReportMetric(poll.Seconds(), "poll-cpu-s")
		b.ReportMetric(watch.Seconds(), "watch-cpu-s")
		b.ReportMetric(watch.Seconds()/poll.Seconds(), "watch/poll")
		b.ReportMetric(percentile(pollLat, 0.95).Seconds(), "poll-p95-s")
		b.ReportMetric(percentile(watchLat, 0.95).Seconds(), "watch-p95-s")
		b.ReportMetric(float64(extra.fixes), "fixes")
		b.ReportMetric(extra.net.Seconds(), "net-cycle-cpu-s")
		if r := watch.Seconds() / poll.Seconds(); r > 0.25 {
			b.Errorf("the watch stream's CPU is %.2f of polling's, above the bound of 0.25", r)
		}
	}
}

type hourExtra struct {
	fixes int
	net   time.Duration
}

// fleetHour runs the hour in one mode and returns driftfix's CPU over it
// and each turned application's time to diagnosis.
func fleetHour(b *testing.B, watch bool) (time.Duration, []time.Duration, hourExtra) {
	srv := startHourProcess(b)
	defer srv.close()
	cfg, err := config.Parse([]byte("argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]\nfullCycleEvery: 1000000\npolicy: {stuckAfter: 0s}\n"))
	if err != nil {
		b.Fatal(err)
	}
	c, err := argocd.New(argocd.Config{BaseURL: srv.url(), Token: "bench-token"})
	if err != nil {
		b.Fatal(err)
	}
	ins := []plan.Instance{{Name: "main", Client: c}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var extra hourExtra
	var lat []time.Duration
	var mu sync.Mutex
	done := map[string]time.Time{}
	mem := memo.New(0)
	if watch {
		turned := make(chan argocd.AppSummary, 1024)
		w := &argocd.Watcher{Client: c, Instance: "main", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			OutOfSync: func(a argocd.AppSummary) { turned <- a }}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); w.Run(ctx) }()
		go func() { // the work queue's one worker
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case a := <-turned:
					key := plan.AppKey("main", a.Namespace, a.Name)
					res, err := DiagnoseApp(ctx, cfg, ins, key, time.Now())
					if err != nil && ctx.Err() == nil {
						b.Errorf("diagnose %s: %v", key, err)
					}
					mu.Lock()
					if len(res.Stuck) > 0 {
						done[key] = time.Now()
					}
					extra.fixes += len(res.PRs)
					mu.Unlock()
				}
			}
		}()
		defer wg.Wait()
		defer cancel()
		waitFor(b, "the first stream's applications", func() bool { return c.WatchStats().Events >= hourApps })
		if _, err := c.ListApplications(ctx); err != nil {
			b.Fatal(err)
		}
		waitFor(b, "the list answered from the stream", func() bool { return c.WatchStats().Live })
	} else {
		if res := plan.Cycle(ctx, cfg, ins, time.Now(), plan.CycleOptions{Memo: mem}); len(res.Errors) > 0 || len(res.Stuck) != hourStuck {
			b.Fatalf("first cycle: %d stuck, errors %v", len(res.Stuck), res.Errors)
		}
	}
	cpu0 := proccpu.Used()
	for p := range hourPeriods {
		type turn struct {
			key    string
			at     time.Time     // when the server turned it
			offset time.Duration // on the simulated clock, from the period's start
		}
		var turns []turn
		for m := range hourMinutes {
			for _, t := range srv.batch(p, m) {
				key, ns, _ := strings.Cut(t, "@")
				n, _ := strconv.ParseInt(ns, 10, 64)
				turns = append(turns, turn{"main/" + key, time.Unix(0, n), time.Duration(m)*time.Minute + 30*time.Second})
			}
			if watch {
				// Each minute's events are diagnosed before the next minute's.
				waitFor(b, "the minute's applications diagnosed", func() bool {
					mu.Lock()
					defer mu.Unlock()
					for _, t := range turns {
						if d, ok := done[t.key]; !ok || d.Before(t.at) {
							return false
						}
					}
					return true
				})
			}
		}
		if watch {
			mu.Lock()
			for _, t := range turns {
				lat = append(lat, done[t.key].Sub(t.at))
			}
			mu.Unlock()
			continue
		}
		start := time.Now()
		res := plan.Cycle(ctx, cfg, ins, time.Now(), plan.CycleOptions{Memo: mem})
		took := time.Since(start)
		if len(res.Errors) > 0 {
			b.Fatal(res.Errors[0])
		}
		stuck := map[string]bool{}
		for _, s := range res.Stuck {
			stuck[plan.AppKey(s.Instance, s.App.Namespace, s.App.Name)] = true
		}
		for _, t := range turns {
			if !stuck[t.key] {
				b.Fatalf("the cycle after period %d did not find %s stuck", p, t.key)
			}
			lat = append(lat, hourMinutes*time.Minute-t.offset+took)
		}
		extra.fixes += len(res.PRs)
	}
	cpu := proccpu.Used() - cpu0
	if watch {
		// The safety-net cycle, with the list answered from the stream.
		cpu0 := proccpu.Used()
		if res := plan.Cycle(ctx, cfg, ins, time.Now(), plan.CycleOptions{Memo: mem}); len(res.Errors) > 0 {
			b.Fatal(res.Errors[0])
		}
		extra.net = proccpu.Used() - cpu0
	}
	if len(lat) != hourPeriods*hourMinutes*hourTurnEach {
		b.Fatalf("%d applications diagnosed, want %d", len(lat), hourPeriods*hourMinutes*hourTurnEach)
	}
	return cpu, lat, extra
}

func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	tb.Fatalf("not within 60s: %s", what)
}

// hourProcess is the emulated Argo CD of BenchmarkFleetHour, in a process
// of its own (the test binary running TestFleetHourServer).
type hourProcess struct {
	fleetProcess
}

func startHourProcess(tb testing.TB) *hourProcess {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestFleetHourServer$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "DRIFTFIX_FLEET_HOUR=1")
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
	p := &hourProcess{fleetProcess{tb: tb, cmd: cmd, in: in, out: bufio.NewScanner(out)}}
	p.out.Buffer(make([]byte, 64<<10), 16<<20)
	p.where = p.ask("")
	return p
}

// batch applies minute m of period p's changes and returns the
// applications turned OutOfSync, as namespace/name@unix-nanoseconds.
func (p *hourProcess) batch(period, minute int) []string {
	a := p.ask(fmt.Sprintf("batch %d %d", period, minute))
	if a == "" {
		return nil
	}
	return strings.Split(a, ",")
}

// TestFleetHourServer is BenchmarkFleetHour's emulated Argo CD when the
// benchmark starts it (DRIFTFIX_FLEET_HOUR set): it serves the fleet on
// loopback (the list and the watch stream), writes "fleet: URL", then
// answers "batch P M" (apply minute M of period P's changes: the same
// changes in every run) until its input ends. Run otherwise, it is
// skipped.
func TestFleetHourServer(t *testing.T) {
	if os.Getenv("DRIFTFIX_FLEET_HOUR") == "" {
		t.Skip("started by BenchmarkFleetHour only")
	}
	snaps := fleet(t, hourApps, hourStuck, 20, time.Now())
	srv := argocdtest.NewServer("bench-token", snaps...)
	srv.Freeze()
	defer srv.Close()
	fmt.Println("fleet:", srv.URL)
	resources := snaps[0].Resources // a stuck application's
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var p, m int
		if _, err := fmt.Sscanf(in.Text(), "batch %d %d", &p, &m); err != nil {
			t.Fatalf("command %q: %v", in.Text(), err)
		}
		rnd := rand.New(rand.NewPCG(uint64(p), uint64(m)))
		var turned []string
		for i := range hourChanges / hourMinutes {
			k := rnd.IntN(hourApps)
			for i < hourTurnEach && drift.Str(snaps[k].Application, "status", "sync", "status") != "Synced" {
				k = rnd.IntN(hourApps)
			}
			s := snaps[k]
			next := &drift.Snapshot{Application: drift.DeepCopy(s.Application).(map[string]any), Resources: slices.Clone(s.Resources)}
			st := drift.Map(next.Application, "status")
			if i < hourTurnEach {
				now := time.Now()
				st["sync"] = map[string]any{"status": "OutOfSync", "revision": "abc"}
				st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.UTC().Format(time.RFC3339Nano)}
				next.Resources = resources
				turned = append(turned, fmt.Sprintf("%s/%s@%d", drift.Str(next.Application, "metadata", "namespace"), next.AppName(), now.UnixNano()))
			} else {
				drift.Map(next.Application, "status", "sync")["revision"] = fmt.Sprintf("rev-%d-%d-%d", p, m, k)
			}
			snaps[k] = next
			srv.Add(next)
		}
		fmt.Println("fleet:", strings.Join(turned, ","))
	}
}
