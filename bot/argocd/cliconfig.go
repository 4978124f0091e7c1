package argocd

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"sigs.k8s.io/yaml"
)

// CLIConfig is the argocd CLI's local config file, the one `argocd login`
// writes (~/.config/argocd/config): contexts naming a server and a user.
// Only what reaching argocd-server needs is read.
type CLIConfig struct {
	CurrentContext string          `json:"current-context"`
	Contexts       []cliContextRef `json:"contexts"`
	Servers        []cliServer     `json:"servers"`
	Users          []cliUser       `json:"users"`
}

type cliContextRef struct {
	Name   string `json:"name"`
	Server string `json:"server"`
	User   string `json:"user"`
}

type cliServer struct {
	Server                   string `json:"server"`
	Insecure                 bool   `json:"insecure"`
	GRPCWeb                  bool   `json:"grpc-web"`
	GRPCWebRootPath          string `json:"grpc-web-root-path"`
	ClientCertificate        string `json:"client-certificate"`
	ClientCertificateKey     string `json:"client-certificate-key"`
	ClientCertificateData    string `json:"client-certificate-data"`
	ClientCertificateKeyData string `json:"client-certificate-key-data"`
	PlainText                bool   `json:"plain-text"`
	Core                     bool   `json:"core"`
}

type cliUser struct {
	Name      string `json:"name"`
	AuthToken string `json:"auth-token"`
}

// CLIContext is one context of the argocd CLI's config, resolved: where
// argocd-server is, how to reach it and the token `argocd login` stored.
type CLIContext struct {
	// Name is the context's name; File the config file it was read from.
	Name, File string
	// Server is the address as argocd stores it: host:port, no scheme.
	Server string
	// PlainText: the server speaks HTTP without TLS (argocd --plaintext).
	PlainText bool
	// Insecure: TLS without verifying the certificate (argocd --insecure).
	Insecure bool
	// GRPCWeb and RootPath are argocd --grpc-web and --grpc-web-root-path;
	// the root path is also where the REST API is served.
	GRPCWeb  bool
	RootPath string
	// ClientCert and ClientKey are the PEM client certificate and key
	// (argocd --client-crt and --client-crt-key), nil when none.
	ClientCert, ClientKey []byte
	// Token is the user's auth-token, "" when none was stored.
	Token string
	// Core: the context reads Kubernetes directly (argocd login --core),
	// without argocd-server.
	Core bool
}

// URL is the context's server as a URL: http:// for a plain-text server,
// else https://, with the root path.
func (c *CLIContext) URL() string {
	scheme := "https://"
	if c.PlainText {
		scheme = "http://"
	}
	u := scheme + strings.TrimSuffix(c.Server, "/")
	if p := strings.Trim(c.RootPath, "/"); p != "" {
		u += "/" + p
	}
	return u
}

// CLIConfigPath is the file the argocd CLI reads when --config is not
// given, found as argocd finds it: $ARGOCD_CONFIG_DIR/config, else
// ~/.argocd/config when the legacy directory exists, else
// $XDG_CONFIG_HOME/argocd/config, else ~/.config/argocd/config.
func CLIConfigPath() (string, error) {
	if dir := os.Getenv("ARGOCD_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "config"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the argocd CLI's config: %w", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".argocd")); err == nil {
		return filepath.Join(home, ".argocd", "config"), nil
	}
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		return filepath.Join(xdg, "argocd", "config"), nil
	}
	return filepath.Join(home, ".config", "argocd", "config"), nil
}

// maxCLIConfig bounds the config file read.
const maxCLIConfig = 1 << 20

// ErrNoCLIConfig is returned by ReadCLIConfig for a file that does not exist.
var ErrNoCLIConfig = errors.New("no argocd CLI config")

// ReadCLIConfig reads the argocd CLI's config file. As the argocd CLI, it
// refuses a file others can read (mode other than 0600 or 0400: it holds
// tokens). Keys it does not use are ignored, so a newer argocd's file still
// reads; a key it uses with a value of the wrong type is an error.
func ReadCLIConfig(path string) (*CLIConfig, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNoCLIConfig, path)
	}
	if err != nil {
		return nil, fmt.Errorf("read the argocd CLI's config: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read the argocd CLI's config %s: not a regular file", path)
	}
	if perm := st.Mode().Perm(); runtime.GOOS != "windows" && perm != 0o600 && perm != 0o400 {
		return nil, fmt.Errorf("the argocd CLI's config %s has mode %s: it holds tokens, so argocd and driftfix read it only with mode 0600 or 0400 (chmod 600 %s)", path, perm, path)
	}
	if st.Size() > maxCLIConfig {
		return nil, fmt.Errorf("the argocd CLI's config %s is larger than %d bytes", path, maxCLIConfig)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the argocd CLI's config: %w", err)
	}
	return ParseCLIConfig(raw, path)
}

// ParseCLIConfig parses the text of the argocd CLI's config; file names it
// in errors.
func ParseCLIConfig(raw []byte, file string) (*CLIConfig, error) {
	var c CLIConfig
	if err := yaml.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("the argocd CLI's config %s: %w", file, err)
	}
	return &c, nil
}

// Context resolves the context name ("" for the current context) to its
// server and user. file names the config in errors.
func (c *CLIConfig) Context(name, file string) (*CLIContext, error) {
	if name == "" {
		if c.CurrentContext == "" {
			return nil, fmt.Errorf("the argocd CLI's config %s has no current-context (run argocd login, or argocd context NAME)", file)
		}
		name = c.CurrentContext
	}
	var ref *cliContextRef
	var names []string
	for i := range c.Contexts {
		names = append(names, c.Contexts[i].Name)
		if c.Contexts[i].Name == name && ref == nil {
			ref = &c.Contexts[i]
		}
	}
	if ref == nil {
		return nil, fmt.Errorf("the argocd CLI's config %s has no context %q (it has: %s)", file, name, strings.Join(names, ", "))
	}
	var srv *cliServer
	for i := range c.Servers {
		if c.Servers[i].Server == ref.Server {
			srv = &c.Servers[i]
			break
		}
	}
	if srv == nil || srv.Server == "" {
		return nil, fmt.Errorf("the argocd CLI's config %s: context %q names server %q, which is not among its servers", file, name, ref.Server)
	}
	out := &CLIContext{Name: name, File: file, Server: srv.Server, PlainText: srv.PlainText, Insecure: srv.Insecure,
		GRPCWeb: srv.GRPCWeb, RootPath: srv.GRPCWebRootPath, Core: srv.Core}
	for _, u := range c.Users {
		if u.Name == ref.User {
			out.Token = u.AuthToken
			break
		}
	}
	cert, key, err := srv.clientCert()
	if err != nil {
		return nil, fmt.Errorf("the argocd CLI's config %s, server %s: %w", file, srv.Server, err)
	}
	out.ClientCert, out.ClientKey = cert, key
	return out, nil
}

// ContextFor resolves the first context on server (host:port, as argocd
// stores it), for the token argocd would use with --server; nil when no
// context names that server.
func (c *CLIConfig) ContextFor(server, file string) (*CLIContext, error) {
	for _, ref := range c.Contexts {
		if ref.Server == server {
			return c.Context(ref.Name, file)
		}
	}
	return nil, nil
}

// TokenFor is the auth-token stored for the first context on server, ""
// when none.
func (c *CLIConfig) TokenFor(server string) string {
	ctx, err := c.ContextFor(server, "")
	if err != nil || ctx == nil {
		return ""
	}
	return ctx.Token
}

// clientCert reads the client certificate as argocd does: files before the
// inline base64 data; each needs its key.
func (s *cliServer) clientCert() (cert, key []byte, err error) {
	switch {
	case s.ClientCertificate != "" && s.ClientCertificateKey != "":
		if cert, err = os.ReadFile(s.ClientCertificate); err != nil {
			return nil, nil, fmt.Errorf("client-certificate: %w", err)
		}
		if key, err = os.ReadFile(s.ClientCertificateKey); err != nil {
			return nil, nil, fmt.Errorf("client-certificate-key: %w", err)
		}
		return cert, key, nil
	case s.ClientCertificate != "" || s.ClientCertificateKey != "":
		return nil, nil, errors.New("client-certificate and client-certificate-key must be given together")
	case s.ClientCertificateData != "" && s.ClientCertificateKeyData != "":
		if cert, err = base64.StdEncoding.DecodeString(s.ClientCertificateData); err != nil {
			return nil, nil, fmt.Errorf("client-certificate-data: %w", err)
		}
		if key, err = base64.StdEncoding.DecodeString(s.ClientCertificateKeyData); err != nil {
			return nil, nil, fmt.Errorf("client-certificate-key-data: %w", err)
		}
		return cert, key, nil
	case s.ClientCertificateData != "" || s.ClientCertificateKeyData != "":
		return nil, nil, errors.New("client-certificate-data and client-certificate-key-data must be given together")
	}
	return nil, nil, nil
}
