package argocd

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCert writes a self-signed client certificate and its key as PEM files.
func testCert(t *testing.T, dir string) (certFile, keyFile string, cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "driftfix-test"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	key = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
	certFile, keyFile = filepath.Join(dir, "c.crt"), filepath.Join(dir, "c.key")
	if err := os.WriteFile(certFile, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert, key
}

// TestCLIConfigWrittenByArgoCD reads a config the real argocd CLI wrote:
// `argocd login --core` writes one without reaching a server, with every
// connection setting it was given (the stack's argocd binary, or
// $DRIFTFIX_ARGOCD_BIN; skipped without one).
func TestCLIConfigWrittenByArgoCD(t *testing.T) {
	bin := os.Getenv("DRIFTFIX_ARGOCD_BIN")
	if bin == "" {
		bin = "../../e2e/stack/bin/argocd"
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("DRIFTFIX_REQUIRE_ARGOCD_BIN") == "1" { // CI, after the stack build
			t.Fatalf("no argocd binary (%v), and DRIFTFIX_REQUIRE_ARGOCD_BIN=1 requires it", err)
		}
		t.Skipf("no argocd binary (%v): build the e2e stack (e2e/stack/build.sh) or set DRIFTFIX_ARGOCD_BIN", err)
	}
	dir := t.TempDir()
	certFile, keyFile, cert, key := testCert(t, dir)
	cfgFile := filepath.Join(dir, "argocd", "config")
	cmd := exec.Command(bin, "login", "--core", "--config", cfgFile, "--name", "core-ctx", "--plaintext", "--grpc-web",
		"--grpc-web-root-path", "/argocd/", "--insecure", "--client-crt", certFile, "--client-crt-key", keyFile)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("argocd login --core: %v\n%s", err, out)
	}
	cfg, err := ReadCLIConfig(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cfg.Context("", cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "core-ctx" || c.Server != "kubernetes" || !c.Core || !c.PlainText || !c.Insecure || !c.GRPCWeb || c.RootPath != "/argocd/" || c.Token != "" {
		t.Errorf("read %+v from:\n%s", c, mustRead(t, cfgFile))
	}
	if !bytes.Equal(c.ClientCert, cert) || !bytes.Equal(c.ClientKey, key) {
		t.Error("the client certificate argocd stored was not read")
	}
	if got := c.URL(); got != "http://kubernetes/argocd" {
		t.Errorf("URL %q", got)
	}
}

func mustRead(t *testing.T, f string) string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A config as `argocd login` writes it (localconfig.WriteLocalConfig: the
// keys of its LocalConfig, Server and User types) after two logins.
const twoLogins = `contexts:
- name: argocd.example.com
  server: argocd.example.com
  user: argocd.example.com
- name: staging
  server: 127.0.0.1:8080
  user: staging
current-context: staging
prompts-enabled: false
servers:
- grpc-web-root-path: ""
  server: argocd.example.com
- grpc-web-root-path: ""
  plain-text: true
  server: 127.0.0.1:8080
users:
- auth-token: tok-prod
  name: argocd.example.com
- auth-token: tok-staging
  name: staging
  refresh-token: r
`

func writeConfig(t *testing.T, text string, mode os.FileMode) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(f, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f, mode); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCLIConfigContexts(t *testing.T) {
	dir := t.TempDir()
	_, _, cert, key := testCert(t, dir)
	inline := strings.Replace(twoLogins, "  plain-text: true\n", "  plain-text: true\n  client-certificate-data: "+base64.StdEncoding.EncodeToString(cert)+"\n  client-certificate-key-data: "+base64.StdEncoding.EncodeToString(key)+"\n", 1)
	for _, tt := range []struct {
		name, text, context string
		wantURL, wantToken  string
		wantCert            bool
		wantErr             string
	}{
		{name: "current context", text: twoLogins, wantURL: "http://127.0.0.1:8080", wantToken: "tok-staging"},
		{name: "named context", text: twoLogins, context: "argocd.example.com", wantURL: "https://argocd.example.com", wantToken: "tok-prod"},
		{name: "inline client certificate", text: inline, wantURL: "http://127.0.0.1:8080", wantToken: "tok-staging", wantCert: true},
		{name: "unknown context", text: twoLogins, context: "prod", wantErr: `has no context "prod" (it has: argocd.example.com, staging)`},
		{name: "no current context", text: strings.Replace(twoLogins, "current-context: staging\n", "", 1), wantErr: "has no current-context (run argocd login"},
		{name: "context naming no server", text: strings.Replace(twoLogins, "  server: 127.0.0.1:8080\n  user", "  server: 10.0.0.1:443\n  user", 1), wantErr: `context "staging" names server "10.0.0.1:443", which is not among its servers`},
		{name: "certificate without key", text: strings.Replace(twoLogins, "  plain-text: true\n", "  plain-text: true\n  client-certificate: /x.crt\n", 1), wantErr: "client-certificate and client-certificate-key must be given together"},
		{name: "bad base64", text: strings.Replace(twoLogins, "  plain-text: true\n", "  plain-text: true\n  client-certificate-data: '%%'\n  client-certificate-key-data: '%%'\n", 1), wantErr: "client-certificate-data: illegal base64"},
		{name: "wrong type", text: strings.Replace(twoLogins, "plain-text: true", "plain-text: [yes]", 1), wantErr: "cannot unmarshal array"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := writeConfig(t, tt.text, 0o600)
			var c *CLIContext
			cfg, err := ReadCLIConfig(f)
			if err == nil {
				c, err = cfg.Context(tt.context, f)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.URL() != tt.wantURL || c.Token != tt.wantToken || (c.ClientCert != nil) != tt.wantCert {
				t.Errorf("got %s, token %q, cert %v", c.URL(), c.Token, c.ClientCert != nil)
			}
		})
	}
}

// TestCLIConfigRefusesOthersReadable: like argocd, a config others can read
// is refused with the chmod to type; a missing one is ErrNoCLIConfig.
func TestCLIConfigRefusesOthersReadable(t *testing.T) {
	f := writeConfig(t, twoLogins, 0o644)
	if _, err := ReadCLIConfig(f); err == nil || !strings.Contains(err.Error(), "chmod 600 "+f) {
		t.Errorf("mode 0644: %v", err)
	}
	if _, err := ReadCLIConfig(writeConfig(t, twoLogins, 0o400)); err != nil {
		t.Errorf("mode 0400: %v", err)
	}
	if _, err := ReadCLIConfig(filepath.Join(t.TempDir(), "config")); err == nil || !strings.Contains(err.Error(), ErrNoCLIConfig.Error()) {
		t.Errorf("missing file: %v", err)
	}
}

// TestCLIConfigPath finds the file where the argocd CLI does.
func TestCLIConfigPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("ARGOCD_CONFIG_DIR", "")
	for _, tt := range []struct {
		name  string
		setup func()
		want  string
	}{
		{"default", func() {}, filepath.Join(home, ".config", "argocd", "config")},
		{"XDG_CONFIG_HOME", func() { t.Setenv("XDG_CONFIG_HOME", "/xdg") }, "/xdg/argocd/config"},
		{"legacy ~/.argocd wins over XDG", func() { os.Mkdir(filepath.Join(home, ".argocd"), 0o700) }, filepath.Join(home, ".argocd", "config")},
		{"ARGOCD_CONFIG_DIR wins", func() { t.Setenv("ARGOCD_CONFIG_DIR", "/cfg") }, "/cfg/config"},
	} {
		tt.setup()
		if got, err := CLIConfigPath(); err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestCLIConfigTokenFor(t *testing.T) {
	cfg, err := ParseCLIConfig([]byte(twoLogins), "config")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.TokenFor("argocd.example.com"); got != "tok-prod" {
		t.Errorf("token for argocd.example.com: %q", got)
	}
	if got := cfg.TokenFor("other:443"); got != "" {
		t.Errorf("token for a server never logged in to: %q", got)
	}
}

// FuzzCLIConfig: any text is parsed or refused, never a panic, and every
// context of a parsed config resolves or is refused with the file named.
func FuzzCLIConfig(f *testing.F) {
	f.Add([]byte(twoLogins))
	f.Add([]byte("current-context: x\ncontexts: [{name: x, server: s, user: u}]\nservers: [{server: s, core: true}]\n"))
	f.Add([]byte("servers: [{server: s, client-certificate-data: QQ==, client-certificate-key-data: QQ==}]\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := ParseCLIConfig(raw, "fuzz-config")
		if err != nil {
			return
		}
		names := []string{""}
		for _, c := range cfg.Contexts {
			names = append(names, c.Name)
		}
		for _, n := range names {
			c, err := cfg.Context(n, "fuzz-config")
			if err != nil {
				if !strings.Contains(err.Error(), "fuzz-config") {
					t.Fatalf("error without the file: %v", err)
				}
				continue
			}
			_ = c.URL()
		}
	})
}
