package pipeline

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// BenchmarkDiagnose200 diagnoses a 200-resource snapshot (diff, classify,
// suggest). Run with -cpu 1 for the one-core figure; the target is at least
// 25,000 resources/s (issue #32), and BenchmarkDiagnoseVsDecode's ratio at
// most 1.5.
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

// BenchmarkDiagnoseVsDecode puts the diagnosis of the 200-resource snapshot
// beside a plain encoding/json decode of the same snapshot into
// map[string]any, timed alternately in one run so that both see the same
// machine load. It reports each per resource and their ratio (the target is
// a diagnosis within 1.5 times the decode).
func BenchmarkDiagnoseVsDecode(b *testing.B) {
	s := corpus.Bench(b, 200)
	raw, err := json.Marshal(s)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Diagnose(s, drift.Sensitivity{}); err != nil {
		b.Fatal(err)
	}
	var decode, diagnose time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := Diagnose(s, drift.Sensitivity{}); err != nil {
			b.Fatal(err)
		}
		decode += t1.Sub(t0)
		diagnose += time.Since(t1)
	}
	n := float64(b.N * len(s.Resources))
	b.ReportMetric(float64(decode.Nanoseconds())/n, "decode-ns/resource")
	b.ReportMetric(float64(diagnose.Nanoseconds())/n, "diagnose-ns/resource")
	b.ReportMetric(float64(diagnose)/float64(decode), "diagnose/decode")
	b.ReportMetric(float64(len(raw)), "snapshot-bytes")
}
