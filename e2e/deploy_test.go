//go:build e2e

package e2e

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/kube"
)

func (s *stack) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(s.root, "bin", name), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestDeploy lints the chart with the real helm, applies the chart's and the
// Kustomize base's objects server-side (dry run), then applies the RBAC for
// real and checks with `kubectl auth can-i` what the service account may and
// may not do, and that driftfix's own cluster reads and Lease work as it.
func TestDeploy(t *testing.T) {
	s := newStack(t)
	chart, _ := filepath.Abs("../deploy/chart")
	kust, _ := filepath.Abs("../deploy/kustomize")
	full := filepath.Join(t.TempDir(), "full.yaml")
	if err := os.WriteFile(full, []byte(`mode: cronjob
github: {appID: 123456}
slack: {channel: "#gitops-drift"}
persistence: {enabled: true}
policy: {stuckAfter: 20m, draft: true}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	s.run(t, "helm", "lint", chart)
	s.run(t, "helm", "lint", chart, "-f", full)

	s.kubectl(t, "", "create", "namespace", "driftfix")
	t.Cleanup(func() { s.kubectl(t, "", "delete", "namespace", "driftfix", "--ignore-not-found", "--timeout=60s") })
	for name, manifests := range map[string]string{
		"chart (default values)": s.run(t, "helm", "template", "driftfix", chart, "-n", "driftfix"),
		"chart (full values)":    s.run(t, "helm", "template", "driftfix", chart, "-n", "driftfix", "-f", full),
		"kustomize base":         s.kubectl(t, "", "kustomize", kust),
	} {
		out := s.kubectl(t, manifests, "apply", "--dry-run=server", "-f", "-")
		if !strings.Contains(out, "(server dry run)") {
			t.Errorf("%s: %s", name, out)
		}
	}

	// The RBAC for real (no Deployment: this stack runs no pods).
	rbac, err := os.ReadFile(filepath.Join(kust, "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := os.ReadFile(filepath.Join(kust, "serviceaccount.yaml"))
	s.kubectl(t, string(sa)+"\n---\n"+string(rbac), "apply", "--server-side", "-f", "-")
	t.Cleanup(func() {
		s.kubectl(t, "", "delete", "clusterrole,clusterrolebinding", "driftfix", "--ignore-not-found")
		s.kubectl(t, "", "-n", "argocd", "delete", "role,rolebinding", "driftfix-argocd-cm", "--ignore-not-found")
	})
	as := "--as=system:serviceaccount:driftfix:driftfix"
	canI := func(args ...string) bool {
		cmd := exec.Command(filepath.Join(s.root, "bin", "kubectl"), append([]string{"--kubeconfig", s.kubeconfig, "auth", "can-i", as}, args...)...)
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out)) == "yes"
	}
	for _, a := range [][]string{
		{"list", "horizontalpodautoscalers.autoscaling", "-A"}, {"watch", "mutatingwebhookconfigurations.admissionregistration.k8s.io"},
		{"list", "namespaces"}, {"list", "customresourcedefinitions.apiextensions.k8s.io"},
		{"get", "configmap/argocd-cm", "-n", "argocd"},
		{"create", "leases.coordination.k8s.io", "-n", "driftfix"}, {"update", "leases.coordination.k8s.io/driftfix", "-n", "driftfix"},
	} {
		if !canI(a...) {
			t.Errorf("driftfix may not %v, which it needs", a)
		}
	}
	for _, a := range [][]string{
		{"get", "secrets", "-n", "driftfix"}, {"list", "secrets", "-A"}, {"get", "secret/argocd-secret", "-n", "argocd"},
		{"get", "configmap/argocd-rbac-cm", "-n", "argocd"}, {"create", "deployments.apps", "-n", "default"},
		{"patch", "deployments.apps", "-A"}, {"delete", "namespaces"}, {"update", "horizontalpodautoscalers.autoscaling", "-A"},
		{"create", "mutatingwebhookconfigurations.admissionregistration.k8s.io"}, {"update", "leases.coordination.k8s.io/kube-controller-manager", "-n", "kube-system"},
		{"update", "leases.coordination.k8s.io/other", "-n", "driftfix"}, {"create", "applications.argoproj.io", "-n", "argocd"},
	} {
		if canI(a...) {
			t.Errorf("driftfix may %v, which it must not", a)
		}
	}

	// What driftfix does with that account works: one cycle's cluster reads
	// and the leader Lease.
	rc, err := kube.RESTConfig(kube.Config{Kubeconfig: s.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	rc.Impersonate.UserName = "system:serviceaccount:driftfix:driftfix"
	if _, err := kube.Read(context.Background(), rc, kube.Config{}); err != nil {
		t.Fatalf("the cluster reads fail with the chart's RBAC: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	led := false
	err = kube.Lead(ctx, rc, "driftfix", "driftfix", "e2e", discard(), func(context.Context) { led = true })
	if !led {
		t.Fatalf("the Lease could not be taken with the chart's RBAC: %v", err)
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
