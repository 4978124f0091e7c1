package events

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestReceiverGuards: the receiver refuses what is not a delivery before
// reading a body: another method (405), no secret configured (503), no
// signature (401); and it reads at most MaxInFlight bodies at once, a
// delivery waiting longer than a second for its turn refused with 503.
func TestReceiverGuards(t *testing.T) {
	secret := ""
	rc := &Receiver{Secret: func() string { return secret }, Queue: &Queue{}, MaxInFlight: 1}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	send := func(method string, body io.Reader, signed bool) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+"/webhook", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "ping")
		req.Header.Set("X-GitHub-Delivery", "d-1")
		if signed {
			req.Header.Set("X-Hub-Signature-256", "sha256=00")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := send(http.MethodPost, strings.NewReader("{}"), true); code != http.StatusServiceUnavailable || !strings.Contains(body, "no webhook secret") {
		t.Errorf("no secret: %d %q", code, body)
	}
	secret = "s"
	if code, body := send(http.MethodGet, nil, true); code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d %q", code, body)
	}
	if code, body := send(http.MethodPost, strings.NewReader("{}"), false); code != http.StatusUnauthorized || !strings.Contains(body, "no X-Hub-Signature-256") {
		t.Errorf("unsigned: %d %q", code, body)
	}
	// One delivery holds the only slot, its body trickling in.
	pr, pw := io.Pipe()
	held := make(chan int, 1)
	go func() { code, _ := send(http.MethodPost, pr, true); held <- code }()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if code, body := send(http.MethodPost, strings.NewReader("{}"), true); code != http.StatusServiceUnavailable || !strings.Contains(body, "too many deliveries") || time.Since(start) < time.Second {
		t.Errorf("a second delivery while the slot is held: %d %q after %s", code, body, time.Since(start))
	}
	pw.Write([]byte("{}"))
	pw.Close()
	if code := <-held; code != http.StatusUnauthorized {
		t.Errorf("the slow delivery, with a wrong signature: %d", code)
	}
}
