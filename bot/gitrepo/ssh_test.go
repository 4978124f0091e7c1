package gitrepo

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sshGit serves git-upload-pack (the git installed) over SSH on
// 127.0.0.1 for the client key in keyFile only, with a fresh host key; it
// returns the address and the host key as a known_hosts key field.
func sshGit(t *testing.T, keyFile string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("git-upload-pack"); err != nil {
		t.Skip("git-upload-pack is not installed")
	}
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	client, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	host, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if bytes.Equal(k.Marshal(), client.PublicKey().Marshal()) {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	cfg.AddHostKey(host)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveSSH(conn, cfg)
		}
	}()
	return ln.Addr().String(), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(host.PublicKey())))
}

func serveSSH(conn net.Conn, cfg *ssh.ServerConfig) {
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		conn.Close()
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for req := range creqs {
				if req.Type != "exec" || len(req.Payload) < 4 {
					req.Reply(false, nil)
					continue
				}
				command := string(req.Payload[4:])
				svc, arg, _ := strings.Cut(command, " ")
				if svc != "git-upload-pack" {
					req.Reply(false, nil)
					return
				}
				req.Reply(true, nil)
				cmd := exec.Command("git-upload-pack", strings.Trim(arg, "'"))
				in, _ := cmd.StdinPipe()
				cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
				status := uint32(0)
				if err := cmd.Start(); err != nil {
					status = 127
				} else {
					go func() { io.Copy(in, ch); in.Close() }()
					if cmd.Wait() != nil {
						status = 1
					}
				}
				ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, status))
				return
			}
		}()
	}
}

// TestSSHRead reads a repository over SSH on loopback with a key and the
// host's key in known_hosts, and refuses a host whose key is not the one
// known_hosts has, saying so.
func TestSSHRead(t *testing.T) {
	fileURL, _ := repo(t)
	bare := strings.TrimPrefix(fileURL, "file://")
	dir := t.TempDir()
	key, _ := sshKey(t, dir, "id")
	addr, hostKey := sshGit(t, key)
	h, port, _ := net.SplitHostPort(addr)
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(fmt.Sprintf("[%s]:%s %s\n", h, port, hostKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	access, err := Credential{SSHKeyFile: key, KnownHostsFile: known}.Open()
	if err != nil {
		t.Fatal(err)
	}
	url := "ssh://git@" + addr + bare
	files, err := Reader{Cache: NewCache(4, 1<<20), Access: access}.Files(context.Background(), url, "main")
	if err != nil || files["apps/web/deployment.yaml"] != "replicas: 3\n" {
		t.Fatalf("read over ssh: %v %v", keys(files), err)
	}

	_, otherKey := sshKey(t, dir, "other")
	wrong := filepath.Join(dir, "wrong_known_hosts")
	if err := os.WriteFile(wrong, []byte(fmt.Sprintf("[%s]:%s %s\n", h, port, otherKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	refused, err := Credential{SSHKeyFile: key, KnownHostsFile: wrong}.Open()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Reader{Cache: NewCache(4, 1<<20), Access: refused}.Files(context.Background(), url, "main")
	if err == nil || !strings.Contains(err.Error(), addr+bare) || !strings.Contains(err.Error(), "is not the one its known_hosts file lists") || !strings.Contains(err.Error(), wrong) {
		t.Fatalf("a host key other than known_hosts lists: %v", err)
	}

	// A host known_hosts does not list at all.
	elsewhere := filepath.Join(dir, "elsewhere_known_hosts")
	if err := os.WriteFile(elsewhere, []byte("git.example.com "+otherKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unknown, err := Credential{SSHKeyFile: key, KnownHostsFile: elsewhere}.Open()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Reader{Cache: NewCache(4, 1<<20), Access: unknown}.Files(context.Background(), url, "main")
	if err == nil || !strings.Contains(err.Error(), "not in the known_hosts file") {
		t.Fatalf("a host not in known_hosts: %v", err)
	}

	// A key the server does not accept.
	otherClient, _ := sshKey(t, dir, "stranger")
	stranger, err := Credential{SSHKeyFile: otherClient, KnownHostsFile: known}.Open()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Reader{Cache: NewCache(4, 1<<20), Access: stranger}.Files(context.Background(), url, "main")
	if err == nil || !strings.Contains(err.Error(), "the host refused the SSH key "+otherClient) {
		t.Fatalf("a key the host refuses: %v", err)
	}
}
