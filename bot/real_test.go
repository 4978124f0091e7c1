package bot

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// realExpectations are the findings of the snapshots captured from the real
// stack (e2e/stack: kube-apiserver, kube-controller-manager, Argo CD 3.6.1) by
// `go test -tags e2e ./e2e -update-real`.
var realExpectations = map[string][]string{
	"e2e-manual": {"Deployment /spec/replicas manual-change"},
	"e2e-hpa":    {"Deployment /spec/replicas hpa-replicas"},
}

func TestRealSnapshots(t *testing.T) {
	files, err := filepath.Glob("../testdata/real/*.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, ok := realExpectations[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			s, err := drift.LoadSnapshot(file)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Diagnose(s, drift.Sensitivity{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Resource.Kind+" "+f.Path.String()+" "+string(f.Cause))
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("findings %q, want %q", got, want)
			}
		})
	}
	for name := range realExpectations {
		if !seen[name] {
			t.Errorf("testdata/real/%s.json is missing", name)
		}
	}
	if _, err := os.Stat("../testdata/real"); err != nil {
		t.Fatal(err)
	}
}
