package bot

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// fleetRepoWorld is a world with one repository, acme/fleet, holding 50
// applications (apps/app-00 to apps/app-49, each the snapshot's files); the
// first is stuck OutOfSync, the others Synced.
func fleetRepoWorld(tb testing.TB, apps int) *eventWorld {
	tb.Helper()
	w := newWorld(tb, worldConfig)
	files := map[string]string{}
	for i := 0; i < apps; i++ {
		for k, v := range w.base.Repo.Files {
			if rest, ok := strings.CutPrefix(k, "apps/shop/"); ok {
				files[fmt.Sprintf("apps/app-%02d/%s", i, rest)] = v
			} else {
				files[k] = v
			}
		}
	}
	u, err := githubtest.NewRepo(filepath.Join(w.dir, "git"), "acme", "fleet", files)
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.gh.AddRepo(filepath.Join(w.dir, "git"), "acme", "fleet"); err != nil {
		tb.Fatal(err)
	}
	w.repoURL["fleet"] = u
	for i := 0; i < apps; i++ {
		s := corpus.Load(tb, "remediations/testdata/plain-remove-hpa.yaml")
		name := fmt.Sprintf("app-%02d", i)
		drift.Map(s.Application, "metadata")["name"] = name
		drift.Map(s.Application, "spec")["source"] = map[string]any{"repoURL": u, "path": "apps/" + name, "targetRevision": "main"}
		st := drift.Map(s.Application, "status")
		st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": worldNow.Add(-time.Hour).Format(time.RFC3339)}
		if i == 0 {
			st["sync"] = map[string]any{"status": "OutOfSync", "revision": "main"}
		} else {
			st["sync"] = map[string]any{"status": "Synced", "revision": "main"}
			s.Resources = nil
		}
		w.argo.Add(s)
	}
	return attachEvents(w, worldNow)
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// waitUntil polls cond every 2ms for up to within and returns how long it took.
func waitUntil(tb testing.TB, what string, within time.Duration, cond func() bool) time.Duration {
	tb.Helper()
	start := time.Now()
	for time.Since(start) < within {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(2 * time.Millisecond)
	}
	tb.Fatalf("%s: not within %s", what, within)
	return 0
}

// BenchmarkEventToCheck measures the events path on the emulated GitHub and
// a repository of 50 applications, deliveries signed and sent over HTTP on
// 127.0.0.1 as GitHub sends them:
//
//   - predict-p95-s: from a pull request opened (its delivery sent) to its
//     driftfix/predict check, over 10 pull requests; bound 10 s.
//   - reaction-p95-s: from a /driftfix command's comment to driftfix's
//     reaction on it, over 10 comments; bound 2 s.
//   - a storm of 1,000 deliveries in 10 s (synchronize of 40 pull
//     requests, comments, pings, each its own delivery): ack-p99-ms, bound
//     1 s; then every pull request has exactly one predict check and
//     driftfix one pull request (no duplicate); storm-peak-heap-MB is the
//     heap's peak while it lasts; the scheduled cycle run in the middle of
//     it completes (storm-cycle-s).
func BenchmarkEventToCheck(b *testing.B) {
	for i := 0; i < b.N; i++ {
		benchEvents(b)
	}
}

func benchEvents(b *testing.B) {
	e := fleetRepoWorld(b, 50)
	app := func(i int) string { return fmt.Sprintf("apps/app-%02d/api.yaml", i) }

	var predict []time.Duration
	for i := 0; i < 10; i++ {
		start := time.Now()
		_, sha := e.personPR("fleet", fmt.Sprintf("add-api-%d", i), map[string]string{app(i + 1): apiYAML})
		waitUntil(b, "the predict check", 30*time.Second, func() bool { return len(e.predictRuns("fleet", sha)) > 0 })
		predict = append(predict, time.Since(start))
	}

	fix := e.open("fleet")
	var own githubtest.PullRequest
	for _, p := range fix {
		if p.Author == "driftfix[bot]" {
			own = p
		}
	}
	if own.Number == 0 {
		b.Fatalf("the first cycle opened no pull request for the stuck application: %+v", fix)
	}
	e.gh.SetPermission("acme", "fleet", "ops", githost.PermissionWrite)
	var reaction []time.Duration
	for i := 0; i < 10; i++ {
		start := time.Now()
		id := e.gh.CommentAs("acme", "fleet", own.Number, "ops", "MEMBER", "/driftfix recheck")
		waitUntil(b, "the command's reaction", 10*time.Second, func() bool {
			for _, c := range e.gh.Comments("acme", "fleet", own.Number) {
				if c.ID == id && len(c.Reactions) > 0 {
					return true
				}
			}
			return false
		})
		reaction = append(reaction, time.Since(start))
	}

	// The storm: 40 pull requests opened quietly, then 1,000 deliveries
	// over 10 s.
	var payloads []map[string]any
	var heads []string
	e.quietly(func() {
		for i := 0; i < 40; i++ {
			n, sha := e.personPR("fleet", fmt.Sprintf("storm-%d", i), map[string]string{app(11 + i%39): strings.Replace(apiYAML, "api:1.0.0", fmt.Sprintf("api:1.0.%d", i), 1)})
			ev, err := e.gh.Event("acme", "fleet", n, "synchronize")
			if err != nil {
				b.Fatal(err)
			}
			payloads, heads = append(payloads, ev), append(heads, sha)
		}
	})
	comment, _ := e.gh.Event("acme", "fleet", own.Number, "synchronize") // for its repository and installation
	comment["action"] = "created"
	comment["issue"] = map[string]any{"number": own.Number, "pull_request": map[string]any{}}
	comment["comment"] = map[string]any{"id": 1, "body": "looks good", "user": map[string]any{"login": "ops", "type": "User"}}
	delete(comment, "pull_request")
	creates := e.gh.CallCount(checkRuns)

	stopHeap := watchHeap()
	var mu sync.Mutex
	var acks []time.Duration
	refused := 0
	var sent sync.WaitGroup
	cycleDone := make(chan error, 1)
	var cycleTook time.Duration
	tick := time.NewTicker(10 * time.Millisecond)
	for i := 0; i < 1000; i++ {
		<-tick.C
		if i == 500 {
			go func() {
				start := time.Now()
				_, err := e.r.Once(context.Background(), worldNow.Add(15*time.Minute))
				cycleTook = time.Since(start)
				cycleDone <- err
			}()
		}
		event, payload := "pull_request", any(payloads[i%len(payloads)])
		switch i % 10 {
		case 7:
			event, payload = "issue_comment", comment
		case 9:
			event, payload = "ping", map[string]any{"zen": "Anything added dilutes everything else.", "hook_id": 1}
		}
		sent.Add(1)
		go func() {
			defer sent.Done()
			d, err := e.gh.Deliver(event, payload)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || d.Status() >= 300 {
				refused++
				return
			}
			acks = append(acks, d.Took)
		}()
	}
	tick.Stop()
	sent.Wait()
	if err := <-cycleDone; err != nil {
		b.Errorf("the scheduled cycle during the storm: %v", err)
	}
	e.settle()
	peak := stopHeap()

	for i, sha := range heads {
		if n := len(e.predictRuns("fleet", sha)); n != 1 {
			b.Errorf("storm pull request %d has %d predict checks, want 1", i, n)
		}
	}
	if got := e.gh.CallCount(checkRuns) - creates; got > len(heads) {
		b.Errorf("the storm created %d check runs for %d heads", got, len(heads))
	}
	mine := 0
	for _, p := range e.open("fleet") {
		if p.Author == "driftfix[bot]" {
			mine++
		}
	}
	if mine != 1 {
		b.Errorf("driftfix has %d open pull requests after the storm, want 1", mine)
	}
	if refused > 0 {
		b.Errorf("%d storm deliveries were refused", refused)
	}
	p95, r95, a99 := percentile(predict, 0.95), percentile(reaction, 0.95), percentile(acks, 0.99)
	if p95 > 10*time.Second || r95 > 2*time.Second || a99 > time.Second {
		b.Errorf("bounds: predict p95 %s (10s), reaction p95 %s (2s), ack p99 %s (1s)", p95, r95, a99)
	}
	b.ReportMetric(p95.Seconds(), "predict-p95-s")
	b.ReportMetric(r95.Seconds(), "reaction-p95-s")
	b.ReportMetric(float64(a99.Microseconds())/1000, "ack-p99-ms")
	b.ReportMetric(float64(peak)/(1<<20), "storm-peak-heap-MB")
	b.ReportMetric(cycleTook.Seconds(), "storm-cycle-s")
}

// watchHeap samples the heap every 50 ms until the function it returns is
// called, which gives the peak seen.
func watchHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		sampled.Wait()
		return peak.Load()
	}
}
