//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
)

// TestPlugin runs driftfix as the argocd CLI's plugin with the stack's
// argocd 3.6.1, the way a user with only `argocd login` done would: the
// binary installed on PATH as argocd-driftfix, no driftfix flag naming the
// server or token, `argocd driftfix scan` and `argocd driftfix diagnose
// NAMESPACE/APP` reading the context argocd login wrote.
func TestPlugin(t *testing.T) {
	s := newStack(t)
	argocdBin := filepath.Join(s.root, "bin", "argocd")
	home, pathDir := t.TempDir(), t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(pathDir, "argocd-driftfix"), "../cmd/driftfix").CombinedOutput(); err != nil {
		t.Fatalf("build argocd-driftfix: %v\n%s", err, out)
	}
	env := append(os.Environ(), "HOME="+home, "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ARGOCD_CONFIG_DIR=", "XDG_CONFIG_HOME=", "ARGOCD_SERVER=", "ARGOCD_AUTH_TOKEN=", "ARGOCD_OPTS=")
	argo := func(args ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(argocdBin, args...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("argocd %v: %v", args, err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}

	// argocd login needs a password: the stack keeps none, so the admin's is
	// set to one of this test's (its hash only: admin.passwordMtime stays,
	// so sessions already issued stay valid).
	password := "plugin-" + time.Now().Format("150405.000000")
	hash, _, code := argo("account", "bcrypt", "--password", password)
	if code != 0 {
		t.Fatalf("argocd account bcrypt: exit %d", code)
	}
	patch, _ := json.Marshal(map[string]any{"stringData": map[string]string{"admin.password": strings.TrimSpace(hash)}})
	s.kubectl(t, "", "-n", "argocd", "patch", "secret", "argocd-secret", "--type", "merge", "-p", string(patch))
	server := strings.TrimPrefix(argoURL, "http://")
	var out, errOut string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		out, errOut, code = argo("login", server, "--plaintext", "--username", "admin", "--password", password)
		if code == 0 || time.Now().After(deadline) {
			break
		}
	}
	if code != 0 {
		t.Fatalf("argocd login: exit %d\n%s%s", code, out, errOut)
	}
	cfg, err := os.ReadFile(filepath.Join(home, ".config", "argocd", "config"))
	if err != nil || !strings.Contains(string(cfg), "plain-text: true") {
		t.Fatalf("argocd login wrote no plain-text context (%v):\n%s", err, cfg)
	}

	// One application changed by hand: OutOfSync after its sync.
	const name = "e2e-plugin"
	repo := gitRepo(t, map[string]string{"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: steady}\n"})
	s.application(t, name, repo, "app", name, "")
	s.kubectl(t, "", "-n", name, "patch", "configmap", "settings", "--type=merge", "-p", `{"data":{"mode":"changed-by-hand"}}`)
	s.waitFor(t, name, func(a argocd.AppSummary) bool { return a.SyncStatus == "OutOfSync" }, "OutOfSync after the change by hand")

	// argocd writes "Error: exit status N" to standard output after a
	// plugin that exits non-zero (cmd/main.go); the JSON comes before it.
	jsonOf := func(out string) []byte {
		out = strings.TrimSuffix(out, "Error: exit status 1\n")
		return []byte(out)
	}
	out, errOut, code = argo("driftfix", "scan", "--stuck-after", "0s", "--kubeconfig", s.kubeconfig, "-o", "json")
	if code != 1 {
		t.Fatalf("argocd driftfix scan: exit %d, want 1 (stuck found)\n%s%s", code, out, errOut)
	}
	var scan struct {
		Stuck []struct {
			Application, Namespace string
			Causes                 map[string]int
		}
	}
	if err := json.Unmarshal(jsonOf(out), &scan); err != nil {
		t.Fatalf("scan output: %v\n%s", err, out)
	}
	found := false
	for _, a := range scan.Stuck {
		if a.Application == name && a.Namespace == "argocd" && a.Causes["manual-change"] == 1 {
			found = true
		}
	}
	if !found {
		t.Fatalf("%s is not listed stuck with a manual change:\n%s", name, out)
	}

	out, errOut, code = argo("driftfix", "diagnose", "argocd/"+name, "--kubeconfig", s.kubeconfig, "-o", "json")
	if code != 1 || !strings.Contains(out, `"cause": "manual-change"`) || !strings.Contains(out, `"path": "/data/mode"`) {
		t.Fatalf("argocd driftfix diagnose argocd/%s: exit %d\n%s%s", name, code, out, errOut)
	}
	// Help and errors name the command as typed.
	out, _, code = argo("driftfix", "scan", "--help")
	if code != 0 || !strings.Contains(out, "argocd driftfix scan [flags]") {
		t.Fatalf("argocd driftfix scan --help: exit %d\n%s", code, out)
	}
	_, errOut, code = argo("driftfix", "diagnose", "a/b/c")
	if code != 2 || !strings.Contains(errOut, "argocd driftfix diagnose: ") {
		t.Fatalf("argocd driftfix diagnose a/b/c: exit %d\n%s", code, errOut)
	}
}
