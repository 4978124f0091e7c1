package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/kube/kubetest"
)

const liveToken = "tok-3f9a1c-do-not-log"

// liveServer serves two applications: one OutOfSync for an hour after a
// successful sync (stuck), one that went OutOfSync a minute after its sync (a
// passing scale event), and one Synced.
func liveServer(t *testing.T, now time.Time) (*argocdtest.Server, string) {
	t.Helper()
	load := func(file, phase string, finished time.Time, sync string) *drift.Snapshot {
		s, err := drift.LoadSnapshot("../../testdata/cases/" + file)
		if err != nil {
			t.Fatal(err)
		}
		// A local repository URL: tests never reach for the network.
		drift.Map(s.Application, "spec", "source")["repoURL"] = "file:///nonexistent/" + file + ".git"
		st := drift.Map(s.Application, "status")
		st["sync"] = map[string]any{"status": sync}
		st["operationState"] = map[string]any{"phase": phase, "startedAt": finished.Add(-5 * time.Second).Format(time.RFC3339), "finishedAt": finished.Format(time.RFC3339)}
		return s
	}
	stuck := load("01-hpa-statefulset.yaml", "Succeeded", now.Add(-time.Hour), "OutOfSync")
	passing := load("21-manual-kubectl-patch.yaml", "Succeeded", now.Add(-time.Minute), "OutOfSync")
	synced := load("11-builtin-quantity-hidden.yaml", "Succeeded", now.Add(-time.Hour), "Synced")
	srv := argocdtest.NewServer(liveToken, stuck, passing, synced)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(liveToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var objs []drift.Object
	for _, s := range []*drift.Snapshot{stuck, passing, synced} {
		objs = append(objs, s.Cluster...)
	}
	ks := kubetest.NewServer(objs)
	t.Cleanup(ks.Close)
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: fake, cluster: {server: " + ks.URL + "}}]\n" +
		"users: [{name: u, user: {token: kube-token}}]\ncontexts: [{name: c, context: {cluster: fake, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, tokenFile
}

func TestScanFindsOnlyStuckApplications(t *testing.T) {
	now := time.Now()
	srv, tokenFile := liveServer(t, now)
	var out, errb strings.Builder
	code, err := cmdScan(context.Background(), []string{"--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--kubeconfig", filepath.Join(filepath.Dir(tokenFile), "kubeconfig"), "--format", "json"}, &out, &errb, now)
	if err != nil || code != exitDrift {
		t.Fatalf("scan: exit %d, %v, %s", code, err, errb.String())
	}
	var res struct {
		Scanned int `json:"scanned"`
		Stuck   []struct {
			Application string         `json:"application"`
			Causes      map[string]int `json:"causes"`
		} `json:"stuck"`
	}
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		t.Fatal(err)
	}
	if res.Scanned != 3 || len(res.Stuck) != 1 || res.Stuck[0].Application != "queue" || res.Stuck[0].Causes["hpa-replicas"] != 1 {
		t.Fatalf("scan result: %s", out.String())
	}
	if strings.Contains(out.String()+errb.String(), liveToken) {
		t.Fatal("the token appeared in the output")
	}
}

func TestLiveDiagnoseAndSnapshot(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	srv, tokenFile := liveServer(t, time.Now())
	args := []string{"--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--kubeconfig", filepath.Join(filepath.Dir(tokenFile), "kubeconfig"), "--repo-files=false"}
	code, out, stderr := runCLI(append([]string{"diagnose", "queue", "--format", "json"}, args...)...)
	if code != exitDrift || !strings.Contains(out, `"cause": "hpa-replicas"`) {
		t.Fatalf("live diagnose: exit %d\n%s\n%s", code, out, stderr)
	}
	file := filepath.Join(t.TempDir(), "queue.json")
	if code, _, stderr := runCLI(append([]string{"snapshot", "queue", "-f", file}, args...)...); code != exitClean {
		t.Fatalf("snapshot: exit %d, %s", code, stderr)
	}
	code, offline, _ := runCLI("diagnose", "--snapshot", file, "--format", "json")
	if code != exitDrift || offline != out {
		t.Fatalf("the written snapshot diagnoses differently offline:\n%s\nlive:\n%s", offline, out)
	}
	if raw, _ := os.ReadFile(file); strings.Contains(string(raw), liveToken) {
		t.Fatal("the token was written into the snapshot")
	}
	code, _, stderr = runCLI("diagnose", "queue", "--argocd-server", srv.URL, "--plaintext", "--no-kube", "--repo-files=false")
	if code != exitUsage || !strings.Contains(stderr, "token") || strings.Contains(stderr, liveToken) {
		t.Fatalf("diagnose without a token: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(append([]string{"diagnose", "nope"}, args...)...)
	if code != exitUsage || !strings.Contains(stderr, "404") {
		t.Fatalf("unknown app: exit %d, %s", code, stderr)
	}
}

func TestOnceDryRun(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	now := time.Now()
	srv, tokenFile := liveServer(t, now)
	dir := filepath.Dir(tokenFile)
	cfg := filepath.Join(dir, "driftfix.yaml")
	stateFile := filepath.Join(dir, "state", "driftfix.db")
	if err := os.WriteFile(cfg, []byte("stateFile: "+stateFile+"\nargocd:\n  - name: test\n    insecurePlaintext: true\n    server: "+srv.URL+"\n    tokenFile: "+tokenFile+"\n    kubeconfig: "+filepath.Join(dir, "kubeconfig")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	code, err := cmdOnce(context.Background(), []string{"--config", cfg, "--dry-run"}, &out, &errb, now)
	if _, serr := os.Stat(stateFile); serr == nil {
		t.Fatal("a dry run wrote the state database")
	}
	if err != nil || code != exitClean {
		t.Fatalf("exit %d, %v\n%s", code, err, errb.String())
	}
	// Without --dry-run and without GitHub credentials it records state and reports.
	var out2, errb2 strings.Builder
	code, err = cmdOnce(context.Background(), []string{"--config", cfg}, &out2, &errb2, now)
	if err != nil || code != exitClean || !strings.Contains(out2.String(), "3 applications scanned, 1 stuck") {
		t.Fatalf("publishing run: exit %d, %v\n%s\n%s", code, err, out2.String(), errb2.String())
	}
	if _, serr := os.Stat(stateFile); serr != nil {
		t.Fatalf("the state database was not written: %v", serr)
	}
	out.Reset()
	errb.Reset()
	code, err = cmdOnce(context.Background(), []string{"--config", cfg, "--dry-run"}, &out, &errb, now)
	if err != nil || code != exitClean {
		t.Fatalf("exit %d, %v\n%s", code, err, errb.String())
	}
	text := out.String()
	if !strings.Contains(errb.String(), "file:///nonexistent/") {
		t.Errorf("the unreadable repository was not reported: %s", errb.String())
	}
	for _, want := range []string{"3 applications scanned, 1 stuck", "== Slack digest", "Newly stuck OutOfSync"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text+errb.String(), liveToken) {
		t.Fatal("the token appeared in the output")
	}
}

// TestRunServesAndStops runs the scheduled bot: a cycle at start,
// health, readiness and metrics on loopback, and a clean stop on cancel.
func TestRunServesAndStops(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	srv, tokenFile := liveServer(t, time.Now())
	dir := filepath.Dir(tokenFile)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := filepath.Join(dir, "driftfix.yaml")
	body := "jitter: 0s\nstateFile: " + filepath.Join(dir, "state.db") + "\nargocd:\n  - name: test\n    insecurePlaintext: true\n    server: " + srv.URL +
		"\n    tokenFile: " + tokenFile + "\n    kubeconfig: " + filepath.Join(dir, "kubeconfig") + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var out, errb syncBuffer
	go func() {
		code, err := cmdRun(ctx, []string{"--config", cfg, "--listen", addr}, &out, &errb)
		if err != nil {
			fmt.Fprintf(&errb, "run: %v\n", err)
		}
		done <- code
	}()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var metrics string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if code, body := get("/metrics"); code == 200 && strings.Contains(body, "driftfix_apps_scanned_total 3") {
			metrics = body
			break
		}
	}
	if metrics == "" {
		t.Fatalf("no cycle reached /metrics; log:\n%s", errb.String())
	}
	// Without --leader-elect the one replica runs every cycle: driftfix_leader 1.
	for _, want := range []string{"driftfix_apps_stuck 1", `driftfix_findings{cause="hpa-replicas"}`, `driftfix_api_calls_total{service="argocd"}`, "driftfix_cycle_duration_seconds_count",
		"\ndriftfix_leader 1\n", `driftfix_build_info{goversion="go`, "\ndriftfix_last_successful_cycle_timestamp_seconds 1"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if code, body := get("/healthz"); code != 200 {
		t.Errorf("/healthz %d %s", code, body)
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, "last cycle finished") {
		t.Errorf("/readyz %d %s", code, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitClean {
			t.Fatalf("run exited %d; log:\n%s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not stop after its context ended")
	}
	if strings.Contains(errb.String(), liveToken) {
		t.Fatal("the token appeared in the log")
	}
	if !strings.Contains(errb.String(), `"msg":"driftfix stopped"`) {
		t.Errorf("no clean stop in the log:\n%s", errb.String())
	}
}

// syncBuffer is a strings.Builder safe for a writer and a reader in two goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOnceNamesTheMissingTokenFile: a policy whose Argo CD token file is
// missing is refused with the config key and the path, not a flag's name.
func TestOnceNamesTheMissingTokenFile(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "driftfix.yaml")
	missing := filepath.Join(filepath.Dir(cfg), "no-such-token")
	if err := os.WriteFile(cfg, []byte("argocd: [{name: main, server: https://argocd.example.com, tokenFile: "+missing+"}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	code, err := cmdOnce(context.Background(), []string{"--config", cfg, "--dry-run"}, &out, &errb, time.Now())
	if code != exitUsage || err == nil || !strings.Contains(err.Error(), "tokenFile") || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), "--argocd-token-file") {
		t.Fatalf("exit %d, %v", code, err)
	}
}

// TestScanStuckAfter: --stuck-after is the threshold as given, 0s included
// (0s makes the application that went OutOfSync a minute after its sync
// stuck too); a negative one is refused.
func TestScanStuckAfter(t *testing.T) {
	now := time.Now()
	srv, tokenFile := liveServer(t, now)
	base := []string{"--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--kubeconfig", filepath.Join(filepath.Dir(tokenFile), "kubeconfig"), "--format", "json"}
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		stuck []string
	}{
		{"default 10m", nil, exitDrift, []string{"queue"}},
		{"0s", []string{"--stuck-after", "0s"}, exitDrift, []string{"orders", "queue"}},
		{"0", []string{"--stuck-after=0"}, exitDrift, []string{"orders", "queue"}},
		{"30s", []string{"--stuck-after", "30s"}, exitDrift, []string{"orders", "queue"}},
		{"2h", []string{"--stuck-after", "2h"}, exitClean, nil},
		{"negative", []string{"--stuck-after", "-1m"}, exitUsage, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			code, err := cmdScan(context.Background(), append(append([]string{}, base...), tc.args...), &out, &errb, now)
			if code != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, tc.code, errb.String())
			}
			if code == exitUsage {
				if err == nil || !strings.Contains(err.Error(), "--stuck-after") {
					t.Fatalf("a negative --stuck-after: %v", err)
				}
				return
			}
			var res struct {
				Stuck []struct {
					Application string `json:"application"`
				} `json:"stuck"`
			}
			if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range res.Stuck {
				got = append(got, s.Application)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.stuck) {
				t.Errorf("stuck %v, want %v", got, tc.stuck)
			}
		})
	}
}

// TestScanListsWhatArgoCDCannotCompare: an application Argo CD cannot
// compare is listed on its own line with Argo CD's message, never as stuck;
// a message written to make the terminal or the table lie is printed inert.
func TestScanListsWhatArgoCDCannotCompare(t *testing.T) {
	now := time.Now()
	srv, tokenFile := liveServer(t, now)
	const msg = "Failed to load target state: \x1b[2J\x1b]0;owned\x07 rpc error\n2 applications scanned, 0 stuck OutOfSync.\tfake \u202eexe"
	broken, err := drift.LoadSnapshot("../../testdata/cases/11-builtin-quantity-hidden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	drift.Map(broken.Application, "metadata")["name"] = "broken"
	st := drift.Map(broken.Application, "status")
	st["sync"] = map[string]any{"status": "Unknown"}
	st["conditions"] = []any{map[string]any{"type": "ComparisonError", "message": msg}}
	srv.Add(broken)
	base := []string{"--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--kubeconfig", filepath.Join(filepath.Dir(tokenFile), "kubeconfig")}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var out, errb strings.Builder
			code, err := cmdScan(context.Background(), append(base, "--format", format), &out, &errb, now)
			if err != nil || code != exitDrift {
				t.Fatalf("exit %d, %v\n%s", code, err, errb.String())
			}
			text := out.String()
			if format == "json" {
				var res struct {
					Stuck []struct {
						Application string `json:"application"`
					} `json:"stuck"`
					CannotCompare []struct {
						Application, Namespace, SyncStatus, Message string
					} `json:"cannotCompare"`
				}
				if err := json.Unmarshal([]byte(text), &res); err != nil {
					t.Fatal(err)
				}
				if len(res.Stuck) != 1 || res.Stuck[0].Application != "queue" {
					t.Errorf("stuck %+v, want queue alone", res.Stuck)
				}
				if len(res.CannotCompare) != 1 || res.CannotCompare[0].Application != "broken" || res.CannotCompare[0].SyncStatus != "Unknown" || res.CannotCompare[0].Message != msg {
					t.Errorf("cannotCompare %+v", res.CannotCompare)
				}
				return
			}
			if strings.ContainsAny(text, "\x1b\x07\t\u202e") {
				t.Errorf("a control character reached the terminal:\n%q", text)
			}
			var lines []string
			for _, l := range strings.Split(text, "\n") {
				if strings.Contains(l, "broken") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "Unknown") || !strings.Contains(lines[0], `Failed to load target state: \u001b[2J\u001b]0;owned\u0007 rpc error ⏎ 2 applications scanned`) {
				t.Errorf("broken is not on one line with Argo CD's message: %q\n%s", lines, text)
			}
			if !strings.Contains(text, "Argo CD cannot compare 1 application (not drift") || strings.Count(text, "applications scanned") != 2 {
				t.Errorf("output:\n%s", text)
			}
			if !strings.HasPrefix(text, "4 applications scanned, 1 stuck OutOfSync; 1 more OutOfSync but not stuck (yet).\n") {
				t.Errorf("the summary line: %q", text)
			}
		})
	}
}
