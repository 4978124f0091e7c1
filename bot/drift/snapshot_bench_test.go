package drift

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hugeStringSnapshot is a snapshot whose one ConfigMap carries a value of n bytes.
func hugeStringSnapshot(n int) []byte {
	return []byte(`{"apiVersion":"driftfix/v1","kind":"Snapshot",` +
		`"application":{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"a","namespace":"argocd"}},` +
		`"resources":[{"target":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"k":"small"}},` +
		`"live":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"k":"` + strings.Repeat("x", n) + `"}}}]}`)
}

// manyResourcesSnapshot is a snapshot of n Deployments, target and live, about 1.8 KB each (live carries last-applied-configuration).
func manyResourcesSnapshot(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"driftfix/v1","kind":"Snapshot","application":{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"a","namespace":"argocd"}},"resources":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		d := func(replicas int) map[string]any {
			return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": fmt.Sprintf("web-%d", i), "namespace": "shop", "labels": map[string]any{"app": "web", "tier": "frontend"}},
				"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
					"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
						"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "ghcr.io/example/web:1.2.3",
							"ports":     []any{map[string]any{"containerPort": 8080, "name": "http"}},
							"env":       []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"}},
							"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}, "limits": map[string]any{"memory": "256Mi"}}}}}}}}
		}
		t, _ := json.Marshal(d(2))
		live := d(3)
		live["metadata"].(map[string]any)["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": string(t)}
		l, _ := json.Marshal(live)
		fmt.Fprintf(&b, `{"target":%s,"live":%s}`, t, l)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// peakHeap runs f b.N times and reports the peak live heap above the heap
// before it, sampled every millisecond, as peak-heap-MB.
func peakHeap(b *testing.B, f func()) {
	b.Helper()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var peak atomic.Uint64
	runtime.GC()
	base := heap()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := heap(); h > base && h-base > peak.Load() {
				peak.Store(h - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f()
	}
	b.StopTimer()
	close(done)
	<-stopped
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
}

// BenchmarkParseLargeSnapshot reads the two large snapshots of issue 17: one
// 50 MB string, and 10,000 resources (about 18 MB). Peak heap is reported
// above the input itself; the -yaml-reader case is the YAML reader, which
// every snapshot went through before (and YAML input still does).
//
//	go test ./bot/drift -run '^$' -bench ParseLargeSnapshot -benchtime 3x
func BenchmarkParseLargeSnapshot(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
		lim  Limits
	}{
		{"string-50MB", hugeStringSnapshot(50 << 20), Limits{MaxStringBytes: -1}},
		{"string-50MB-refused", hugeStringSnapshot(50 << 20), Limits{}},
		{"resources-10000", manyResourcesSnapshot(10000), Limits{}},
		{"resources-10000-yaml-reader", manyResourcesSnapshot(10000), Limits{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			peakHeap(b, func() {
				parse := ParseSnapshotWithLimits
				if strings.HasSuffix(c.name, "yaml-reader") {
					parse = parseYAMLSnapshot // what every snapshot went through before the quick JSON reader
				}
				_, err := parse(c.data, c.lim.withDefaults())
				if refused := strings.HasSuffix(c.name, "refused"); (err != nil) != refused {
					b.Fatalf("err = %v", err)
				}
			})
			b.ReportMetric(float64(len(c.data))/(1<<20), "input-MB")
		})
	}
}
