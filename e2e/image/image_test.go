package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
)

const revision = "0123456789abcdef0123456789abcdef01234567"

var platforms = []string{"linux/amd64", "linux/arm64"}

// binaries builds driftfix for each platform as CI builds it for the image:
// static, -trimpath, with the version and revision stamped in.
func binaries(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	for _, p := range platforms {
		arch := strings.TrimPrefix(p, "linux/")
		bin := filepath.Join(dir, arch, "driftfix")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=v0.0.0-test -X main.revision="+revision, "-o", bin, "./cmd/driftfix")
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build driftfix for %s: %v\n%s", p, err, b)
		}
		out[p] = bin
	}
	return out
}

// TestImage builds the image for linux/amd64 and linux/arm64 under one
// index, twice from the same inputs to the same digest, checks what each
// image holds and how it is configured, writes it as an OCI layout and
// reads it back, then runs this machine's image: its files as the root of
// the process (chroot), as uid 65532, with a policy whose quiet hours are in
// Europe/Berlin (the image has no zone database of its own) against a
// loopback Argo CD, and reads /healthz, /readyz and /metrics.
func TestImage(t *testing.T) {
	certs := "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(certs); err != nil {
		t.Fatalf("the CA bundle the image trusts: %v", err)
	}
	opts := Options{Binaries: binaries(t), CACerts: certs, Version: "v0.0.0-test", Revision: revision, Created: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)}
	idx, err := Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Fatalf("two builds from the same inputs: %s and %s; the image is not reproducible", d1, d2)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != len(platforms) {
		t.Fatalf("%d images in the index, want %d", len(im.Manifests), len(platforms))
	}
	var host v1.Image
	for i, m := range im.Manifests {
		want := platforms[i]
		if m.Platform == nil || m.Platform.OS+"/"+m.Platform.Architecture != want {
			t.Fatalf("image %d is for %v, want %s", i, m.Platform, want)
		}
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != "65532:65532" || cf.OS+"/"+cf.Architecture != want || strings.Join(cf.Config.Entrypoint, " ") != "/usr/local/bin/driftfix" {
			t.Errorf("%s: user %q, platform %s/%s, entrypoint %v", want, cf.Config.User, cf.OS, cf.Architecture, cf.Config.Entrypoint)
		}
		for k, v := range map[string]string{"org.opencontainers.image.revision": revision, "org.opencontainers.image.licenses": "Apache-2.0", "org.opencontainers.image.version": "v0.0.0-test"} {
			if cf.Config.Labels[k] != v {
				t.Errorf("%s: label %s is %q, want %q", want, k, cf.Config.Labels[k], v)
			}
		}
		if want == "linux/"+runtime.GOARCH {
			host = img
		}
	}
	dir := filepath.Join(t.TempDir(), "oci")
	if _, err := layout.Write(dir, idx); err != nil {
		t.Fatal(err)
	}
	read, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := read.Digest(); d != d1 {
		t.Fatalf("the layout on disk has digest %s, the build %s", d, d1)
	}
	if host == nil {
		t.Skipf("no image for this machine's %s to run", runtime.GOARCH)
	}
	runImage(t, host)
}

// runImage unpacks img's layers into a directory and runs driftfix there
// as the image would run it.
func runImage(t *testing.T, img v1.Image) {
	if os.Geteuid() != 0 {
		if os.Getenv("DRIFTFIX_IMAGE_RUN") == "1" {
			t.Fatal("running the image needs root (chroot and a change of user); CI runs this test as root")
		}
		t.Skip("running the image needs root (chroot and a change of user); .ci/run runs it")
	}
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		if err := unpack(root, rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
	}
	for _, zone := range []string{"usr/share/zoneinfo", "usr/local/go"} {
		if _, err := os.Stat(filepath.Join(root, zone)); err == nil {
			t.Fatalf("the image has %s: it would not show that the binary carries its own zones", zone)
		}
	}
	argo := argocdtest.NewServer("image-test-token")
	defer argo.Close()
	if err := os.MkdirAll(filepath.Join(root, "etc/driftfix"), 0o755); err != nil {
		t.Fatal(err)
	}
	policy := fmt.Sprintf(`stateFile: /var/lib/driftfix/state.db
argocd:
  - name: main
    server: %s
    insecurePlaintext: true
    tokenFile: /etc/driftfix/argocd-token
policy:
  quietHours: {from: "22:00", to: "07:00", timezone: Europe/Berlin}
`, argo.URL)
	for name, body := range map[string]string{"driftfix.yaml": policy, "argocd-token": "image-test-token"} {
		if err := os.WriteFile(filepath.Join(root, "etc/driftfix", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	cmd := exec.Command("/usr/local/bin/driftfix", "run", "--config=/etc/driftfix/driftfix.yaml", "--listen="+addr)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/local/bin", "HOME=/var/lib/driftfix"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: UID, Gid: UID}}
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("run the image's driftfix: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("driftfix's log:\n%s", logs.String())
		}
	}()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		code, body := get("/readyz")
		if code == http.StatusOK && strings.Contains(body, "last cycle finished") {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("driftfix stopped (%v) before a cycle finished", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after 90s: %d %s", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d %s", code, body)
	}
	code, metrics := get("/metrics")
	if code != http.StatusOK || !strings.Contains(metrics, "driftfix_build_info{") || !strings.Contains(metrics, revision) {
		t.Errorf("/metrics: %d, no driftfix_build_info with revision %s:\n%.2000s", code, revision, metrics)
	}
	st, err := os.Stat(filepath.Join(root, "var/lib/driftfix/state.db"))
	if err != nil {
		t.Fatalf("no state written by the image's user: %v", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || sys.Uid != UID {
		t.Errorf("state.db is owned by %v, want uid %d", st.Sys(), UID)
	}
}

// unpack writes a layer's entries under root with their modes and owners.
func unpack(root string, r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, os.FileMode(h.Mode)); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode))
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected entry %s of type %c", h.Name, h.Typeflag)
		}
		if err := os.Chmod(p, os.FileMode(h.Mode)); err != nil {
			return err
		}
		if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
			return err
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
