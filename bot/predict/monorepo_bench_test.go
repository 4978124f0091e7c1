//go:build linux

package predict

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// monorepo is a repository of n applications, each a kustomization of its
// own; the first shared of them read one shared base (a Deployment and an
// HPA), the others a Deployment of their own. The change adds replicas to
// the shared base's Deployment: shared applications are touched, each gets
// one hpa-replicas prediction.
func monorepo(n, shared int) (base, head Revision) {
	files := map[string]string{}
	files["bases/web/kustomization.yaml"] = "resources: [deploy.yaml, hpa.yaml]\n"
	files["bases/web/deploy.yaml"] = deployment("", "100m")
	files["bases/web/hpa.yaml"] = webHPA
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("svc-%03d", i)
		files["apps/"+name+".yaml"] = fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  source: {repoURL: https://git.example.com/mono.git, path: services/%s, targetRevision: HEAD}
`, name, name, name)
		if i < shared {
			files["services/"+name+"/kustomization.yaml"] = "resources: [../../bases/web]\nnamePrefix: " + name + "-\n"
			continue
		}
		files["services/"+name+"/kustomization.yaml"] = "resources: [deploy.yaml]\n"
		files["services/"+name+"/deploy.yaml"] = deployment("  replicas: 1\n", "250m")
	}
	headFiles := map[string]string{}
	for k, v := range files {
		headFiles[k] = v
	}
	headFiles["bases/web/deploy.yaml"] = deployment("  replicas: 3\n", "100m")
	return Revision{Name: "main", Files: files}, Revision{Name: "change", Files: headFiles}
}

// BenchmarkPredictMonorepo: one run over a repository of 300 applications
// where the change touches a shared base that 100 of them read. Reported:
// seconds per run, the peak resident memory of this process and of the
// largest render process, and the renders made. Target (issue 40): at most
// 20 s and 1 GB peak on 2 cores.
func BenchmarkPredictMonorepo(b *testing.B) {
	base, head := monorepo(300, 100)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := Run(context.Background(), base, head, Options{MaxApplications: 300})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/run")
		if len(res.Applications) != 100 || len(res.Predictions) != 100 || len(res.NotPredicted) != 0 {
			b.Fatalf("predicted %d applications, %d predictions, %d not predicted: want 100, 100, 0", len(res.Applications), len(res.Predictions), len(res.NotPredicted))
		}
	}
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(self.Maxrss)/1024, "MB-peak-rss")
	b.ReportMetric(float64(children.Maxrss)/1024, "MB-peak-render-rss")
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "MB-heap-sys")
}
