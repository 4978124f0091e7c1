package bot

import (
	"fmt"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// benchSnapshot builds an application with n resources by cloning, under new
// names, the resources of several testdata cases (a mix of clean ones, server
// defaults, HPA replicas, webhook injections, quantities and manual edits),
// with their cluster context.
func benchSnapshot(tb testing.TB, n int) *drift.Snapshot {
	tb.Helper()
	var pool []drift.Resource
	var cluster []drift.Object
	var app drift.Object
	for _, name := range []string{"01-hpa-statefulset", "11-builtin-quantity-hidden", "05-cabundle-cainjector-ssa", "17-webhook-adds-label",
		"12-builtin-unknown-field", "21-manual-kubectl-patch", "30-secret-stringdata", "09-cr-quantity-conversion", "16-empty-values-dropped"} {
		s := loadSnapshot(tb, "../testdata/cases/"+name+".yaml")
		if app == nil {
			app = s.Application
		}
		pool = append(pool, s.Resources...)
		cluster = append(cluster, s.Cluster...)
	}
	out := &drift.Snapshot{Application: app, Cluster: cluster}
	for i := 0; len(out.Resources) < n; i++ {
		r := pool[i%len(pool)]
		c := drift.Resource{Target: cloneObject(r.Target), Live: cloneObject(r.Live)}
		suffix := fmt.Sprintf("-%d", i)
		for _, o := range []drift.Object{c.Target, c.Live} {
			if o != nil {
				md := o["metadata"].(map[string]any)
				md["name"] = md["name"].(string) + suffix
			}
		}
		out.Resources = append(out.Resources, c)
	}
	return out
}

// BenchmarkDiagnose200 diagnoses a 200-resource snapshot (diff, classify,
// suggest). Run with -cpu 1 for the one-core figure; the target is at least
// 10,000 resources/s.
func BenchmarkDiagnose200(b *testing.B) {
	s := benchSnapshot(b, 200)
	rep, err := Diagnose(s, drift.Sensitivity{})
	if err != nil {
		b.Fatal(err)
	}
	if len(rep.Findings) == 0 {
		b.Fatal("the benchmark snapshot should have drift to classify")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Diagnose(s, drift.Sensitivity{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(s.Resources))/b.Elapsed().Seconds(), "resources/s")
	b.ReportMetric(float64(len(rep.Findings)), "findings")
}

func cloneObject(o drift.Object) drift.Object {
	if o == nil {
		return nil
	}
	return drift.DeepCopy(o).(map[string]any)
}
