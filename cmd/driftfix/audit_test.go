package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/audit"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/plan"
)

// auditBatch is what the API server's webhook backend posts: one write of
// Deployment shop/web by a person under Argo CD's manager name.
func auditBatch(at time.Time) string {
	ts := at.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	return `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[{"level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/shop/deployments/web?fieldManager=argocd-controller","verb":"patch","user":{"username":"oidc:alice","groups":["system:authenticated"]},"userAgent":"kubectl/v1.37.0","objectRef":{"resource":"deployments","namespace":"shop","name":"web","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"` + ts + `","stageTimestamp":"` + ts + `"}]}`
}

// TestWithAudit: each snapshot's cluster context gains the writes of its
// objects, after what the cluster read gives, which is left as it was.
func TestWithAudit(t *testing.T) {
	st := audit.NewStore(audit.Options{})
	evs, err := audit.Decode([]byte(auditBatch(time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	st.Add(evs)
	cm := drift.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"}}
	read := make([]drift.Object, 1, 4) // spare capacity the wrapper must not write into
	read[0] = cm
	ins := withAudit([]plan.Instance{{Name: "main", ReadCluster: func(context.Context) (func(*drift.Snapshot) []drift.Object, error) {
		return func(*drift.Snapshot) []drift.Object { return read }, nil
	}}}, st)
	cluster, err := ins[0].ReadCluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	web := &drift.Snapshot{Resources: []drift.Resource{{Live: drift.Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"}}}}}
	got := cluster(web)
	if len(got) != 2 || drift.Str(got[0], "kind") != "ConfigMap" || drift.Str(got[1], "kind") != "EventList" || len(drift.List(got[1], "items")) != 1 {
		t.Fatalf("cluster context %v", got)
	}
	if read[:2][1] != nil {
		t.Fatal("the wrapper wrote into the cluster read's slice")
	}
	other := &drift.Snapshot{Resources: []drift.Resource{{Live: drift.Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "api", "namespace": "shop"}}}}}
	if got := cluster(other); len(got) != 1 {
		t.Fatalf("an object nobody wrote got audit events: %v", got)
	}
	if withAudit(ins, nil)[0].ReadCluster == nil {
		t.Fatal("without a store the instances must stay as they are")
	}
}

// TestAuditOfRun: run with --audit-token-file takes the API server's
// batches at POST /audit on --webhook-listen with the token only, follows
// --audit-log-file, and never logs the token.
func TestAuditOfRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts driftfix as a process")
	}
	srv, tokenFile := liveServer(t, time.Now())
	dir := t.TempDir()
	cfg := writePolicy(t, dir, "dryRun: true\naudit: {retention: 30m, maxRecords: 1000}\n", argoEntry{"test", srv.URL, tokenFile, ""})
	auditToken := filepath.Join(dir, "audit-token")
	if err := os.WriteFile(auditToken, []byte("audit-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "audit.log")
	addr, hook := freeAddr(t), freeAddr(t)
	p := startDriftfix(t, "run", "--config", cfg, "--listen", addr, "--webhook-listen", hook, "--audit-token-file", auditToken, "--audit-log-file", logFile)
	client := &http.Client{Timeout: 5 * time.Second}
	post := func(token string) (int, string) {
		req, _ := http.NewRequest("POST", "http://"+hook+"/audit", strings.NewReader(auditBatch(time.Now())))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor(t, "the audit receiver", 20*time.Second, p, func() bool { code, _ := post("audit-s3cret"); return code != 0 })
	if code, body := post("audit-s3cret"); code != http.StatusOK {
		t.Errorf("a batch with the token: %d %q", code, body)
	}
	if code, body := post("guessed"); code != http.StatusUnauthorized {
		t.Errorf("a batch with another token: %d %q", code, body)
	}
	if code, body := post(""); code != http.StatusUnauthorized {
		t.Errorf("a batch without a token: %d %q", code, body)
	}
	if err := os.WriteFile(logFile, []byte("not an event\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the audit log's bad line", 20*time.Second, p, func() bool { return strings.Contains(p.stderr.String(), "audit log line skipped") })
	if err := p.stop(t); err != nil {
		t.Fatalf("exit: %v; log:\n%s", err, p.stderr.String())
	}
	log := p.stderr.String()
	if !strings.Contains(log, "audit events are read") || !strings.Contains(log, `"paths":"/audit"`) {
		t.Errorf("the log does not say audit events are read at /audit:\n%s", log)
	}
	if strings.Contains(log, "audit-s3cret") {
		t.Error("the audit token appeared in the log")
	}
}

// writePKI writes a CA, a serving certificate for 127.0.0.1 and a client
// certificate named cn into dir, as PEM files: ca.crt, server.crt/key,
// client.crt/key.
func writePKI(t *testing.T, dir, cn string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "audit-test-ca"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.crt", "CERTIFICATE", caDER)
	for i, c := range []struct {
		name, cn string
		usage    x509.ExtKeyUsage
	}{{"server", "driftfix", x509.ExtKeyUsageServerAuth}, {"client", cn, x509.ExtKeyUsageClientAuth}} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: c.cn}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{c.usage}, KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		write(c.name+".crt", "CERTIFICATE", der)
		write(c.name+".key", "EC PRIVATE KEY", kd)
	}
}

// TestAuditTLSOfRun: with --audit-tls-cert-file the receiver has its own
// TLS listener (the API server sends credentials only over HTTPS) and
// takes the API server's client certificate by its name; a request
// without one is refused, and nothing is served on --webhook-listen.
func TestAuditTLSOfRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts driftfix as a process")
	}
	srv, tokenFile := liveServer(t, time.Now())
	dir := t.TempDir()
	writePKI(t, dir, "kube-apiserver")
	cfg := writePolicy(t, dir, "dryRun: true\n", argoEntry{"test", srv.URL, tokenFile, ""})
	addr, auditAddr := freeAddr(t), freeAddr(t)
	p := startDriftfix(t, "run", "--config", cfg, "--listen", addr, "--audit-listen", auditAddr,
		"--audit-tls-cert-file", filepath.Join(dir, "server.crt"), "--audit-tls-key-file", filepath.Join(dir, "server.key"),
		"--audit-client-ca-file", filepath.Join(dir, "ca.crt"))
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	post := func(withCert bool) int {
		cfg := &tls.Config{RootCAs: pool}
		if withCert {
			cfg.Certificates = []tls.Certificate{client}
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
		resp, err := c.Post("https://"+auditAddr+"/audit", "application/json", strings.NewReader(auditBatch(time.Now())))
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor(t, "the TLS audit receiver", 20*time.Second, p, func() bool { return post(true) != 0 })
	if code := post(true); code != http.StatusOK {
		t.Errorf("the API server's client certificate: %d", code)
	}
	if code := post(false); code != http.StatusUnauthorized {
		t.Errorf("no client certificate: %d", code)
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("exit: %v; log:\n%s", err, p.stderr.String())
	}
	if log := p.stderr.String(); !strings.Contains(log, "audit receiver listening over TLS") {
		t.Errorf("the log does not say where the audit receiver listens:\n%s", log)
	}
}

// TestAuditFlagsRefused: a TLS receiver that would take events from
// anyone, or client certificates without TLS, is refused at start.
func TestAuditFlagsRefused(t *testing.T) {
	for _, tt := range []struct {
		a    auditFlags
		want string
	}{
		{auditFlags{certFile: "c", keyFile: "k", store: audit.NewStore(audit.Options{})}, "takes no unauthenticated events"},
		{auditFlags{clientCA: "ca", tokenFile: "", logFile: "x", store: audit.NewStore(audit.Options{})}, "needs --audit-tls-cert-file"},
	} {
		if _, err := tt.a.receiver(nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.a, err, tt.want)
		}
	}
}
