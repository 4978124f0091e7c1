package bot

import "github.com/prometheus/client_golang/prometheus"

func newPressMetrics(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftfix_slack_presses_total",
		Help: "Requests to the Slack digest's buttons, by action (snooze, recheck, none) and outcome (done, failed, refused, unknown, forged, replayed, too_large, bad, busy)."}, []string{"action", "outcome"})
	reg.MustRegister(c)
	return c
}

// SlackPress counts a request to the Slack digest's buttons by action and
// what became of it (slack.Interactions.Seen).
func (m *Metrics) SlackPress(action, outcome string) {
	if m == nil {
		return
	}
	if action == "" {
		action = "none"
	}
	m.presses.WithLabelValues(action, outcome).Inc()
}
