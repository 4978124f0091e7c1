package bot

import (
	"context"
	"database/sql"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/state"
)

// TestRejectedRowsDroppedCounted: a rejection written into the state
// database by SQL, without driftfix's credential, is not acted on and is
// counted by table in driftfix_state_rows_dropped_total.
func TestRejectedRowsDroppedCounted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := state.Open(ctx, path, rowSeal)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := NewMetrics()
	m.WatchStore(st)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO rejected (fingerprint, app, reason, at, seal) VALUES ('k1', 'main/argocd/web', 'forged', 1, NULL)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, ok, err := st.Rejected(ctx, "k1"); err != nil || ok {
		t.Fatalf("a forged rejection is acted on: %v, %v", ok, err)
	}
	m.WatchStore(st) // a reload's store replaces the last
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `driftfix_state_rows_dropped_total{table="rejected"} 1`) {
		t.Errorf("the dropped rejection is not counted:\n%s", droppedMetricLines(rec.Body.String(), "driftfix_state"))
	}
}

func droppedMetricLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
