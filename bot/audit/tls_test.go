package audit

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// testCA issues certificates for the TLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert, key, pool}
}

func (ca *testCA) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestHandlerClientCert: over TLS, a client certificate the server
// verified and the handler accepts by name takes a batch without a token;
// another name, or a certificate of another CA, does not.
func TestHandlerClientCert(t *testing.T) {
	ca, other := newCA(t), newCA(t)
	store := NewStore(Options{Now: func() time.Time { return t0.Add(time.Minute) }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: &Handler{Token: func() string { return "" }, Store: store,
		ClientCert: func(cn string) bool { return cn == "kube-apiserver" }}}}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.issue(t, "driftfix", x509.ExtKeyUsageServerAuth)}, ClientCAs: ca.pool, ClientAuth: tls.VerifyClientCertIfGiven}
	srv.StartTLS()
	defer srv.Close()
	post := func(cert *tls.Certificate) int {
		cfg := &tls.Config{RootCAs: ca.pool}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
		resp, err := c.Post(srv.URL+"/audit", "application/json", bytes.NewReader(readBatch(t)))
		if err != nil {
			return 0 // the TLS handshake refused it
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	apiserver, stranger, forged := ca.issue(t, "kube-apiserver", x509.ExtKeyUsageClientAuth), ca.issue(t, "alice", x509.ExtKeyUsageClientAuth), other.issue(t, "kube-apiserver", x509.ExtKeyUsageClientAuth)
	if code := post(nil); code != http.StatusUnauthorized {
		t.Errorf("no certificate: %d", code)
	}
	if code := post(&stranger); code != http.StatusUnauthorized {
		t.Errorf("a certificate of another name: %d", code)
	}
	if code := post(&forged); code == http.StatusOK {
		t.Errorf("a certificate of another CA was accepted")
	}
	if store.Stats().Kept != 0 {
		t.Fatal("a refused batch was kept")
	}
	if code := post(&apiserver); code != http.StatusOK {
		t.Errorf("the API server's certificate: %d", code)
	}
	if store.Stats().Kept != 3 {
		t.Errorf("kept %d, want 3", store.Stats().Kept)
	}
}
