package bot

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// StoreDrops is a state store's count, by table, of the rows it dropped
// because their seal was missing or wrong (state.Store.DroppedRows).
type StoreDrops interface {
	DroppedRows() map[string]int
}

// droppedRows collects driftfix_state_rows_dropped_total from the store
// watched last.
type droppedRows struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	st   StoreDrops
}

func (d *droppedRows) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc }

func (d *droppedRows) Collect(ch chan<- prometheus.Metric) {
	d.mu.Lock()
	st := d.st
	d.mu.Unlock()
	if st == nil {
		return
	}
	for table, n := range st.DroppedRows() {
		ch <- prometheus.MustNewConstMetric(d.desc, prometheus.CounterValue, float64(n), table)
	}
}

// WatchStore counts the rows of the state store that driftfix dropped,
// never acted on, because it had not written them with its credential
// (driftfix_state_rows_dropped_total, by table). Wiring calls it once per
// store; a later store replaces the earlier.
func (m *Metrics) WatchStore(st StoreDrops) {
	if m == nil {
		return
	}
	c := &droppedRows{st: st, desc: prometheus.NewDesc("driftfix_state_rows_dropped_total",
		"State rows dropped because their seal was missing or wrong (written without driftfix's credential, or before rows were sealed), by table.",
		[]string{"table"}, nil)}
	if err := m.reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(*droppedRows); ok {
				old.mu.Lock()
				old.st = st
				old.mu.Unlock()
			}
		}
	}
}
