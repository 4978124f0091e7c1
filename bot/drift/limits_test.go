package drift

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSnapshotLimits(t *testing.T) {
	app := `"application":{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"a"}}`
	cm := func(v string) string {
		return `{"live":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"` + v + `"}}}`
	}
	jsonSnap := `{"apiVersion":"driftfix/v1","kind":"Snapshot",` + app + `,` + "\n" + `"resources":[` + "\n" + cm(strings.Repeat("x", 100)) + `]}`
	threeJSON := `{"apiVersion":"driftfix/v1","kind":"Snapshot",` + app + `,"resources":[` + cm("a") + `,` + cm("b") + `,` + cm("c") + `]}`
	yamlSnap := "apiVersion: driftfix/v1\nkind: Snapshot\napplication: {apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}}\n" +
		"resources:\n- live: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: " + strings.Repeat("x", 100) + "}}\n"
	yamlFile := "apiVersion: driftfix/v1\nkind: Snapshot\napplication: {apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}}\n" +
		"resources: []\nrepo:\n  files:\n    values.yaml: " + strings.Repeat("y", 100) + "\n"
	for _, c := range []struct {
		name, data string
		lim        Limits
		limit      string
		line       int
	}{
		{"long string in JSON", jsonSnap, Limits{MaxStringBytes: 50}, "MaxStringBytes", 3},
		{"long string in YAML", yamlSnap, Limits{MaxStringBytes: 50}, "MaxStringBytes", 5},
		{"long values file", yamlFile, Limits{MaxStringBytes: 50}, "MaxStringBytes", 7},
		{"too many resources", threeJSON, Limits{MaxResources: 2}, "MaxResources", 1},
		{"too big", jsonSnap, Limits{MaxBytes: 64}, "MaxBytes", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSnapshotWithLimits([]byte(c.data), c.lim)
			var pe *ParseError
			if s != nil || !errors.As(err, &pe) || !strings.Contains(pe.Msg, c.limit) || pe.Line != c.line {
				t.Fatalf("err = %v (line %d), want the %s limit on line %d", err, lineOf(pe), c.limit, c.line)
			}
			if _, err := ParseSnapshotWithLimits([]byte(c.data), Limits{}); err != nil {
				t.Errorf("under the default limits: %v", err)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "snap.json")
	if err := os.WriteFile(path, []byte(jsonSnap), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSnapshotWithLimits(path, Limits{MaxBytes: 64}); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "MaxBytes") {
		t.Errorf("a file over MaxBytes: %v, want it and the limit named", err)
	}
}

func lineOf(pe *ParseError) int {
	if pe == nil {
		return -1
	}
	return pe.Line
}
