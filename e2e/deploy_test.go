//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/kube"
	"github.com/driftfix/driftfix/deploy"
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
		// helm template knows no cluster: it is told the stack's version, which the chart's kubeVersion floor admits
		"chart (default values)": s.run(t, "helm", "template", "driftfix", chart, "-n", "driftfix", "--kube-version", s.serverVersion(t)),
		"chart (full values)":    s.run(t, "helm", "template", "driftfix", chart, "-n", "driftfix", "--kube-version", s.serverVersion(t), "-f", full),
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
		{"list", "horizontalpodautoscalers.autoscaling", "-A"}, {"list", "mutatingwebhookconfigurations.admissionregistration.k8s.io"},
		{"list", "namespaces"}, {"list", "customresourcedefinitions.apiextensions.k8s.io"}, {"list", "applications.argoproj.io", "-A"},
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
		{"patch", "applications.argoproj.io", "-A"}, {"delete", "applications.argoproj.io", "-n", "argocd"},
		// read as the collector reads: list only, no watch or get it never makes
		{"watch", "mutatingwebhookconfigurations.admissionregistration.k8s.io"}, {"get", "customresourcedefinitions.apiextensions.k8s.io"},
		{"watch", "horizontalpodautoscalers.autoscaling", "-A"},
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

// TestInstallAsREADME follows the README's install section against the real
// stack: the Argo CD account, then the README's own lines, read from it with
// deploy.READMECommand and run as written: the namespace, the Secret (plus
// the slack-token key docs/install.md's Secret adds for Slack) and `helm
// install`, with only what this stack needs appended as extra --set flags:
// its plaintext argocd-server, its GitHub App and the emulators' URLs, and
// a stuck threshold a test can wait for. The README's line installs a dry
// run: the bot must cycle and propose the fix without opening it. Then the
// upgrade line of docs/install.md, as written (Slack's channel, dryRun=false):
// the bot must open the fix PR and post the digest. Each time the
// Deployment's container runs as the kubelet would (this stack has no
// kubelet): its args, its ConfigMap and Secret as files, its service
// account's identity.
func TestInstallAsREADME(t *testing.T) {
	s := newStack(t)
	env := newBotEnvWith(t, s, "e2e-install", "unused.db", hpaApp)
	s.hpaDrift(t, "e2e-install", env.repo)
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	installDoc, err := os.ReadFile("../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	line := func(doc []byte, prefix string) []string {
		t.Helper()
		words, err := deploy.READMECommand(doc, prefix)
		if err != nil {
			t.Fatal(err)
		}
		return words
	}
	// run runs a documented line's words from dir (relative paths in the
	// line are the repository's), the stack's kubeconfig given as a flag.
	run := func(dir string, words []string, extra ...string) {
		t.Helper()
		args := append([]string{"--kubeconfig", s.kubeconfig}, words[1:]...)
		cmd := exec.Command(filepath.Join(s.root, "bin", words[0]), append(args, extra...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
		}
	}
	repoRoot, _ := filepath.Abs("..")

	// 1. The Argo CD account (the stack made the same one; merging the patch again changes nothing).
	s.kubectl(t, "", "-n", "argocd", "patch", "configmap", "argocd-cm", "--type", "merge", "--patch-file", "../deploy/argocd/argocd-cm-patch.yaml")
	if p := s.kubectl(t, "", "-n", "argocd", "get", "configmap", "argocd-rbac-cm", "-o", `jsonpath={.data.policy\.csv}`); !strings.Contains(p, "p, driftfix, applications, get, */*, allow") {
		t.Fatalf("argocd-rbac-cm lacks the README's line: %q", p)
	}
	// 2. The namespace and the Secret, from files in the current directory.
	work := t.TempDir()
	token, _ := os.ReadFile(filepath.Join(s.root, "run", "argocd-token"))
	for name, content := range map[string][]byte{"argocd-token": token, "github-app.pem": env.gh.PrivateKeyPEM, "slack-token": []byte(e2eSlackToken)} {
		if err := os.WriteFile(filepath.Join(work, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run(work, line(readme, "kubectl create namespace driftfix"))
	t.Cleanup(func() { s.kubectl(t, "", "delete", "namespace", "driftfix", "--ignore-not-found", "--timeout=60s") })
	run(work, line(readme, "kubectl -n driftfix create secret generic driftfix "), "--from-file=slack-token")

	// helm install, the README's line, with this stack's addresses appended
	// (later --set flags win): its plaintext Argo CD, its GitHub App, and the
	// emulators' URLs; Slack's stays unused until the upgrade names a channel.
	run(repoRoot, line(readme, "helm install driftfix deploy/chart "),
		"--set", "argocd.server="+argoURL, "--set", "argocd.insecurePlaintext=true",
		"--set", "github.appID="+strconv.FormatInt(env.gh.AppID, 10), "--set", "github.baseURL="+env.gh.API,
		"--set", "slack.apiURL="+env.sl.URL,
		"--set", "policy.stuckAfter=1s", "--set", "policy.minStuckFor=0s")
	t.Cleanup(func() {
		exec.Command(filepath.Join(s.root, "bin", "helm"), "--kubeconfig", s.kubeconfig, "uninstall", "driftfix", "-n", "driftfix").Run()
	})

	// The README's install is a dry run: the fix is proposed, in the log, and not opened.
	pod, _ := s.runInstalled(t, env)
	done := cycleDone(t, pod)
	if proposed, _ := done["proposed"].(float64); proposed < 1 || done["opened"] != float64(0) {
		t.Fatalf("the README's dry run: %v\n%s", done, pod.text())
	}
	if prs := env.gh.PullRequests("acme", "e2e-install"); len(prs) != 0 {
		t.Fatalf("the README's dry run opened pull requests: %+v", prs)
	}
	pod.stop(t)

	// docs/install.md's upgrade line, as written: Slack's channel and dryRun=false.
	run(repoRoot, line(installDoc, "   helm upgrade driftfix deploy/chart -n driftfix --reuse-values --set slack.channel="))
	pod, addr := s.runInstalled(t, env)
	cycleDone(t, pod)
	prs := env.gh.PullRequests("acme", "e2e-install")
	if len(prs) != 1 || !strings.HasPrefix(prs[0].Head, "driftfix/e2e-install/hpa-replicas-") {
		t.Fatalf("the installed bot's PRs: %+v\n%s", prs, pod.text())
	}
	if posts := env.sl.Posts(); len(posts) == 0 || posts[0]["channel"] != "#gitops-drift" {
		t.Fatalf("the installed bot's digest: %+v", posts)
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/metrics: %v", err)
	}
	pod.stop(t)
}

// runInstalled runs the installed Deployment's container as the kubelet
// would, in a new pod (fresh state): its args, its ConfigMap and Secret as
// files, its service account's identity. It returns the pod and the address
// it serves metrics on; the pod is killed when the test ends.
func (s *stack) runInstalled(t *testing.T, env *botEnv) (*replica, string) {
	t.Helper()
	root := t.TempDir()
	cfg := s.kubectl(t, "", "-n", "driftfix", "get", "configmap", "driftfix", "-o", `jsonpath={.data.driftfix\.yaml}`)
	cfg = strings.NewReplacer("/var/run/secrets/driftfix/", root+"/secrets/", "/var/lib/driftfix/", root+"/state/").Replace(cfg)
	os.MkdirAll(filepath.Join(root, "secrets"), 0o700)
	os.MkdirAll(filepath.Join(root, "state"), 0o700)
	if err := os.WriteFile(filepath.Join(root, "driftfix.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"argocd-token", "github-app.pem", "slack-token"} {
		b64 := s.kubectl(t, "", "-n", "driftfix", "get", "secret", "driftfix", "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", `\.`)+"}")
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, "secrets", key), raw, 0o600)
	}
	var args []string
	if err := json.Unmarshal([]byte(s.kubectl(t, "", "-n", "driftfix", "get", "deployment", "driftfix", "-o", "jsonpath={.spec.template.spec.containers[0].args}")), &args); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--config="):
			args[i] = "--config=" + filepath.Join(root, "driftfix.yaml")
		case strings.HasPrefix(a, "--listen="):
			args[i] = "--listen=" + addr
		}
	}
	// The service account's identity: the admin kubeconfig impersonating it.
	kc, err := os.ReadFile(s.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var kcObj map[string]any
	if err := yaml.Unmarshal(kc, &kcObj); err != nil {
		t.Fatal(err)
	}
	for _, u := range kcObj["users"].([]any) {
		u.(map[string]any)["user"].(map[string]any)["as"] = "system:serviceaccount:driftfix:driftfix"
	}
	saKC, _ := yaml.Marshal(kcObj)
	saFile := filepath.Join(root, "sa-kubeconfig")
	os.WriteFile(saFile, saKC, 0o600)

	pod := &replica{name: "pod"}
	pod.cmd = exec.Command(env.bin, args...)
	pod.cmd.Env = append(os.Environ(), "KUBECONFIG="+saFile, "POD_NAMESPACE=driftfix")
	pod.cmd.Stdout, pod.cmd.Stderr = pod, pod
	if err := pod.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if pod.cmd.ProcessState == nil {
			pod.cmd.Process.Kill()
			pod.cmd.Wait()
		}
	})
	return pod, addr
}

// cycleDone waits up to two minutes for the pod's first "cycle done" log
// line and returns it.
func cycleDone(t *testing.T, pod *replica) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		for _, l := range strings.Split(pod.text(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "cycle done" {
				return m
			}
		}
	}
	t.Fatalf("the installed bot never finished a cycle:\n%s", pod.text())
	return nil
}

// stop stops the pod as the kubelet does (SIGTERM) and checks it stops cleanly.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	r.cmd.Process.Signal(syscall.SIGTERM)
	r.cmd.Wait()
	if !strings.Contains(r.text(), `"msg":"driftfix stopped"`) {
		t.Fatalf("no clean stop:\n%s", r.text())
	}
}

// serverVersion is the stack's kube-apiserver version (v1.N.M).
func (s *stack) serverVersion(t *testing.T) string {
	t.Helper()
	var v struct {
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(s.kubectl(t, "", "version", "-o", "json")), &v); err != nil || v.ServerVersion.GitVersion == "" {
		t.Fatalf("kubectl version: %v", err)
	}
	return v.ServerVersion.GitVersion
}
