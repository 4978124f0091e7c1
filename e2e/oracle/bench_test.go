package oracle

import (
	"fmt"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// bench200 builds a 200-resource application from the same mix of testdata
// cases the main module's BenchmarkDiagnose200 clones.
func bench200(b *testing.B) *drift.Snapshot {
	var pool []drift.Resource
	var cluster []drift.Object
	var app drift.Object
	for _, name := range []string{"01-hpa-statefulset", "11-builtin-quantity-hidden", "05-cabundle-cainjector-ssa", "17-webhook-adds-label",
		"12-builtin-unknown-field", "21-manual-kubectl-patch", "30-secret-stringdata", "09-cr-quantity-conversion", "16-empty-values-dropped"} {
		s, err := drift.LoadSnapshot("../../testdata/cases/" + name + ".yaml")
		if err != nil {
			b.Fatal(err)
		}
		if app == nil {
			app = s.Application
		}
		pool = append(pool, s.Resources...)
		cluster = append(cluster, s.Cluster...)
	}
	out := &drift.Snapshot{Application: app, Cluster: cluster}
	for i := 0; len(out.Resources) < 200; i++ {
		r := pool[i%len(pool)]
		c := drift.Resource{Target: clone(r.Target), Live: clone(r.Live), DryRun: clone(r.DryRun)}
		for _, o := range []drift.Object{c.Target, c.Live, c.DryRun} {
			if o != nil {
				md := o["metadata"].(map[string]any)
				md["name"] = fmt.Sprintf("%s-%d", md["name"], i)
			}
		}
		out.Resources = append(out.Resources, c)
	}
	return out
}

// BenchmarkSideBySide200 compares the same 200 resources with Argo CD's
// diff and with driftfix's; run with -cpu 1 and read the two lines' ns/op
// as a ratio.
func BenchmarkSideBySide200(b *testing.B) {
	s := bench200(b)
	b.Run("argocd", func(b *testing.B) {
		// The controller parses its cluster's schema and argocd-cm once, not
		// per comparison: warm both before timing.
		if _, err := ArgoCD(s); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := ArgoCD(s); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(200*b.N)/b.Elapsed().Seconds(), "resources/s")
	})
	b.Run("driftfix", func(b *testing.B) {
		for b.Loop() {
			if _, err := Driftfix(s); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(200*b.N)/b.Elapsed().Seconds(), "resources/s")
	})
}
