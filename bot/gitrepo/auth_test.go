package gitrepo

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		prefix, url string
		want        bool
	}{
		{"https://git.example.com/team/", "https://git.example.com/team/app.git", true},
		{"https://git.example.com/team", "https://git.example.com/team/app.git", true},
		{"https://git.example.com/team", "https://git.example.com/team", true},
		{"https://git.example.com/team", "https://git.example.com/team.git", true},
		{"https://git.example.com", "https://git.example.com/any/app", true},
		{"https://GIT.example.com/team", "https://git.example.com/team/app", true},
		{"https://git.example.com/team", "https://git.example.com/teamwork/app", false},
		{"https://git.example.com", "https://git.example.com.evil.test/team/app", false},
		{"https://git.example.com", "https://git.example.com:8443/team/app", false},
		{"https://git.example.com/team", "http://git.example.com/team/app", false},
		{"https://git.example.com/team", "ssh://git@git.example.com/team/app", false},
		{"git@git.example.com:team/", "git@git.example.com:team/app.git", true},
		{"ssh://git@git.example.com/team", "git@git.example.com:team/app.git", true},
		{"git@git.example.com:team", "ssh://git@git.example.com/team/app.git", true},
		{"ssh://deploy@git.example.com/team", "git@git.example.com:team/app.git", false},
		{"ssh://git.example.com/team", "git@git.example.com:team/app.git", true},
		{"not a url", "https://git.example.com/team/app", false},
	} {
		if got := Match(tc.prefix, tc.url); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.prefix, tc.url, got, tc.want)
		}
	}
}

// sshKey writes an unencrypted ed25519 private key and returns its file and
// the public key as a known_hosts key field ("ssh-ed25519 AAAA...").
func sshKey(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	wire := func(b []byte) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...) }
	blob := append(wire([]byte("ssh-ed25519")), wire(pub)...)
	return file, "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob)
}

func TestCredentialOpen(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key, hostKey := sshKey(t, dir, "id_ed25519")
	known := write("known_hosts", "# the Git host\ngit.example.com "+hostKey+"\n")
	empty := write("empty_known_hosts", "# nothing yet\n\n")
	garbled := write("garbled_known_hosts", "git.example.com ssh-ed25519 not-base64!!\n")
	token := write("token", "s3cr3t-token\n")
	emptyToken := write("empty-token", "\n")
	notPEM := write("ca.pem", "not a certificate\n")
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		c    Credential
		err  string // "" for a credential that opens
	}{
		{"token", Credential{TokenFile: token}, ""},
		{"ssh", Credential{SSHKeyFile: key, KnownHostsFile: known}, ""},
		{"nothing", Credential{}, "give a token file or an SSH key file"},
		{"CA only", Credential{CAFile: write("ca-ok.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")}, ""},
		{"both", Credential{TokenFile: token, SSHKeyFile: key, KnownHostsFile: known}, "not both"},
		{"missing token file", Credential{TokenFile: missing}, "read the token file"},
		{"empty token file", Credential{TokenFile: emptyToken}, "empty"},
		{"CA not PEM", Credential{TokenFile: token, CAFile: notPEM}, "holds no PEM certificate"},
		{"no known_hosts", Credential{SSHKeyFile: key}, "needs a known_hosts file"},
		{"missing known_hosts", Credential{SSHKeyFile: key, KnownHostsFile: missing}, "read the known_hosts file"},
		{"empty known_hosts", Credential{SSHKeyFile: key, KnownHostsFile: empty}, "has no host keys"},
		{"garbled known_hosts", Credential{SSHKeyFile: key, KnownHostsFile: garbled}, "garbled_known_hosts"},
		{"missing key", Credential{SSHKeyFile: missing, KnownHostsFile: known}, "read the SSH key"},
		{"not a key", Credential{SSHKeyFile: token, KnownHostsFile: known}, "cannot be used"},
	} {
		f, err := tc.c.Open()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		case err != nil && strings.Contains(err.Error(), "s3cr3t-token"):
			t.Errorf("%s: the token is in the error: %v", tc.name, err)
		case tc.err == "" && f == nil:
			t.Errorf("%s: no access", tc.name)
		}
	}
}

func TestCredentialAccess(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("first-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Credential{TokenFile: tokenFile, Username: "oauth2"}.Open()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, _ := f(ctx, "https://git.example.com/team/app.git")
	if b, ok := a.Auth.(*githttp.BasicAuth); !ok || b.Username != "oauth2" || b.Password != "first-token" {
		t.Fatalf("token access: %#v", a.Auth)
	}
	if strings.Contains(a.Via, "first-token") || !strings.Contains(a.Via, tokenFile) {
		t.Errorf("Via %q must name the file, never the token", a.Via)
	}
	if err := os.WriteFile(tokenFile, []byte("rotated-token-longer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a, _ := f(ctx, "https://git.example.com/team/app.git"); a.Auth.(*githttp.BasicAuth).Password != "rotated-token-longer" {
		t.Error("a rotated token file is not read again")
	}

	key, hostKey := sshKey(t, dir, "id")
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte("[git.example.com]:2222 "+hostKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Credential{SSHKeyFile: key, KnownHostsFile: known}.Open()
	if err != nil {
		t.Fatal(err)
	}
	a, err = s(ctx, "ssh://deploy@git.example.com:2222/team/app.git")
	pk, ok := a.Auth.(*gitssh.PublicKeys)
	if err != nil || !ok || pk.User != "deploy" || pk.HostKeyCallback == nil {
		t.Fatalf("ssh access: %#v %v", a.Auth, err)
	}
	if len(pk.HostKeyAlgorithms) != 1 || pk.HostKeyAlgorithms[0] != "ssh-ed25519" {
		t.Errorf("host key algorithms %v: want the one known_hosts has for the host", pk.HostKeyAlgorithms)
	}
	if _, err := s(ctx, "https://git.example.com/team/app.git"); err == nil {
		t.Error("an SSH key was given for an https:// repository")
	}
}

// TestSSHNeedsAKey: an ssh repository is never read without an SSH key
// and known_hosts configured for it (no agent, no ~/.ssh), and the message
// says so; nothing is dialled.
func TestSSHNeedsAKey(t *testing.T) {
	for _, access := range []AccessFunc{nil, func(context.Context, string) (Access, error) {
		return Access{Auth: &githttp.BasicAuth{Username: "x", Password: "tok-never-shown"}, Via: "a token"}, nil
	}} {
		_, err := Reader{Cache: NewCache(4, 1<<20), Access: access}.Files(context.Background(), "git@git.example.com:team/app.git", "main")
		if err == nil || !strings.Contains(err.Error(), "only with an SSH key") || !strings.Contains(err.Error(), "git@git.example.com:team/app.git") || strings.Contains(err.Error(), "tok-never-shown") {
			t.Errorf("ssh without a key: %v", err)
		}
	}
}
