package config

import (
	"strings"
	"testing"
	"time"
)

// TestAuditKey: audit.retention, maxRecords and maxBytes are read, and a
// bad value is an error naming the key and its line.
func TestAuditKey(t *testing.T) {
	base := "argocd: [{server: https://a.example.com, tokenFile: /t}]\n"
	c, err := Parse([]byte(base + "audit:\n  retention: 30m\n  maxRecords: 5000\n  maxBytes: 8Mi\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Audit{Retention: 30 * time.Minute, MaxRecords: 5000, MaxBytes: 8 << 20}); c.Audit != want {
		t.Errorf("audit %+v, want %+v", c.Audit, want)
	}
	if c, err := Parse([]byte(base)); err != nil || c.Audit != (Audit{}) {
		t.Errorf("without the key: %+v, %v (zero keeps the defaults)", c.Audit, err)
	}
	for _, bad := range []string{"retention: soon", "retention: -1h", "maxRecords: 0", "maxBytes: lots", "tokenFile: /x"} {
		_, err := Parse([]byte(base + "audit:\n  " + bad + "\n"))
		key := "audit." + strings.Split(bad, ":")[0]
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "3") {
			t.Errorf("%q: error %v, want one naming %s and line 3", bad, err, key)
		}
	}
}
