package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// lockedBuffer is an io.Writer the command and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startSetup runs `driftfix setup github-app` against the emulator and
// returns the address of the page it serves and its exit.
func startSetup(t *testing.T, gh *githubtest.Server, dir string, extra ...string) (page string, out *lockedBuffer, exit chan int) {
	t.Helper()
	out, errb := &lockedBuffer{}, &lockedBuffer{}
	exit = make(chan int, 1)
	args := append([]string{"setup", "github-app", "--github-url", gh.URL, "--listen", "127.0.0.1:0", "--dir", dir, "--timeout", "1m"}, extra...)
	go func() { exit <- run(context.Background(), args, out, errb) }()
	re := regexp.MustCompile(`Open (http://127\.0\.0\.1:\d+)/ in a browser`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1], out, exit
		}
		select {
		case code := <-exit:
			t.Fatalf("setup exited %d before serving: %s%s", code, out, errb)
		default:
		}
	}
	t.Fatalf("setup never served its page: %s%s", out, errb)
	return
}

// TestSetupGitHubApp walks GitHub's App manifest flow as a browser would,
// against the emulator over HTTP: the page setup serves posts the manifest
// (deploy/github-app.yaml with this run's redirect_url) to GitHub's form,
// GitHub redirects back with the one-time code, setup exchanges it at
// POST /app-manifests/{code}/conversions and writes the App's id, key and
// webhook secret (0600). The credentials must work: the GitHub client signs
// in as the App with them.
func TestSetupGitHubApp(t *testing.T) {
	gh, err := githubtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer gh.Close()
	dir := filepath.Join(t.TempDir(), "creds")
	page, out, exit := startSetup(t, gh, dir, "--org", "acme")

	// The browser: the page, its form, GitHub's redirect, the done page.
	resp, err := http.Get(page + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	action := regexp.MustCompile(`action="([^"]+)"`).FindStringSubmatch(string(body))
	manifest := regexp.MustCompile(`name="manifest" value="([^"]+)"`).FindStringSubmatch(string(body))
	if action == nil || manifest == nil {
		t.Fatalf("the page has no manifest form:\n%s", body)
	}
	formAction := html.UnescapeString(action[1])
	if !strings.HasPrefix(formAction, gh.URL+"/organizations/acme/settings/apps/new?state=") {
		t.Fatalf("the form posts to %s", formAction)
	}
	resp, err = http.PostForm(formAction, url.Values{"manifest": {html.UnescapeString(manifest[1])}})
	if err != nil {
		select {
		case code := <-exit:
			t.Fatalf("%v; setup exited %d: %s", err, code, out)
		default:
			t.Fatalf("%v; setup still running (page %s): %s", err, page, out)
		}
	}
	done, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(done), "App ID "+strconv.FormatInt(gh.AppID, 10)) {
		t.Fatalf("the done page: %d\n%s", resp.StatusCode, done)
	}
	select {
	case code := <-exit:
		if code != exitClean {
			t.Fatalf("exit %d: %s", code, out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("setup did not finish after the redirect")
	}

	// What GitHub was sent: the manifest file, with the page's redirect URL.
	apps := gh.Manifests()
	if len(apps) != 1 || apps[0].Org != "acme" {
		t.Fatalf("apps registered: %+v", apps)
	}
	m := apps[0].Manifest
	perms, _ := json.Marshal(m["default_permissions"])
	if m["redirect_url"] != page+"/callback" || m["name"] != "driftfix" || string(perms) != `{"checks":"write","contents":"write","issues":"write","metadata":"read","pull_requests":"write"}` {
		t.Fatalf("manifest sent: %v", m)
	}
	if n := gh.CallCount("POST /app-manifests/{code}/conversions"); n != 1 {
		t.Fatalf("conversions called %d times", n)
	}

	// The files: where the chart's Secret takes them from, owner-only.
	for _, f := range setupFiles {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	id, _ := os.ReadFile(filepath.Join(dir, "github-app-id"))
	key, _ := os.ReadFile(filepath.Join(dir, "github-app.pem"))
	if strings.TrimSpace(string(id)) != strconv.FormatInt(gh.AppID, 10) || string(key) != string(gh.PrivateKeyPEM) {
		t.Fatalf("github-app-id %q, key written: %v", id, string(key) == string(gh.PrivateKeyPEM))
	}
	if strings.Contains(out.String(), "PRIVATE KEY") {
		t.Error("the output shows the private key")
	}
	if !strings.Contains(out.String(), fmt.Sprintf("App ID %d", gh.AppID)) {
		t.Errorf("the output does not name the App ID:\n%s", out)
	}

	// The credentials work: the client signs in as the App.
	appID, _ := strconv.ParseInt(strings.TrimSpace(string(id)), 10, 64)
	c, err := github.New(github.Config{AppID: appID, PrivateKey: key, BaseURL: gh.API})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Login(context.Background()); err != nil {
		t.Fatalf("the written credentials do not sign in as the App: %v", err)
	}
	if gh.CallCount("GET /app") == 0 {
		t.Fatal("the App's JWT was never checked")
	}
}

// TestSetupGitHubAppRefuses: a redirect that does not carry the form's state
// is refused and the code is not spent; a used code is refused by GitHub;
// setup never listens beyond loopback nor overwrites a key.
func TestSetupGitHubAppRefuses(t *testing.T) {
	gh, err := githubtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer gh.Close()
	dir := t.TempDir()
	page, _, exit := startSetup(t, gh, dir)
	resp, err := http.Get(page + "/callback?code=abc&state=forged")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || gh.CallCount("POST /app-manifests/{code}/conversions") != 0 {
		t.Fatalf("a forged redirect: %d, conversions %d", resp.StatusCode, gh.CallCount("POST /app-manifests/{code}/conversions"))
	}
	// A code GitHub does not know (or one already used): the page says so, setup fails.
	resp, _ = http.Get(page + "/")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	state := regexp.MustCompile(`state=([0-9a-f]+)`).FindStringSubmatch(string(body))
	if state == nil {
		t.Fatalf("no state in the page:\n%s", body)
	}
	resp, err = http.Get(page + "/callback?code=unknown&state=" + state[1])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("an unknown code: %d", resp.StatusCode)
	}
	if code := <-exit; code != exitFailed {
		t.Fatalf("exit %d after a refused code", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "github-app.pem")); err == nil {
		t.Fatal("a key was written for a refused code")
	}

	if code, _, stderr := runCLI("setup", "github-app", "--listen", "0.0.0.0:0"); code != exitUsage || !strings.Contains(stderr, "loopback") {
		t.Errorf("--listen 0.0.0.0: exit %d %s", code, stderr)
	}
	os.WriteFile(filepath.Join(dir, "github-app.pem"), []byte("old"), 0o600)
	if code, _, stderr := runCLI("setup", "github-app", "--dir", dir); code != exitUsage || !strings.Contains(stderr, "exists") {
		t.Errorf("an existing key: exit %d %s", code, stderr)
	}
}
