package pipeline

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// BenchmarkDiagnose200 diagnoses a 200-resource snapshot (diff, classify,
// suggest). Run with -cpu 1 for the one-core figure; the target is at least
// 10,000 resources/s.
func BenchmarkDiagnose200(b *testing.B) {
	s := corpus.Bench(b, 200)
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
