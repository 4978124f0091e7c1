package bot

import (
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are driftfix's Prometheus metrics.
type Metrics struct {
	reg       *prometheus.Registry
	scanned   prometheus.Counter
	stuck     prometheus.Gauge
	reused    prometheus.Gauge
	findings  *prometheus.GaugeVec
	prs       *prometheus.CounterVec
	calls     *prometheus.CounterVec
	apiErrors *prometheus.CounterVec
	errors    *prometheus.CounterVec
	duration  prometheus.Histogram
	lastCycle prometheus.Gauge
	lastGood  prometheus.Gauge
	leader    prometheus.Gauge
	build     *prometheus.GaugeVec
	mu        sync.Mutex
	seenCalls map[string]int // API calls already counted, by service and call
	clients   []watched
	ev        eventMetrics           // webhook deliveries, their work, policy reloads (metrics_events.go)
	presses   *prometheus.CounterVec // the Slack digest's buttons (metrics_slack.go)
}

// Counted is a client that counts its API requests by call: Argo CD's,
// a Git host's, a notifier's.
type Counted interface {
	Calls() map[string]int
	Errors() map[string]int
}

type watched struct {
	service, name string
	c             Counted
}

// Watch counts a client's requests under service (argocd, github, slack);
// name tells apart several clients of one service. Wiring calls it once per
// client.
func (m *Metrics) Watch(service, name string, c Counted) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clients = append(m.clients, watched{service, name, c})
}

// NewMetrics registers driftfix's metrics in a registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), seenCalls: map[string]int{},
		scanned: prometheus.NewCounter(prometheus.CounterOpts{Name: "driftfix_apps_scanned_total", Help: "Applications listed by all cycles."}),
		stuck:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftfix_apps_stuck", Help: "Applications stuck OutOfSync in the last cycle."}),
		reused: prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftfix_apps_reused",
			Help: "Stuck applications whose last diagnosis the last cycle reused, their state unchanged (fullCycleEvery)."}),
		findings:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "driftfix_findings", Help: "Differing fields in the last cycle, by cause."}, []string{"cause"}),
		prs:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftfix_pull_requests_total", Help: "Pull requests by action."}, []string{"action"}),
		calls:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftfix_api_calls_total", Help: "API requests by service (argocd, github, slack), retries included."}, []string{"service"}),
		apiErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftfix_api_errors_total", Help: "Failed API requests by service (argocd, github, slack), each attempt."}, []string{"service"}),
		errors:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftfix_errors_total", Help: "Failures by stage (cycle, publish)."}, []string{"stage"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "driftfix_cycle_duration_seconds", Help: "Duration of a cycle.",
			Buckets: prometheus.ExponentialBuckets(0.5, 2, 12)}),
		lastCycle: prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftfix_last_cycle_timestamp_seconds", Help: "When the last cycle finished."}),
		lastGood: prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftfix_last_successful_cycle_timestamp_seconds",
			Help: "When the last cycle that scanned every Argo CD instance and published everything finished."}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftfix_leader",
			Help: "1 while this replica runs cycles (holds the Lease under --leader-elect, always without it), else 0."}),
		build: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "driftfix_build_info",
			Help: "Always 1: the version, source revision and Go version of the running binary."}, []string{"version", "revision", "goversion"}),
	}
	m.ev = newEventMetrics(m.reg)
	m.presses = newPressMetrics(m.reg)
	m.reg.MustRegister(m.scanned, m.stuck, m.reused, m.findings, m.prs, m.calls, m.apiErrors, m.errors, m.duration, m.lastCycle, m.lastGood, m.leader, m.build,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

// SetBuild records the binary's version and source revision
// (driftfix_build_info); the Go version is the running one's.
func (m *Metrics) SetBuild(version, revision string) {
	if m == nil {
		return
	}
	if revision == "" {
		revision = "unknown"
	}
	m.build.Reset()
	m.build.WithLabelValues(version, revision, runtime.Version()).Set(1)
}

// SetLeader records whether this replica runs cycles (driftfix_leader).
func (m *Metrics) SetLeader(leading bool) {
	if m == nil {
		return
	}
	if leading {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
}

// observe records a cycle that finished at end; complete says it scanned
// every instance and published everything.
func (m *Metrics) observe(o Outcome, end time.Time, complete bool) {
	if m == nil {
		return
	}
	if complete {
		m.lastGood.Set(float64(end.UnixNano()) / 1e9)
	}
	m.scanned.Add(float64(o.Result.Scanned))
	m.stuck.Set(float64(len(o.Result.Stuck)))
	m.reused.Set(float64(o.Result.Reused))
	m.findings.Reset()
	for _, s := range o.Result.Stuck {
		for _, f := range s.Findings {
			m.findings.WithLabelValues(string(f.Cause)).Inc()
		}
	}
	p := o.Published
	for action, n := range map[string]int{"opened": len(p.Opened), "updated": len(p.Updated), "closed": len(p.Closed),
		"merged": len(p.Merged), "rejected": len(p.Rejected)} {
		m.prs.WithLabelValues(action).Add(float64(n))
	}
	m.errors.WithLabelValues("cycle").Add(float64(len(o.Result.Errors)))
	m.errors.WithLabelValues("publish").Add(float64(len(p.Errors)))
	m.duration.Observe(o.Duration.Seconds())
	m.lastCycle.Set(float64(end.UnixNano()) / 1e9)
	m.mu.Lock()
	defer m.mu.Unlock()
	// Clients count since they were made; the metrics add what is new.
	count := func(vec *prometheus.CounterVec, service, prefix string, calls map[string]int) {
		for k, v := range calls {
			key := prefix + " " + k
			if d := v - m.seenCalls[key]; d > 0 {
				vec.WithLabelValues(service).Add(float64(d))
			}
			m.seenCalls[key] = v
		}
	}
	for _, w := range m.clients {
		count(m.calls, w.service, w.service+" calls "+w.name, w.c.Calls())
		count(m.apiErrors, w.service, w.service+" errors "+w.name, w.c.Errors())
	}
}
