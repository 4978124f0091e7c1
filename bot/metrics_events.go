package bot

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/publish"
)

// eventMetrics count webhook deliveries, the work they led to, and policy
// reloads.
type eventMetrics struct {
	deliveries *prometheus.CounterVec
	work       *prometheus.HistogramVec
	reloads    *prometheus.CounterVec
	invalid    prometheus.Gauge
	watch      *prometheus.GaugeVec
}

func newEventMetrics(reg *prometheus.Registry) eventMetrics {
	e := eventMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftfix_webhook_deliveries_total",
			Help: "GitHub webhook deliveries by event and outcome (queued, coalesced, stale, duplicate, ignored, unknown, forged, unsigned, refused, full)."}, []string{"event", "outcome"}),
		work: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "driftfix_event_work_seconds",
			Help: "Units of work webhook deliveries asked for, by kind and result (done, dropped, failed): time from the lock asked to done.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}, []string{"kind", "result"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftfix_policy_reloads_total",
			Help: "Changed policy files read while running, by result (applied, invalid)."}, []string{"result"}),
		invalid: prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftfix_policy_invalid",
			Help: "1 while the policy file holds a change driftfix refused (the last good policy is in use), else 0."}),
		watch: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "driftfix_argocd_watch",
			Help: "1 for the state each Argo CD instance's application watch stream is in (streaming, reconnecting, refused: the list is polled), 0 for the others."}, []string{"instance", "state"}),
	}
	reg.MustRegister(e.deliveries, e.work, e.reloads, e.invalid, e.watch)
	return e
}

// Delivery counts a webhook delivery by event and what became of it.
func (m *Metrics) Delivery(event, outcome string) {
	if m == nil {
		return
	}
	if event == "" {
		event = "none"
	}
	m.ev.deliveries.WithLabelValues(event, outcome).Inc()
}

// WatchState records the state of an instance's application watch stream:
// streaming, reconnecting or refused.
func (m *Metrics) WatchState(instance, state string) {
	if m == nil {
		return
	}
	for _, s := range []string{"streaming", "reconnecting", "refused"} {
		v := 0.0
		if s == state {
			v = 1
		}
		m.ev.watch.WithLabelValues(instance, s).Set(v)
	}
}

// PolicyReload records a changed policy file read while running: applied,
// or refused (the last good policy stays in use).
func (m *Metrics) PolicyReload(applied bool) {
	if m == nil {
		return
	}
	if applied {
		m.ev.reloads.WithLabelValues("applied").Inc()
		m.ev.invalid.Set(0)
		return
	}
	m.ev.reloads.WithLabelValues("invalid").Inc()
	m.ev.invalid.Set(1)
}

// work records a unit of work done.
func (m *Metrics) work(w events.Work, err error, took time.Duration) {
	if m == nil {
		return
	}
	result := "done"
	switch {
	case errors.Is(err, publish.ErrNotWatched):
		result = "dropped"
	case err != nil:
		result = "failed"
	}
	m.ev.work.WithLabelValues(string(w.Kind), result).Observe(took.Seconds())
}

// adopt counts the clients of other (a reloaded policy's) instead of the
// ones counted so far.
func (m *Metrics) adopt(other *Metrics) {
	if m == nil || other == nil {
		return
	}
	other.mu.Lock()
	clients := append([]watched(nil), other.clients...)
	other.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clients = clients
	m.seenCalls = map[string]int{}
}
