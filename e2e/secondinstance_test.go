//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// secondInstance runs a second Argo CD application controller, watching
// Applications in namespace ns (its own argocd-cm, argocd-secret and default
// project there), with its own Redis on redisPort, sharing the stack's
// repo-server; it is stopped when the test ends. Run inside the stack's
// network namespace, as the tests are.
func (s *stack) secondInstance(t *testing.T, ns string, redisPort, metricsPort int) {
	t.Helper()
	s.kubectl(t, "", "delete", "namespace", ns, "--ignore-not-found", "--timeout=120s")
	s.kubectl(t, "", "create", "namespace", ns)
	s.kubectl(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: %[1]s
  labels: {app.kubernetes.io/part-of: argocd, app.kubernetes.io/name: argocd-cm}
data:
  timeout.reconciliation: 10s
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-rbac-cm
  namespace: %[1]s
  labels: {app.kubernetes.io/part-of: argocd, app.kubernetes.io/name: argocd-rbac-cm}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cmd-params-cm
  namespace: %[1]s
  labels: {app.kubernetes.io/part-of: argocd, app.kubernetes.io/name: argocd-cmd-params-cm}
---
apiVersion: v1
kind: Secret
metadata:
  name: argocd-secret
  namespace: %[1]s
  labels: {app.kubernetes.io/part-of: argocd, app.kubernetes.io/name: argocd-secret}
stringData:
  server.secretkey: %[2]s
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: %[1]s}
spec:
  sourceRepos: ['*']
  destinations: [{namespace: '*', server: '*'}]
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
`, ns, fmt.Sprintf("second-instance-%d", time.Now().UnixNano())), "apply", "-f", "-")

	run := filepath.Join(s.root, "run")
	logs := filepath.Join(run, "logs")
	start := func(name string, env []string, bin string, args ...string) {
		f, err := os.Create(filepath.Join(logs, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = f, f
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			f.Close()
		})
	}
	start(ns+"-redis", nil, "redis-server", "--bind", "127.0.0.1", "--port", fmt.Sprint(redisPort), "--save", "", "--appendonly", "no", "--protected-mode", "yes")
	local := filepath.Join(run, "argocd-local")
	start(ns+"-app-controller", []string{
		"ARGOCD_BINARY_NAME=argocd-application-controller", "ARGOCD_FAKE_IN_CLUSTER=true", "KUBECONFIG=" + s.kubeconfig, "ARGOCD_GPG_ENABLED=false",
		"ARGOCD_TLS_DATA_PATH=" + filepath.Join(local, "tls"), "ARGOCD_SSH_DATA_PATH=" + filepath.Join(local, "ssh"),
		"ARGOCD_GNUPGHOME=" + filepath.Join(local, "gpg", "keys"), "ARGOCD_GPG_DATA_PATH=" + filepath.Join(local, "gpg", "source"),
	}, filepath.Join(s.root, "bin", "argocd"), "--kubeconfig", s.kubeconfig, "--namespace", ns,
		"--redis", fmt.Sprintf("127.0.0.1:%d", redisPort), "--repo-server", "127.0.0.1:8081", "--commit-server", "127.0.0.1:8086",
		"--metrics-port", fmt.Sprint(metricsPort), "--app-resync", "10", "--self-heal-timeout-seconds", "2")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", metricsPort))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second Argo CD instance's controller never became healthy (see %s)", filepath.Join(logs, ns+"-app-controller.log"))
		}
	}
}
