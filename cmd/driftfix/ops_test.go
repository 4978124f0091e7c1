package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/config"
)

// mainHWM, where the platform can tell a process' peak memory, is main
// reporting it to a file (snapshot_bench_test.go).
var mainHWM func(file string)

// TestMain lets a test start driftfix as a process of its own: with
// DRIFTFIX_TEST_MAIN=1 the test binary is the driftfix command, its
// arguments the command's.
func TestMain(m *testing.M) {
	if os.Getenv("DRIFTFIX_TEST_MAIN") == "1" {
		if f := os.Getenv("DRIFTFIX_TEST_HWM"); f != "" && mainHWM != nil {
			mainHWM(f)
		}
		main()
	}
	// No test reads the argocd CLI's config of the one who runs them.
	dir, err := os.MkdirTemp("", "driftfix-argocd-config")
	if err != nil {
		panic(err)
	}
	os.Setenv("ARGOCD_CONFIG_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// closedURL is an http address on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// freeAddr is an address on 127.0.0.1 free a moment ago.
func freeAddr(t *testing.T) string {
	return strings.TrimPrefix(closedURL(t), "http://")
}

// argoEntry is one argocd entry of a policy file.
type argoEntry struct{ name, server, tokenFile, kubeconfig string }

// writePolicy writes a policy file with those Argo CD instances.
func writePolicy(t *testing.T, dir, extra string, instances ...argoEntry) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "jitter: 0s\nstateFile: %s\n%sargocd:\n", filepath.Join(dir, "state", "driftfix.db"), extra)
	for _, a := range instances {
		fmt.Fprintf(&b, "  - name: %s\n    insecurePlaintext: true\n    server: %s\n    tokenFile: %s\n", a.name, a.server, a.tokenFile)
		if a.kubeconfig != "" {
			fmt.Fprintf(&b, "    kubeconfig: %s\n", a.kubeconfig)
		}
	}
	file := filepath.Join(dir, "driftfix.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// jsonLines parses every line of a log; a line that is not one JSON
// object fails the test.
func jsonLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimRight(log, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("log line %d is not a JSON object: %q", i+1, line)
			continue
		}
		out = append(out, m)
	}
	return out
}

// TestOnceExitCodes: once exits 0 when the cycle did its work, stuck
// applications included, 1 when an Argo CD instance could not be scanned
// or publishing failed, 2 for a policy it refuses; the failure is a JSON
// log line saying what failed.
func TestOnceExitCodes(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("DRIFTFIX_TEST_GITHUB_TOKEN", "ghp-test-token")
	now := time.Now()
	srv, tokenFile := liveServer(t, now)
	kubeconfig := filepath.Join(filepath.Dir(tokenFile), "kubeconfig")
	live := argoEntry{"live", srv.URL, tokenFile, kubeconfig}
	down := argoEntry{"down", closedURL(t), tokenFile, kubeconfig}
	// A GitHub that refuses every request, as with a revoked token.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message":"Bad credentials"}`)
	}))
	defer refusing.Close()
	tests := []struct {
		name      string
		instances []argoEntry
		extra     string
		args      []string
		code      int
		inLog     string // in an error line of the log
	}{
		{"stuck applications, dry run", []argoEntry{live}, "", []string{"--dry-run"}, exitClean, ""},
		{"stuck applications, published", []argoEntry{live}, "", nil, exitClean, ""},
		{"Argo CD unreachable", []argoEntry{down}, "", []string{"--dry-run"}, exitFailed, "could not scan Argo CD instance down"},
		{"Argo CD unreachable, publishing", []argoEntry{down}, "", nil, exitFailed, "could not scan Argo CD instance down"},
		{"one of two instances unreachable", []argoEntry{live, down}, "", []string{"--dry-run"}, exitFailed, "could not scan Argo CD instance down"},
		{"GitHub refuses the token", []argoEntry{live}, "policy: {minStuckFor: 0s}\ngithub: {tokenEnv: DRIFTFIX_TEST_GITHUB_TOKEN, baseURL: " + refusing.URL + "/}\n", nil, exitFailed, "publishing"},
		{"a policy it refuses", []argoEntry{live}, "schedule: nonsense\n", []string{"--dry-run"}, exitUsage, "schedule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writePolicy(t, t.TempDir(), tt.extra, tt.instances...)
			var out, errb strings.Builder
			code, err := cmdOnce(context.Background(), append([]string{"--config", cfg}, tt.args...), &out, &errb, now)
			if code != tt.code {
				t.Fatalf("exit %d (%v), want %d\n%s\n%s", code, err, tt.code, out.String(), errb.String())
			}
			lines := jsonLines(t, errb.String())
			if strings.Contains(out.String()+errb.String(), "ghp-test-token") || strings.Contains(out.String()+errb.String(), liveToken) {
				t.Error("a token appeared in the output or the log")
			}
			if tt.inLog == "" {
				if err != nil {
					t.Errorf("an error with exit 0: %v", err)
				}
				if !strings.Contains(out.String(), "applications scanned, 1 stuck") {
					t.Errorf("output:\n%s", out.String())
				}
				return
			}
			found := false
			for _, l := range lines {
				if l["level"] == "ERROR" && strings.Contains(fmt.Sprint(l), tt.inLog) {
					found = true
				}
			}
			if !found {
				t.Errorf("no error line in the log says %q:\n%s", tt.inLog, errb.String())
			}
		})
	}
}

// switchable serves a handler on one 127.0.0.1 address that can be taken
// down (connections refused) and brought up again.
type switchable struct {
	addr string
	h    http.Handler
	srv  *http.Server
}

func (s *switchable) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	s.srv = &http.Server{Handler: s.h}
	go s.srv.Serve(ln)
}

func (s *switchable) down() {
	if s.srv != nil {
		s.srv.Close()
		s.srv = nil
	}
}

// metric returns the value of one sample of the Prometheus text format
// (name with its labels, as printed), and whether it is there.
func metric(body, sample string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReadyzFollowsTheLastCycle: /readyz turns 503 after a cycle that could
// scan no Argo CD instance and 200 again after one that could; a cycle
// that scanned only some is still ready. The last successful cycle's time
// moves only when every instance was scanned.
func TestReadyzFollowsTheLastCycle(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	now := time.Now()
	srv, tokenFile := liveServer(t, now)
	kubeconfig := filepath.Join(filepath.Dir(tokenFile), "kubeconfig")
	a := &switchable{addr: freeAddr(t), h: srv.Config.Handler}
	b := &switchable{addr: freeAddr(t), h: srv.Config.Handler}
	cfgFile := writePolicy(t, t.TempDir(), "", argoEntry{"a", "http://" + a.addr, tokenFile, kubeconfig}, argoEntry{"b", "http://" + b.addr, tokenFile, kubeconfig})
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	r, closeAll, err := buildRunner(context.Background(), cfg, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	var stopping atomic.Bool
	ts := httptest.NewServer(serveMux(r, &stopping))
	defer ts.Close()
	defer a.down()
	defer b.down()

	if code, body := get(t, ts.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("before any cycle: /readyz %d %s", code, body)
	}
	lastGood := 0.0
	for _, step := range []struct {
		name         string
		aUp, bUp     bool
		ready        bool
		inBody       string
		successMoves bool
	}{
		{"both instances answer", true, true, true, "last cycle finished", true},
		{"one instance down", true, false, true, "last cycle finished", false},
		{"every instance down", false, false, false, "could not scan any Argo CD instance", false},
		{"both answer again", true, true, true, "last cycle finished", true},
	} {
		a.down()
		b.down()
		if step.aUp {
			a.up(t)
		}
		if step.bUp {
			b.up(t)
		}
		if _, err := r.Once(context.Background(), time.Now()); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		code, body := get(t, ts.URL+"/readyz")
		if (code == http.StatusOK) != step.ready || !strings.Contains(body, step.inBody) {
			t.Errorf("%s: /readyz %d %q, want ready %v and %q", step.name, code, body, step.ready, step.inBody)
		}
		_, metrics := get(t, ts.URL+"/metrics")
		good, ok := metric(metrics, "driftfix_last_successful_cycle_timestamp_seconds")
		if !ok {
			t.Fatalf("%s: no driftfix_last_successful_cycle_timestamp_seconds in\n%s", step.name, metrics)
		}
		if moved := good > lastGood; moved != step.successMoves {
			t.Errorf("%s: last successful cycle %v then %v, want moved %v", step.name, lastGood, good, step.successMoves)
		}
		lastGood = good
	}
	stopping.Store(true)
	if code, _ := get(t, ts.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("stopping: /readyz %d", code)
	}
}

// process is driftfix started as a process of its own (TestMain).
type process struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{} // closed when it has exited, err then set
	err    error
}

func startDriftfix(t *testing.T, args ...string) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "DRIFTFIX_TEST_MAIN=1", "HOME="+t.TempDir(), "KUBECONFIG=", "ARGOCD_AUTH_TOKEN=",
		"KUBERNETES_SERVICE_HOST=", "POD_NAMESPACE=")
	p := &process{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// stop sends SIGTERM and waits for the exit.
func (p *process) stop(t *testing.T) error {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(30 * time.Second):
		t.Fatalf("driftfix did not stop after SIGTERM; log:\n%s", p.stderr.String())
		return nil
	}
}

// waitFor polls until cond holds or the time is up.
func waitFor(t *testing.T, what string, within time.Duration, p *process, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within %s; log:\n%s", what, within, p.stderr.String())
}

var logKeyStyle = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// keysInStyle reports the keys of a log record, groups included, that are
// not snake_case or are a synonym the log does not use.
func keysInStyle(m map[string]any, prefix string) []string {
	var bad []string
	for k, v := range m {
		if !logKeyStyle.MatchString(k) || keySynonyms[k] != "" {
			bad = append(bad, prefix+k)
		}
		if g, ok := v.(map[string]any); ok {
			bad = append(bad, keysInStyle(g, prefix+k+".")...)
		}
	}
	return bad
}

// TestRunAsAProcess runs driftfix run --leader-elect as its own process
// against the Argo CD and Lease emulators on 127.0.0.1: a standby replica
// says driftfix_leader 0, the leader 1 and the time of its successful cycle;
// driftfix_build_info names the version and Go version; every line the
// process writes on stderr, client-go's leader election and plain-text
// notes included, is a JSON object with snake_case keys.
func TestRunAsAProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts driftfix as a process")
	}
	start := time.Now()
	srv, tokenFile := liveServer(t, start)
	// No kubeconfig for the instance: the cluster context is not
	// collected, which driftfix notes in its log.
	cfg := writePolicy(t, t.TempDir(), "", argoEntry{"test", srv.URL, tokenFile, ""})
	ls := newLeaseServer(t)
	ls.holdFor("driftfix", "driftfix", "other-replica")
	addr := freeAddr(t)
	p := startDriftfix(t, "run", "--config", cfg, "--listen", addr, "--leader-elect", "--kubeconfig", ls.kubeconfig(t), "--lease-namespace", "driftfix")
	scrape := func() string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	var metrics string
	waitFor(t, "a standby's /metrics", 20*time.Second, p, func() bool {
		metrics = scrape()
		return metrics != ""
	})
	if v, ok := metric(metrics, "driftfix_leader"); !ok || v != 0 {
		t.Errorf("while another replica holds the Lease: driftfix_leader %v (present %v), want 0", v, ok)
	}
	build := fmt.Sprintf(`driftfix_build_info{goversion=%q,revision="unknown",version="dev"}`, runtime.Version())
	if v, ok := metric(metrics, build); !ok || v != 1 {
		t.Errorf("no %s 1 in\n%s", build, metrics)
	}
	if _, ok := metric(metrics, "driftfix_last_successful_cycle_timestamp_seconds"); !ok {
		t.Errorf("no driftfix_last_successful_cycle_timestamp_seconds before the first cycle")
	}
	ls.release()
	waitFor(t, "leading and a successful cycle", 40*time.Second, p, func() bool {
		metrics = scrape()
		leader, _ := metric(metrics, "driftfix_leader")
		good, _ := metric(metrics, "driftfix_last_successful_cycle_timestamp_seconds")
		return leader == 1 && good >= float64(start.Unix())
	})
	if v, _ := metric(metrics, "driftfix_apps_scanned_total"); v != 3 {
		t.Errorf("driftfix_apps_scanned_total %v, want 3", v)
	}
	if h := ls.holder(); !strings.HasSuffix(h, "_"+strconv.Itoa(p.cmd.Process.Pid)) {
		t.Errorf("the Lease is held by %q", h)
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("exit: %v; log:\n%s", err, p.stderr.String())
	}
	if h := ls.holder(); h != "" {
		t.Errorf("the Lease was not released: held by %q", h)
	}
	log := p.stderr.String()
	lines := jsonLines(t, log)
	msgs := map[string]bool{}
	for _, l := range lines {
		if bad := keysInStyle(l, ""); len(bad) > 0 {
			t.Errorf("keys %v are not in the log's style: %v", bad, l)
		}
		msg, _ := l["msg"].(string)
		msg = strings.ToLower(msg)
		for _, want := range []string{"attempting to acquire leader lease", "cluster context not collected", "cycle done", "driftfix stopped"} {
			if strings.Contains(msg, want) {
				msgs[want] = true
			}
		}
	}
	for _, want := range []string{"attempting to acquire leader lease", "cluster context not collected", "cycle done", "driftfix stopped"} {
		if !msgs[want] {
			t.Errorf("no JSON log line says %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, liveToken) {
		t.Error("the token appeared in the log")
	}
}

// TestLogKey: keys come out snake_case, with the log's names for synonyms.
func TestLogKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"error", "error"}, {"err", "error"}, {"perHour", "per_hour"}, {"retry_after", "retry_after"},
		{"application", "app"}, {"leaseName", "lease_name"}, {"appID", "app_id"}, {"HTTPStatus", "httpstatus"}, {"dry-run", "dry_run"},
	} {
		if got := logKey(tt.in); got != tt.want {
			t.Errorf("logKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestLineLogger: plain-text lines written in pieces become one record each.
func TestLineLogger(t *testing.T) {
	var buf strings.Builder
	w := newLineLogger(slog.New(slog.NewJSONHandler(&buf, nil)), slog.LevelWarn)
	fmt.Fprint(w, "driftfix: first ")
	fmt.Fprint(w, "note\nsecond\n\n")
	var msgs []string
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if m["level"] != "WARN" {
			t.Errorf("level %v", m["level"])
		}
		msgs = append(msgs, m["msg"].(string))
	}
	if fmt.Sprint(msgs) != "[first note second]" {
		t.Errorf("records %q", msgs)
	}
}

// TestOnceAsAProcess: the process's exit status is once's (0 with stuck
// applications, 1 with Argo CD unreachable), and everything it writes on
// stderr is JSON log lines.
func TestOnceAsAProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts driftfix as a process")
	}
	srv, tokenFile := liveServer(t, time.Now())
	kubeconfig := filepath.Join(filepath.Dir(tokenFile), "kubeconfig")
	for _, tt := range []struct {
		name   string
		server string
		status int
	}{
		{"stuck applications", srv.URL, exitClean},
		{"Argo CD unreachable", closedURL(t), exitFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writePolicy(t, t.TempDir(), "", argoEntry{"main", tt.server, tokenFile, kubeconfig})
			p := startDriftfix(t, "once", "--config", cfg, "--log-level", "info")
			select {
			case <-p.exited:
			case <-time.After(60 * time.Second):
				t.Fatalf("once did not end; log:\n%s", p.stderr.String())
			}
			status := 0
			var exit *exec.ExitError
			if errors.As(p.err, &exit) {
				status = exit.ExitCode()
			} else if p.err != nil {
				t.Fatal(p.err)
			}
			if status != tt.status {
				t.Errorf("exit status %d, want %d; log:\n%s", status, tt.status, p.stderr.String())
			}
			lines := jsonLines(t, p.stderr.String())
			if len(lines) == 0 {
				t.Error("nothing was logged")
			}
			for _, l := range lines {
				if bad := keysInStyle(l, ""); len(bad) > 0 {
					t.Errorf("keys %v are not in the log's style: %v", bad, l)
				}
			}
		})
	}
}
