package audit

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func listen(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestHandler: the API server's batches are taken with the token only,
// bounded in size, and each refusal says why.
func TestHandler(t *testing.T) {
	store := NewStore(Options{Now: func() time.Time { return t0.Add(time.Minute) }})
	token := "s3cret-token"
	var outcomes []string
	url := listen(t, &Handler{Token: func() string { return token }, MaxBody: 64 << 10, Store: store, Seen: func(o string) { outcomes = append(outcomes, o) }})
	batch := readBatch(t)
	tests := []struct {
		name, method, auth, ctype string
		body                      []byte
		code                      int
		says                      string
	}{
		{"no token", "POST", "", "application/json", batch, 401, "bearer token"},
		{"a wrong token", "POST", "Bearer s3cret-tokeN", "application/json", batch, 401, "bearer token"},
		{"a token without its scheme", "POST", token, "application/json", batch, 401, "bearer token"},
		{"a GET", "GET", "Bearer " + token, "", nil, 405, "POSTed"},
		{"YAML", "POST", "Bearer " + token, "application/yaml", batch, 415, "JSON"},
		{"too large", "POST", "Bearer " + token, "application/json", bytes.Repeat([]byte(" "), 65<<10), 413, "--audit-webhook-batch-max-size"},
		{"not an EventList", "POST", "Bearer " + token, "application/json", []byte(`{"kind":"Status","apiVersion":"v1"}`), 400, `apiVersion "v1"`},
		{"the batch", "POST", "Bearer " + token, "application/json; charset=utf-8", batch, 200, ""},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, url+"/audit", bytes.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		if tt.ctype != "" {
			req.Header.Set("Content-Type", tt.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || !strings.Contains(string(body), tt.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tt.name, resp.StatusCode, body, tt.code, tt.says)
		}
		if tt.code != 200 && store.Stats().Kept != 0 {
			t.Fatalf("%s: a refused request's events were kept", tt.name)
		}
	}
	if st := store.Stats(); st.Kept != 3 {
		t.Errorf("kept %d writes of the batch, want 3", st.Kept)
	}
	if len(outcomes) != len(tests) || outcomes[0] != "unauthorized" || outcomes[len(outcomes)-1] != "kept" {
		t.Errorf("outcomes %q", outcomes)
	}
	// A rotated token is read when the request comes.
	token = "rotated"
	req, _ := http.NewRequest("POST", url+"/audit", bytes.NewReader(batch))
	req.Header.Set("Authorization", "Bearer s3cret-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("the old token after rotation: %d", resp.StatusCode)
	}
}

// TestHandlerNoToken: without a token or a certificate check nothing is
// accepted, not even an empty bearer.
func TestHandlerNoToken(t *testing.T) {
	store := NewStore(Options{})
	url := listen(t, &Handler{Token: func() string { return "" }, Store: store})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(readBatch(t)))
	req.Header.Set("Authorization", "Bearer ")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("an empty token was accepted: %d", resp.StatusCode)
	}
}
