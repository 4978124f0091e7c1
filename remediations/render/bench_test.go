package render

import (
	"flag"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// measure runs f and reports the peak live heap it reached above the heap
// before it (sampled every millisecond) and the CPU time the process spent.
func measure(b *testing.B, f func()) {
	b.Helper()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var peak atomic.Uint64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		base := heap()
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		done := make(chan struct{})
		go func() {
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
		f()
		close(done)
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
		b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
	}
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
}

var unbounded = flag.Bool("unbounded", false, "BenchmarkHostileCharts also renders without limits (minutes of CPU, gigabytes of heap)")

// BenchmarkHostileCharts renders the crafted charts of issue 17 with the
// default limits and, with -unbounded, with none (what a render did before
// it was bounded): a template expanding to about 1.25 GB and one generating
// RSA keys in a loop. Run one iteration each:
//
//	go test ./remediations/render -run '^$' -bench HostileCharts -benchtime 1x [-unbounded]
func BenchmarkHostileCharts(b *testing.B) {
	none := Limits{MaxFiles: -1, MaxChartBytes: -1, MaxTemplateBytes: -1, MaxValuesBytes: -1, MaxRenderedBytes: -1, Timeout: -1}
	charts := map[string]map[string]string{
		"expand-1.25GB": {"templates/x.yaml": "{{ range until 1000 }}{{ range until 1000 }}# " + strings.Repeat("x", 1248) + "\n{{ end }}{{ end }}"},
		"rsa-keys":      {"templates/x.yaml": "{{ range until 200 }}{{ $k := genPrivateKey \"rsa\" }}{{ end }}"},
	}
	for name, files := range charts {
		for lname, lim := range map[string]Limits{"default-limits": {}, "no-limits": none} {
			b.Run(name+"/"+lname, func(b *testing.B) {
				if lname == "no-limits" && !*unbounded {
					b.Skip("-unbounded not set")
				}
				measure(b, func() {
					_, err := Helm(chartFiles(files), HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n", Limits: lim})
					b.Logf("%v", err)
				})
			})
		}
	}
}

// BenchmarkRenderProcess measures what running a render in a process of its
// own costs against running it in the bot's process, for an ordinary chart
// and an ordinary overlay:
//
//	go test ./remediations/render -run '^$' -bench RenderProcess
func BenchmarkRenderProcess(b *testing.B) {
	chart := chartFiles(map[string]string{
		"values.yaml":            "image: {repository: nginx, tag: \"1.27\"}\nreplicas: 2\nports: [80, 443]\n",
		"templates/_helpers.tpl": "{{- define \"c.labels\" }}app: {{ .Release.Name }}{{ end }}\n",
		"templates/d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    {{- include \"c.labels\" . | nindent 4 }}\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n" +
			"      - name: app\n        image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n        ports:\n        {{- range .Values.ports }}\n        - containerPort: {{ . }}\n        {{- end }}\n",
		"templates/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  ports:\n  {{- range .Values.ports }}\n  - port: {{ . }}\n  {{- end }}\n",
	})
	opts := HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n"}
	overlay := map[string][]byte{
		"overlays/prod/kustomization.yaml": []byte("resources:\n- ../../base\nnamePrefix: prod-\nimages:\n- name: nginx\n  newTag: \"1.27\"\n"),
		"base/kustomization.yaml":          []byte("resources:\n- d.yaml\n"),
		"base/d.yaml":                      []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n"),
	}
	lim := DefaultLimits
	cases := []struct {
		name string
		f    func() ([]map[string]any, error)
	}{
		{"helm/in-process", func() ([]map[string]any, error) { return helm(chart, opts) }},
		{"helm/child", func() ([]map[string]any, error) { return Helm(chart, opts) }},
		{"kustomize/in-process", func() ([]map[string]any, error) { return kustomizeChecked(overlay, "overlays/prod", "", nil, lim) }},
		{"kustomize/child", func() ([]map[string]any, error) { return Kustomize(overlay, "overlays/prod") }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuWithChildren()
			for b.Loop() {
				if objs, err := c.f(); err != nil || len(objs) == 0 {
					b.Fatalf("%d objects, %v", len(objs), err)
				}
			}
			b.ReportMetric(float64(cpuWithChildren()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuWithChildren is the CPU time this process and its reaped children used.
func cpuWithChildren() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}
