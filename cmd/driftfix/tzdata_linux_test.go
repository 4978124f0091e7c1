//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// zoneDirs are the directories Go's time package reads zones from on
// Linux, besides $ZONEINFO: the system's, and the Go installation's
// zoneinfo.zip, which an image does not have either.
func zoneDirs() []string {
	return []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo",
		filepath.Join(runtime.GOROOT(), "lib", "time")}
}

// TestPolicyTimezoneWithoutSystemZoneinfo: a policy with
// quietHours.timezone: Europe/Berlin is valid where the system has no zone
// database, as in the image's empty base. The check runs in a child process
// with its own mount namespace, where the system's zone directories and the
// Go installation's zoneinfo.zip are hidden under empty file systems and
// $ZONEINFO names an empty directory (Go falls back from $ZONEINFO to the
// others, so that alone proves nothing).
func TestPolicyTimezoneWithoutSystemZoneinfo(t *testing.T) {
	if os.Getenv("DRIFTFIX_TZ_CHILD") == "1" {
		tzChild(t)
		return
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "driftfix.yaml")
	body := "argocd: [{name: main, server: https://argocd.example.com, tokenEnv: ARGOCD_AUTH_TOKEN}]\n" +
		"policy:\n  quietHours: {from: \"22:00\", to: \"07:00\", timezone: Europe/Berlin}\n"
	if err := os.WriteFile(policy, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "zoneinfo")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPolicyTimezoneWithoutSystemZoneinfo$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "DRIFTFIX_TZ_CHILD=1", "DRIFTFIX_TZ_POLICY="+policy, "ZONEINFO="+empty, "TZ=", "GOROOT=")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Skipf("this machine does not let a test start a process in its own user and mount namespace: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "valid") {
		t.Fatalf("validating a policy with timezone Europe/Berlin and no system zone database: %v\n%s", err, out)
	}
}

// tzChild hides the system's zone database and validates the policy.
func tzChild(t *testing.T) {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		t.Fatalf("make the mounts private: %v", err)
	}
	for _, d := range zoneDirs() {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		if err := syscall.Mount("tmpfs", d, "tmpfs", 0, "size=64k"); err != nil {
			t.Fatalf("hide %s: %v", d, err)
		}
	}
	for _, f := range []string{"Europe/Berlin", "zoneinfo.zip"} {
		for _, d := range zoneDirs() {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				t.Fatalf("%s still holds %s", d, f)
			}
		}
	}
	code, out, stderr := runCLI("config", "validate", os.Getenv("DRIFTFIX_TZ_POLICY"))
	if code != exitClean {
		t.Fatalf("config validate: exit %d\n%s%s", code, out, stderr)
	}
	t.Log(strings.TrimSpace(out))
}
